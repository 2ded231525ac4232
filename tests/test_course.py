"""The course edition (scripts/course.py): contracts against the book, tests against answers.

The fast tests here run every contract's tests in-process, exactly as otter calls them (each test
function gets the notebook's names it asks for): on the book's answer every test passes, on the
contract's wrong answer at least one fails. ``.ci/run`` then builds the otter assignments and grades
them with ``otter run``'s code path (``python scripts/course.py build --grade``); the last test does
the same for one chapter when otter-grader is installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import course  # noqa: E402
import editions  # noqa: E402


@pytest.fixture(scope="module")
def book():
    return editions.Book(ROOT)


@pytest.fixture(scope="module")
def chapters(book):
    return course.chapters(book)


@pytest.fixture(scope="module")
def contracts(chapters):
    return course.load_contracts(chapters)


def _labels():
    import yaml

    out = []
    for path in sorted((ROOT / "course").glob("*/*.yml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        out += [k for k in data if k != "setup"]
    return out


def test_every_exercise_is_classified(chapters, contracts):
    graded, ungraded = contracts
    labels = {lab for ch in chapters.values() for lab in ch.exercises}
    assert labels == set(graded) | set(ungraded)
    assert not set(graded) & set(ungraded)
    assert len(labels) >= 80, "the book has 84 exercises"


def test_no_contract_is_pending(contracts):
    """Every exercise that is not graded has a final reason (none waits for a contract)."""
    _, ungraded = contracts
    pending = [lab for lab, why in ungraded.items() if why.startswith("pending")]
    assert not pending, f"contracts pending for {pending}"


def test_a_new_level3_exercise_without_contract_fails(chapters, contracts):
    graded, ungraded = contracts
    ch = next(iter(chapters.values()))
    extra = dict(chapters)
    extra[ch.docname] = course.Chapter(ch.docname, ch.number, ch.title, ch.setup, ch.install,
                                       dict(ch.exercises))
    extra[ch.docname].exercises["ex-new-lab"] = course.Exercise("ex-new-lab", ch.docname, 3, "x")
    with pytest.raises(course.CourseError, match="level-3.*ex-new-lab"):
        course.load_contracts(extra)


def test_a_vanished_exercise_fails(chapters):
    lab = _labels()[0]
    reduced = {k: course.Chapter(v.docname, v.number, v.title, v.setup, v.install,
                                 {x: e for x, e in v.exercises.items() if x != lab})
               for k, v in chapters.items()}
    with pytest.raises(course.CourseError, match=lab):
        course.load_contracts(reduced)


def test_a_rewritten_check_fails_loudly():
    with pytest.raises(course.CourseError, match="no longer in the book's check"):
        course.derive_from_check("ex-x", "assert f(1) == 2\n", {"replace": {"g(1)": "h(1)"}})
    with pytest.raises(course.CourseError, match="no code cell"):
        course.derive_from_check("ex-x", None, {})


def test_derived_test_drops_glue_and_definitions():
    check = ("# check of ex-x\ndef top(r):\n    return 1\n\n\nv = top(2)\n"
             "glue('k', float(v),\n     display=False)\nassert v == 1\n")
    body = course.derive_from_check("ex-x", check, {"drop": ["top"]})
    assert "def top" not in body and "glue" not in body and "assert v == 1" in body
    assert course.free_names(body) == ["top"]


def test_free_names_are_the_parameters():
    body = "import math\nx = np.ones(3)\nassert f(x) == [math.pi for _ in range(k)]\n"
    assert course.free_names(body) == ["f", "k", "np"]


@pytest.mark.parametrize("label", _labels())
def test_contract_passes_on_the_book_and_fails_on_the_wrong_answer(label, chapters, contracts):
    graded, _ = contracts
    c = graded[label]
    ch = chapters[c.docname]
    right = course.run_tests_inprocess(ch, c, c.solution)
    assert all(err is None for _, err in right), right
    wrong = course.run_tests_inprocess(ch, c, c.wrong)
    assert any(err is not None for _, err in wrong), f"{label}: the wrong answer passes every test"
    assert any(err is not None for name, err in wrong if c.tests[[t.name for t in c.tests].index(name)].hidden)


def test_student_text_is_the_reader_edition(chapters, contracts, book):
    graded, _ = contracts
    ch = chapters["notebooks/part1_linear_generative/01_sample_covariance"]
    text = ch.exercises["ex-sc-moments"].text
    assert text.startswith("> **Exercise 1.1 (level 1).**")
    assert "\\Tr" not in text and "operatorname{Tr}" in text  # macros expanded
    nb = course.master_notebook(ch, [graded["ex-sc-moments"]], {}, book)
    raw = [c["source"] for c in nb["cells"] if c["cell_type"] == "raw"]
    assert raw[0].startswith("# ASSIGNMENT CONFIG") and "strip_solutions_from_all_cells: true" in raw[0]
    assert raw.count("# BEGIN SOLUTION") == 1 and raw.count("# END QUESTION") == 1


@pytest.mark.skipif(importlib.util.find_spec("otter") is None, reason="otter-grader not installed")
@pytest.mark.skipif(bool(os.environ.get("CI")), reason=".ci/run grades every chapter after pytest")
def test_otter_assign_and_run_one_chapter(tmp_path, contracts):
    """One chapter end to end: otter assign, no solution in the student notebook, otter run gives
    the book's answers full marks and the wrong answers less."""
    only = ["notebooks/part1_linear_generative/02_deterministic_equivalents"]
    index = course.build(tmp_path, only=only)
    assert [a["chapter"] for a in index["assignments"]] == ["1.2"]
    assert course.grade(tmp_path, only=only) == 0
    report = json.loads((tmp_path / "grading.json").read_text())
    assert report[0]["book"]["score"] == report[0]["points"] > report[0]["wrong"]["score"]


def test_grading_requirements_have_torch_only_where_a_chapter_imports_it():
    """PyTorch's CPU wheel (with its index) for the torch chapters, nothing of it elsewhere."""
    plain, with_torch = course.requirements_for_grading(), course.requirements_for_grading(True)
    assert "torch" not in plain and "--extra-index-url" not in plain
    lines = with_torch.splitlines()
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    assert any(line.startswith("torch==") and "+cpu" in line for line in lines)
    assert lines[-1].startswith("seqrmt @ ")
