"""Static checks of the notebooks' cells (no execution): what a reader sees is the lesson and its checks.

* Code lines fit the column: 77 characters at 1280 px (the browser test found lines of 78-79
  characters cut by 5-14 px).
* A visible code cell has at most 40 non-empty lines (QuantEcon's lectures: p90 31): a longer one is
  split where the prose can explain a step. The lesson's code is in the notebook, so cells are not
  required to be tiny; they are required to be readable.
* Nothing is computed out of sight: a ``remove-cell`` cell is the install cell or a glue-only cell
  (every statement a ``glue(...)`` call); checks are visible ``check(...)`` lines, and a solution's
  check is a folded (``hide-cell``) code cell that starts ``# check of <exercise label>`` and follows
  that exercise's solution.
* Tolerance rules in cell metadata are few (each with its reason): statistical lines are judged by
  the visible checks, not by rules no reader sees.
* Numbers with two or more decimals in the prose are glued or shown by an output.
"""

import ast
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("**/*.ipynb") if ".ipynb_checkpoints" not in p.parts)
MAX_CHARS = 77  # widest code line that fits the column at 1280 px
MAX_VISIBLE_LINES = 40  # non-empty lines of a visible code cell
MAX_TOLERANCE_RULES = 30  # in all notebooks together
CHECK_OF = re.compile(r"^# check of (ex-[\w-]+)")


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


def _cells(path):
    return json.loads(path.read_text())["cells"]


def _tags(cell):
    return cell.get("metadata", {}).get("tags", [])


def _is_install_cell(src):
    return "%pip install" in src and "import seqrmt" in src


def _is_glue_only(src):
    """Every statement is a call of glue(...) (arguments may compute the value inline)."""
    try:
        body = ast.parse(src).body
    except SyntaxError:
        return False
    return bool(body) and all(isinstance(st, ast.Expr) and isinstance(st.value, ast.Call)
                              and getattr(st.value.func, "id", None) == "glue" for st in body)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_visible_code_cells_are_readable(path):
    long = [(i, n) for i, c in enumerate(_cells(path)) if c["cell_type"] == "code"
            and "remove-cell" not in _tags(c)
            and (n := len([ln for ln in "".join(c["source"]).splitlines() if ln.strip()])) > MAX_VISIBLE_LINES]
    assert not long, f"visible code cells over {MAX_VISIBLE_LINES} lines (cell index, lines): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_hidden_cells_are_the_install_cell_or_glue(path):
    hidden = [i for i, c in enumerate(_cells(path)) if c["cell_type"] == "code"
              and {"remove-cell", "remove-input"} & set(_tags(c))
              and not (_is_install_cell(src := "".join(c["source"])) or _is_glue_only(src))]
    assert not hidden, (f"hidden code cells that compute or check (cell indices {hidden}): make them "
                        "visible, fold them (hide-cell) under their solution, or keep only glue(...) calls")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_solution_checks_are_folded_under_their_solution(path):
    cells, problems = _cells(path), []
    for i, c in enumerate(cells):
        src = "".join(c["source"])
        m = CHECK_OF.match(src) if c["cell_type"] == "code" else None
        if not m:
            continue
        if "hide-cell" not in _tags(c):
            problems.append(f"cell {i}: a solution's check is folded (tag hide-cell)")
        previous = [p for p in cells[:i] if "".join(p["source"]).strip()]
        prev_src = "".join(previous[-1]["source"]) if previous else ""
        if not (previous and previous[-1]["cell_type"] == "markdown"
                and re.search(r"\{solution\}\s*" + re.escape(m.group(1)) + r"\b", prev_src)):
            problems.append(f"cell {i}: '# check of {m.group(1)}' does not follow the solution of {m.group(1)}")
    assert not problems, "\n".join(problems)


def test_tolerance_rules_are_few_and_give_their_reason():
    rules = []
    for path in NOTEBOOKS:
        for i, c in enumerate(_cells(path)):
            tol = c.get("metadata", {}).get("tolerance")
            if tol is not None:
                rules += [(path.stem, i, r) for r in (tol if isinstance(tol, list) else [tol])]
    assert all(str(r.get("reason", "")).strip() for _, _, r in rules)
    assert len(rules) <= MAX_TOLERANCE_RULES, (
        f"{len(rules)} tolerance rules in notebook metadata (goal {MAX_TOLERANCE_RULES}): judge statistical "
        "lines with visible check(...) calls instead")


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
