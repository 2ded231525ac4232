"""The "Results at paper size" page (issue 19, item 4) is generated from stored runs and up to date.

Each record in ``book/appendix/paper_runs/`` was written by ``scripts/paper_results.py collect`` from
an executed paper-size notebook; its book-size numbers must still be the ones the committed chapter
glues (a chapter re-executed since makes this fail: collect again), its figures must exist, and the
page must be what ``scripts/paper_results.py page`` writes from the records.
"""

import importlib.util
import json
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNS = ROOT / "book" / "appendix" / "paper_runs"
RECORDS = sorted(RUNS.glob("*.json"))


def _script():
    spec = importlib.util.spec_from_file_location("paper_results", ROOT / "scripts" / "paper_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_paper_size_runs():
    assert len(RECORDS) >= 10


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_record_matches_the_committed_chapter(path):
    pr = _script()
    rec = json.loads(path.read_text())
    book = nbformat.read(ROOT / rec["notebook"], as_version=4)
    values = pr._glued(book)
    sentences = pr._sentences(book)
    texts = [t for t, _ in sentences]
    assert rec["seconds"] > 0 and rec["jobs"] >= 1 and rec["machine"] and rec["date"] and rec["commit"]
    for n in rec["numbers"]:
        assert n["text"] in texts, f"sentence no longer in {rec['notebook']}: {n['text'][:60]}"
        specs = dict(next(names for t, names in sentences if t == n["text"]))
        now = [pr._fmt(pr._value(values[name]), specs[name]) for name in n["names"]]
        assert now == n["book"], f"{rec['notebook']} re-executed since the paper run was collected"
    for fig in rec["figures"]:
        assert (RUNS / fig["file"]).is_file()
        assert any(c.metadata.get("mystnb", {}).get("figure", {}).get("name") == fig["label"]
                   for c in book.cells), fig["label"]


def test_page_is_generated_from_the_records(tmp_path, monkeypatch):
    pr = _script()
    committed = pr.PAGE.read_text()
    monkeypatch.setattr(pr, "PAGE", tmp_path / "page.md")
    pr.page()
    assert (tmp_path / "page.md").read_text() == committed, "run: python scripts/paper_results.py page"


def test_sentence_extraction_keeps_references_and_drops_solutions():
    pr = _script()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(
        "See {numref}`fig-x`: the gap is {glue:text}`gap:.2f` {cite}`someone2020`. Next one.\n\n"
        "```{solution} ex-a\nThe answer is {glue:text}`secret:.1f`.\n```\n"
        "With $a_1$ it is {glue:text}`b:.1f` and $x$.")]
    found = pr._sentences(nb)
    assert [names for _, names in found] == [[("gap", ".2f")], [("b", ".1f")]]
    assert found[0][0] == "See {numref}`fig-x`: the gap is ⟦0⟧."
    assert "$a_1$" in found[1][0]
