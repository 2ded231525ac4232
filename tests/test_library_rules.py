"""The library's shape: the measurable parts of the admission rule (README, "Where code lives").

``seqrmt`` holds laws, shared algorithms and samplers, models and tools; lessons live in the
notebooks. These tests read the source with :mod:`ast` and import the public modules:

* every public name has one import path (listed in its module's ``__all__``, not re-exported by
  another public module), and the public surface stays small;
* no module ``__getattr__`` (an import that needs torch says so when torch is missing), no star
  imports, no private name imported across modules, no import cycle;
* no single-use driver by name (``plot_*``, ``*_table``, ``*_report``, ``*_experiment``, ...);
* each model file is short, the library as a whole is short, and comments explain the maths;
* every public function has a numpydoc docstring with an example.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import pathlib
import re
import tokenize

import pytest

import seqrmt

ROOT = pathlib.Path(seqrmt.__file__).parent
MAX_LINES = 10_000  # code, docstrings and comments of lib/seqrmt
MAX_PUBLIC_NAMES = 150
MIN_COMMENT_FRACTION = 0.05
MAX_MODEL_LINES = 200
DRIVER = re.compile(r"^(plot_.*|.*_(table|report|experiment|experiments|panel|panels|talk|summary))$")


def _dotted(path):
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


FILES = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)
MODULES = {_dotted(p): p for p in FILES}


def _is_public(name):
    return not any(part.startswith("_") for part in name.split(".")[1:])


PUBLIC = sorted(m for m in MODULES if _is_public(m) and m != "seqrmt")


def _tree(name):
    return ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))


def _resolve(module, node):
    """The seqrmt module an ``ImportFrom`` node imports from, or None."""
    if node.level == 0:
        return node.module if (node.module or "").split(".")[0] == "seqrmt" else None
    is_pkg = MODULES[module].name == "__init__.py"
    base = module.split(".")
    base = base if is_pkg else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module):
    """Modules of seqrmt that ``module`` imports (anywhere in the file)."""
    out = set()
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if target is None:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in MODULES)
    out.discard(module)
    return {m for m in out if m in MODULES}


def test_no_module_getattr():
    found = [m for m in MODULES for node in _tree(m).body
             if isinstance(node, ast.FunctionDef) and node.name == "__getattr__"]
    assert not found, f"module __getattr__ (lazy imports hide what needs torch): {found}"


def test_no_star_imports():
    found = [m for m in MODULES for node in ast.walk(_tree(m))
             if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)]
    assert not found, f"star imports give names two public paths: {found}"


def test_no_private_names_imported_across_modules():
    found = []
    for m in MODULES:
        for node in ast.walk(_tree(m)):
            if isinstance(node, ast.ImportFrom) and _resolve(m, node):
                found += [f"{m}: {a.name} from {_resolve(m, node)}" for a in node.names
                          if a.name.startswith("_") and f"{_resolve(m, node)}.{a.name}" not in MODULES]
    assert not found, "promote or inline them:\n" + "\n".join(found)


def test_no_import_cycles():
    graph = {m: _imports(m) for m in MODULES}
    # a package's __init__ importing its own submodules is the package, not a cycle
    for m in graph:
        graph[m] = {t for t in graph[m] if not (MODULES[m].name == "__init__.py" and t.startswith(m + "."))}
    state, cycles = {}, []

    def visit(m, stack):
        state[m] = 1
        for t in graph[m]:
            if state.get(t) == 1:
                cycles.append(stack[stack.index(t):] + [t] if t in stack else [m, t])
            elif t not in state:
                visit(t, stack + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, f"import cycles: {cycles}"


def _public_module(name):
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # torch or cvxpy missing: those modules say so when imported
        pytest.skip(f"{name} needs an optional dependency: {exc}")


def _surface():
    names = {}
    for m in PUBLIC:
        module = _public_module(m)
        for name in getattr(module, "__all__", []):
            if f"{m}.{name}" in MODULES:  # a package listing its public submodules
                continue
            obj = getattr(module, name)
            if inspect.ismodule(obj):
                continue
            names[f"{m}.{name}"] = obj
    return names


@pytest.mark.parametrize("name", PUBLIC)
def test_public_modules_list_their_names(name):
    module = _public_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    for attr in module.__all__:
        assert hasattr(module, attr) or f"{name}.{attr}" in MODULES, (
            f"{name}.__all__ names {attr}, which it does not define")


@pytest.mark.parametrize("name", PUBLIC)
def test_one_public_path_per_name(name):
    """A public name is defined in its module, or in a private module and listed here once."""
    module = _public_module(name)
    for attr in getattr(module, "__all__", []):
        if f"{name}.{attr}" in MODULES:
            continue
        obj = getattr(module, attr)
        home = getattr(obj, "__module__", None)
        if inspect.ismodule(obj) or home is None or not home.startswith("seqrmt"):
            continue
        assert home == name or not _is_public(home), (
            f"{name}.{attr} is {home}.{attr} again: one public path per name")


def test_public_surface_is_small():
    surface = _surface()
    assert len(surface) <= MAX_PUBLIC_NAMES, (
        f"{len(surface)} public names (goal {MAX_PUBLIC_NAMES}): "
        + ", ".join(sorted(surface)))


def test_no_single_use_drivers_by_name():
    drivers = sorted(n for n in _surface() if DRIVER.match(n.rsplit(".", 1)[1]))
    assert not drivers, f"drivers, tables, reports and figures belong in the notebooks: {drivers}"


def test_public_functions_have_examples():
    missing = []
    for qual, obj in _surface().items():
        if inspect.isfunction(obj):
            doc = inspect.getdoc(obj) or ""
            if "Examples" not in doc or ">>>" not in doc:
                missing.append(qual)
        elif inspect.isclass(obj) and not inspect.getdoc(obj):
            missing.append(qual)
    assert not missing, f"public names without a numpydoc example: {missing}"


def _line_kinds(path):
    """(total lines, comment lines) of a file: a comment line holds a ``#`` comment."""
    text = path.read_text()
    comment_lines = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(text).readline)
                     if tok.type == tokenize.COMMENT}
    return len(text.splitlines()), len(comment_lines)


def test_library_is_small_and_commented():
    total = sum(_line_kinds(p)[0] for p in FILES)
    comments = sum(_line_kinds(p)[1] for p in FILES)
    assert total <= MAX_LINES, f"lib/seqrmt is {total} lines (goal {MAX_LINES})"
    assert comments >= MIN_COMMENT_FRACTION * total, (
        f"comments are {comments} of {total} lines ({comments / total:.1%}; goal {MIN_COMMENT_FRACTION:.0%})")


def test_model_files_are_short():
    models = sorted((ROOT / "models").glob("*.py"))
    assert {p.name for p in models} >= {"char_gpt.py", "llama_small.py"}
    long = {p.name: n for p in models if (n := _line_kinds(p)[0]) > MAX_MODEL_LINES}
    assert not long, f"model files over {MAX_MODEL_LINES} lines: {long}"
