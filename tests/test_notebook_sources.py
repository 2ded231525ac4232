"""Static checks of the notebooks' code cells (no execution).

The rendered book fits 77 characters of code at the 1280 px column (the browser test,
``tests/test_browser.py``, found lines of 78-79 characters cut by 5-14 px), and the developers'
guide asks for short cells (about 5-10 lines; anything more than glue belongs in ``seqrmt``).
These checks catch both before a book build.
"""

import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("**/*.ipynb") if ".ipynb_checkpoints" not in p.parts)
MAX_CHARS = 77  # widest code line that fits the column at 1280 px
MAX_MEDIAN_LINES = 12  # median non-empty lines per code cell


def _code_cells(path):
    cells = json.loads(path.read_text())["cells"]
    return [src for src in ("".join(c["source"]) for c in cells if c["cell_type"] == "code") if src.strip()]


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 25


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_lines_fit_the_column(path):
    long = [(i, line) for i, src in enumerate(_code_cells(path)) for line in src.splitlines()
            if len(line) > MAX_CHARS]
    assert not long, f"code lines over {MAX_CHARS} characters (code cell index, line): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_code_cells_are_short(path):
    sizes = sorted(len([ln for ln in src.splitlines() if ln.strip()]) for src in _code_cells(path))
    assert sizes[len(sizes) // 2] <= MAX_MEDIAN_LINES, f"median code cell {sizes[len(sizes) // 2]} lines: {sizes}"


# ---------------------------------------------------------------------------------------------
# Prose numbers come from outputs (issue 20): a number with two or more decimals in a markdown cell
# must be glued ({glue:text}) or shown by some output of the notebook. The rule is that of
# section 1 of the before-stop hook (shared/hooks/before-stop), kept identical so both count alike.


def _typed_numbers(path):
    import re

    cells = json.loads(path.read_text())["cells"]
    code = [c for c in cells if c.get("cell_type") == "code" and "".join(c.get("source", "")).strip()]
    md = "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "markdown")
    outs = "\n".join("".join(o.get("text", "")) + "".join("".join(v) if isinstance(v, list) else str(v)
                     for k, v in o.get("data", {}).items() if "text" in k)
                     for c in code for o in c.get("outputs", []))
    outnums = {n.rstrip("0") for n in re.findall(r"\d+\.\d+", outs)}
    prose = re.sub(r"\$\$.*?\$\$|```.*?```|\{glue[:a-z]*\}`[^`]*`|arXiv[: ]*\d+\.\d+|\d{4}\.\d{4,5}", "", md,
                   flags=re.S)
    return [n for n in re.findall(r"(?<![\w.])\d+\.\d{2,}(?![\w.])", prose) if n.rstrip("0") not in outnums]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_typed_numbers_in_prose(path):
    typed = _typed_numbers(path)
    assert not typed, f"{len(typed)} typed number(s) in prose that no output shows (glue them): {typed[:8]}"
