#!/usr/bin/env python
"""The install cell of every chapter, and what each chapter needs (Colab, JupyterLite, fresh Jupyter).

The first code cell of every notebook in ``notebooks/`` (tagged ``hide-cell``) installs what
that chapter imports and the reader's environment lacks, and nothing when everything is
importable. This script writes that cell into every notebook from the one template below::

    python scripts/install_cell.py            # rewrite the install cell of every notebook
    python scripts/install_cell.py --check    # exit 1 if a notebook's install cell is stale
    python scripts/install_cell.py --list     # what each chapter needs, and where it runs

Re-run it after changing a notebook's imports (it only touches the first code cell, and keeps
that cell's outputs and execution metadata); the reader and student editions copy the cell
(``python scripts/editions.py notebooks``).

**What a chapter needs** is read from its code, not typed by hand: the optional packages
(``pyproject.toml``'s extras ``torch``, ``convex`` = cvxpy, ``data`` = scikit-learn) that its
cells import, directly or through the ``seqrmt`` functions they call. The library is read with
``ast``: importing a ``seqrmt`` module costs its module-level imports (``seqrmt.ntp`` imports
cvxpy), and calling a function costs the imports inside it and inside the library functions it
names, followed through the library (``bsr.min_nuclear_norm`` imports cvxpy when called;
``bsr.gd_factorized`` imports torch).

**Where a chapter runs.** Pyodide, the Python of JupyterLite, has numpy, scipy, matplotlib,
scikit-learn and cvxpy (``cvxpy-base``, Clarabel only) but no torch: a chapter that needs none
of ``PYODIDE_MISSING`` gets the book's "Run in your browser" link (``_ext/seqrmt_lite.py``).

**The cell** (the template ``CELL``):

* in JupyterLite (``sys.platform == "emscripten"``), ``%pip`` is piplite: it installs the
  ``seqrmt`` wheel that the book's site serves, and the chapter's packages as Pyodide builds them;
* elsewhere it installs ``seqrmt`` with the chapter's extras from the book's repository when
  ``seqrmt`` is missing (Colab, a fresh Jupyter), or only the missing extras' packages when
  ``seqrmt`` is there; PyTorch comes from its CPU wheel index on Linux (the chapters run on a
  CPU, and PyPI's Linux wheel pulls about 3 GB of CUDA libraries).
"""

from __future__ import annotations

import argparse
import ast
import json
import pathlib
import re
import sys
import tomllib
import warnings
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = "seqrmt"
# The optional packages of pyproject.toml's extras, by import name; the distribution name where
# it differs from the import name.
DISTRIBUTION_IMPORTS = {"scikit-learn": "sklearn"}
# Pyodide's builds where their name differs from PyPI's (cvxpy-base: cvxpy without SCS/OSQP/ECOS)
PYODIDE_DISTRIBUTIONS = {"cvxpy": "cvxpy-base"}
# import names Pyodide (the Python of JupyterLite) does not have: chapters that need one of them
# keep Binder and Colab
PYODIDE_MISSING = {"torch": "it trains with PyTorch, which has no build for Pyodide (the Python of JupyterLite)"}
# chapters whose imports Pyodide has but which do not run there, measured in the Pyodide-pinned
# environment (tests/pyodide): chapter -> why (the page says it)
NOT_IN_BROWSER: dict[str, str] = {}  # none since 3.4 solves its corpus-size program with numpy's ADMM
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
MAGIC = re.compile(r"^\s*[%!]")


# ----------------------------------------------------------------------------- the extras
def extras(root: pathlib.Path = ROOT) -> dict[str, tuple[str, list[str]]]:
    """Import name -> (extra, its requirements) for every optional package of pyproject.toml."""
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    out: dict[str, tuple[str, list[str]]] = {}
    for extra, requirements in project.get("optional-dependencies", {}).items():
        for requirement in requirements:
            dist = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
            module = DISTRIBUTION_IMPORTS.get(dist.lower(), dist.lower().replace("-", "_"))
            # only the extras that notebooks import (not "test": pytest, nbval, ...)
            if extra != "test":
                out[module] = (extra, requirements)
    return out


# ----------------------------------------------------------------------------- the library
@dataclass
class Module:
    """One module of the library, read with ``ast``."""

    name: str
    tree: ast.Module
    is_package: bool
    aliases: dict[str, str] = field(default_factory=dict)   # local name -> dotted target
    defs: dict[str, ast.AST] = field(default_factory=dict)  # top-level functions and classes
    stars: list[str] = field(default_factory=list)          # modules of "from x import *"
    top_imports: set[str] = field(default_factory=set)      # dotted targets imported at import


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    """The absolute module of ``from <relative> import ...`` inside ``module``."""
    if not node.level:
        return node.module or ""
    parts = module.name.split(".")
    base = parts if module.is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _import_targets(module: Module, node: ast.AST) -> list[tuple[str, str]]:
    """(local name, dotted target) pairs of one import statement."""
    if isinstance(node, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0])
                for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = _absolute(module, node)
        return [(a.asname or a.name, f"{base}.{a.name}" if a.name != "*" else base + ".*")
                for a in node.names]
    return []


def _parse(source: str) -> ast.Module:
    """``ast.parse`` without the warnings of the parsed code (invalid escapes in docstrings)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


def _outside_defs(tree: ast.AST):
    """The nodes of a module that run when it is imported (not those inside def or class bodies)."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


class Library:
    """The optional packages that importing a ``seqrmt`` module, or calling a name of it, imports."""

    def __init__(self, root: pathlib.Path = ROOT, optional: set[str] | None = None):
        self.optional = set(optional if optional is not None else extras(root))
        self.modules: dict[str, Module] = {}
        src = root / "lib"
        for path in sorted((src / PACKAGE).rglob("*.py")):
            rel = path.relative_to(src).with_suffix("")
            is_package = rel.name == "__init__"
            name = ".".join(rel.parts[:-1] if is_package else rel.parts)
            module = Module(name, _parse(path.read_text(encoding="utf-8")), is_package)
            for node in module.tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    module.defs[node.name] = node
            for node in _outside_defs(module.tree):
                for local, target in _import_targets(module, node):
                    if target.endswith(".*"):
                        module.stars.append(target[:-2])
                    else:
                        module.aliases[local] = target
                        module.top_imports.add(target)
            self.modules[name] = module
        self._import_memo: dict[str, frozenset] = {}
        self._name_memo: dict[tuple[str, str], frozenset] = {}

    def _optional(self, target: str) -> str | None:
        top = target.split(".")[0]
        return top if top in self.optional else None

    def _as_module(self, target: str) -> str | None:
        """``target`` if it names a module of the library, else None."""
        return target if target in self.modules else None

    def import_needs(self, name: str, _seen: set | None = None) -> frozenset:
        """The optional packages that ``import <name>`` imports (its parents' ``__init__`` too)."""
        if name in self._import_memo:
            return self._import_memo[name]
        seen = _seen if _seen is not None else set()
        if name in seen or name not in self.modules:
            return frozenset()
        seen.add(name)
        needs: set[str] = set()
        parent = name.rpartition(".")[0]
        if parent:
            needs |= self.import_needs(parent, seen)
        module = self.modules[name]
        for target in module.top_imports | {m + ".*" for m in module.stars}:
            target = target.removesuffix(".*")
            if opt := self._optional(target):
                needs.add(opt)
            elif target.startswith(PACKAGE):
                # "from .x import f" imports the module x (or the package that defines f)
                mod = self._as_module(target) or self._as_module(target.rpartition(".")[0])
                if mod:
                    needs |= self.import_needs(mod, seen)
        result = frozenset(needs)
        if _seen is None or not seen - {name}:
            self._import_memo[name] = result
        return result

    def resolve(self, module: str, name: str, _depth: int = 0) -> tuple[str, str] | str | None:
        """Where ``module.name`` is defined: (module, def name), a module name, or None."""
        if _depth > 20 or module not in self.modules:
            return None
        if self._as_module(f"{module}.{name}"):
            return f"{module}.{name}"
        mod = self.modules[module]
        if name in mod.defs:
            return (module, name)
        if name in mod.aliases:
            target = mod.aliases[name]
            if self._as_module(target):
                return target
            owner, _, attr = target.rpartition(".")
            if owner in self.modules:
                return self.resolve(owner, attr, _depth + 1)
            return None
        for star in mod.stars:
            found = self.resolve(star, name, _depth + 1)
            if found:
                return found
        return None

    def name_needs(self, module: str, name: str, _stack: set | None = None) -> frozenset:
        """The optional packages that using ``module.name`` may import (imports and calls)."""
        key = (module, name)
        if key in self._name_memo:
            return self._name_memo[key]
        stack = _stack if _stack is not None else set()
        found = self.resolve(module, name)
        if found is None or key in stack:
            return frozenset()
        if isinstance(found, str):  # a submodule
            return self.import_needs(found)
        stack.add(key)
        owner, defname = found
        needs = set(self.import_needs(owner))
        mod = self.modules[owner]
        node = mod.defs[defname]
        for sub in ast.walk(node):
            # imports inside the function (cvxpy, torch imported where they are needed)
            for _, target in _import_targets(mod, sub):
                if opt := self._optional(target):
                    needs.add(opt)
                elif target.startswith(PACKAGE) and not target.endswith(".*"):
                    base, _, attr = target.rpartition(".")
                    needs |= (self.import_needs(target) if self._as_module(target)
                              else self.name_needs(base, attr, stack))
            # names of the library used inside it: module-level defs and imported names
            if isinstance(sub, ast.Name):
                if sub.id in mod.defs or (sub.id in mod.aliases and sub.id != defname):
                    needs |= self._use(owner, [sub.id], stack)
            elif isinstance(sub, ast.Attribute):
                chain = _chain(sub)
                if chain and chain[0] in mod.aliases:
                    needs |= self._use(owner, chain, stack)
        stack.discard(key)
        result = frozenset(needs)
        self._name_memo[key] = result
        return result

    def _use(self, module: str, chain: list[str], stack: set) -> set[str]:
        """Needs of ``a.b.c`` used in ``module`` (``a`` a local name there)."""
        mod = self.modules[module]
        head = chain[0]
        if head in mod.defs:
            return set(self.name_needs(module, head, stack))
        target = mod.aliases.get(head, "")
        if opt := self._optional(target):
            return {opt}
        if not target.startswith(PACKAGE):
            return set()
        return self.dotted_needs(target.split(".") + chain[1:], stack)

    def dotted_needs(self, parts: list[str], stack: set | None = None) -> set[str]:
        """Needs of the dotted name ``seqrmt.x.y.f`` (a module, or a name in one)."""
        stack = stack if stack is not None else set()
        needs: set[str] = set()
        current = parts[0]
        for i, part in enumerate(parts[1:], start=1):
            found = self.resolve(current, part)
            if isinstance(found, str):
                current = found
                needs |= self.import_needs(current)
                continue
            if found is not None:
                needs |= self.name_needs(current, part, stack)
            break
        else:
            needs |= self.import_needs(current)
        return needs


def _chain(node: ast.Attribute) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None when the base is not a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id] + parts[::-1]


# ----------------------------------------------------------------------------- the notebooks
def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _python(source: str) -> ast.Module:
    """A notebook cell as Python: IPython magics and shell lines become ``pass``."""
    lines = []
    for line in source.splitlines():
        lines.append(re.sub(r"^(\s*)[%!].*$", r"\1pass", line))
    return _parse("\n".join(lines))


def notebook_needs(nb: dict, library: Library) -> set[str]:
    """The optional packages (import names) that a notebook's code imports, with the library's."""
    needs: set[str] = set()
    aliases: dict[str, str] = {}   # notebook name -> dotted seqrmt target
    trees = [_python("".join(c["source"])) for c in code_cells(nb)[1:]]  # not the install cell
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                pairs = [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0])
                         for a in node.names]
                full = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                pairs = [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names]
                full = [node.module]
            else:
                continue
            for name in full:
                if name.split(".")[0] in library.optional:
                    needs.add(name.split(".")[0])
                elif name.split(".")[0] == PACKAGE:
                    needs |= library.dotted_needs(name.split("."))
            for local, target in pairs:
                if target.split(".")[0] == PACKAGE:
                    aliases[local] = target
                    needs |= library.dotted_needs(target.split("."))
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and (chain := _chain(node)) and chain[0] in aliases:
                needs |= library.dotted_needs(aliases[chain[0]].split(".") + chain[1:])
    return needs


def notebook_paths(root: pathlib.Path = ROOT) -> list[pathlib.Path]:
    return sorted((root / "notebooks").glob("part*/*.ipynb"))


@dataclass
class Chapter:
    """What one chapter needs and where it runs."""

    path: pathlib.Path          # notebooks/<part>/<name>.ipynb
    needs: list[str]            # optional packages, by import name, sorted

    @property
    def docname(self) -> str:
        return self.path.relative_to(ROOT).with_suffix("").as_posix()

    @property
    def browser(self) -> bool:
        """Whether the chapter runs in Pyodide (JupyterLite)."""
        return not set(self.needs) & set(PYODIDE_MISSING) and self.docname not in NOT_IN_BROWSER

    @property
    def why_not_browser(self) -> str:
        reasons = [PYODIDE_MISSING[m] for m in self.needs if m in PYODIDE_MISSING]
        return "; ".join(reasons + ([NOT_IN_BROWSER[self.docname]] if self.docname in NOT_IN_BROWSER else []))


def chapters(root: pathlib.Path = ROOT) -> list[Chapter]:
    """Every chapter with the optional packages it needs."""
    library = Library(root)
    out = []
    for path in notebook_paths(root):
        nb = json.loads(path.read_text(encoding="utf-8"))
        out.append(Chapter(path, sorted(notebook_needs(nb, library))))
    return out


# ----------------------------------------------------------------------------- the cell
HEAD = """\
# Set-up for Colab, JupyterLite and fresh environments: install what this
# chapter imports and the environment lacks (nothing when all is there).
import importlib.util
import sys

NEEDS = {modules}
missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
"""
LITE = """\
if sys.platform == "emscripten":
    # JupyterLite (Pyodide): piplite installs the seqrmt wheel that the
    # book's site serves{note}
    %pip install -q {packages}
"""
NO_LITE = """\
if sys.platform == "emscripten":
    raise RuntimeError(
        "This chapter needs {names}, which does not run in the browser"
        " (Pyodide): open it on Binder or Colab, or run it locally.")
"""
TORCH_INDEX = """\
# PyTorch's CPU build on Linux (PyPI's Linux wheel pulls 3 GB of CUDA
# libraries; the chapters run on a CPU)
OPTS = ""
if sys.platform == "linux" and "torch" in missing:
    OPTS = "--extra-index-url https://download.pytorch.org/whl/cpu"
"""
INSTALL = """\
{keyword} "seqrmt" in missing:
    REPO = "git+https://github.com/seqrmt/seqrmt-book"
    %pip install -q {opts}"seqrmt{extras} @ {{REPO}}"
"""
EXTRAS = """\
elif missing:
    PACKAGES = {packages}
    PIP = " ".join(f'"{{PACKAGES[m]}}"' for m in missing)
    %pip install -q {opts}{{PIP}}
"""
# what a Pyodide build is called, and why, where it is not the PyPI name
PYODIDE_NOTES = {"cvxpy": "Pyodide's cvxpy-base (Clarabel, no SCS)"}
PIP_NAMES = {"torch": "PyTorch"}


def cell_source(needs: list[str], root: pathlib.Path = ROOT) -> str:
    """The install cell of a chapter that imports the optional packages ``needs``."""
    table = extras(root)
    needs = sorted(needs)
    chosen = sorted({table[m][0] for m in needs})
    parts = [HEAD.format(modules=json.dumps([PACKAGE] + needs))]
    lacking = [m for m in needs if m in PYODIDE_MISSING]
    if lacking:
        parts.append(NO_LITE.format(names=" and ".join(PIP_NAMES.get(m, m) for m in lacking)))
    else:
        packages = [PACKAGE] + [PYODIDE_DISTRIBUTIONS.get(m, _dist(table, m)) for m in needs]
        notes = [PYODIDE_NOTES[m] for m in needs if m in PYODIDE_NOTES]
        parts.append(LITE.format(packages=" ".join(packages),
                                 note="".join(f", and {n}" for n in notes)))
    opts = ""
    if "torch" in needs:
        parts.append(TORCH_INDEX)
        opts = "{OPTS} "
    parts.append(INSTALL.format(keyword="if" if lacking else "elif", opts=opts,
                                extras=f"[{','.join(chosen)}]" if chosen else ""))
    if needs:
        packages = {m: ", ".join(table[m][1]) for m in needs}
        parts.append(EXTRAS.format(packages=json.dumps(packages), opts=opts))
    return "".join(parts).rstrip("\n")


def _dist(table, module: str) -> str:
    """The distribution name of an optional package (``sklearn`` -> ``scikit-learn``)."""
    return re.match(r"[A-Za-z0-9_.-]+", table[module][1][0]).group(0)


def write(root: pathlib.Path = ROOT, check: bool = False) -> list[str]:
    """Write (or, with ``check``, compare) the install cell of every notebook; the stale ones."""
    stale = []
    for chapter in chapters(root):
        text = chapter.path.read_text(encoding="utf-8")
        nb = json.loads(text)
        cells = code_cells(nb)
        if not cells:
            continue
        first = cells[0]
        new = cell_source(chapter.needs, root)
        tags = first.setdefault("metadata", {}).setdefault("tags", [])
        if "".join(first["source"]) == new and "hide-cell" in tags:
            continue
        stale.append(chapter.path.relative_to(root).as_posix())
        if check:
            continue
        first["source"] = new.splitlines(keepends=True)
        if "hide-cell" not in tags:
            tags.append("hide-cell")
        first["outputs"] = []   # the cell prints nothing where everything is installed
        indent = 1 if text.startswith('{\n "') else 2
        chapter.path.write_text(json.dumps(nb, indent=indent, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if an install cell is stale")
    parser.add_argument("--list", action="store_true", help="what each chapter needs")
    args = parser.parse_args(argv)
    if args.list:
        for chapter in chapters():
            where = "browser" if chapter.browser else "Binder/Colab: " + chapter.why_not_browser
            print(f"{chapter.docname:58s} {','.join(chapter.needs) or '-':18s} {where}")
        return 0
    stale = write(check=args.check)
    for path in stale:
        print(("stale install cell: " if args.check else "install cell written: ") + path)
    if args.check and stale:
        print("run: python scripts/install_cell.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
