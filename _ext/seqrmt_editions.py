"""The reader and student editions in the HTML build (a local Sphinx extension).

The book's notebooks are written in MyST (theorem and exercise directives, roles, the
book's macros), which JupyterLab, Colab and GitHub do not render. ``scripts/editions.py``
generates plain-Jupyter copies of them: reader notebooks in ``editions/reader/`` (solutions
folded) and student notebooks in ``editions/student/`` (no solutions). This extension makes
the built site serve them:

1. The launch buttons (Binder, Colab) of a notebook page open the edition notebook in the
   repository (``editions/<edition>/notebooks/...``), not the MyST source.
2. The ".ipynb" download (``_sources/notebooks/...ipynb``) is the edition notebook.
3. Every exercise box shows its level, from the table "Exercises by level" of
   ``book/instructors.md`` (the one place the levels are written): "Exercise 1.3 (level 2)".
4. ``SEQRMT_EDITION=student`` (set by ``python scripts/editions.py student``) builds the
   student edition: ``hide_solutions`` is switched on, the folded check of each solution (a code
   cell starting ``# check of ex-...``) is removed with it, and the student notebooks are served.
   The site's address is ``<html.baseurl>student/`` (where ``.github/workflows/pages.yml``
   publishes it), and the tag ``student`` is set, so that a page can say what only one edition
   should (``{only} student`` / ``{only} not student`` blocks: "solutions are folded below them").
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

EDITIONS = ("reader", "student")
LEVELS_PAGE = "book/instructors.md"
LEVELS_HEADING = "## Exercises by level"


def edition_notebook(root: pathlib.Path, edition: str, docname: str) -> pathlib.Path:
    """Where the edition copy of the notebook ``docname`` (e.g. ``notebooks/part1_x/01_y``) lives."""
    return root / "editions" / edition / f"{docname}.ipynb"


def exercise_levels(root: pathlib.Path) -> dict[str, int]:
    """Exercise label -> level (1, 2, 3: the rows of the table in book/instructors.md)."""
    text = (root / LEVELS_PAGE).read_text(encoding="utf-8")
    start = text.find(LEVELS_HEADING)
    if start < 0:
        return {}
    section = text[start + len(LEVELS_HEADING):]
    end = re.search(r"^#{1,2} ", section, re.M)
    section = section[: end.start()] if end else section
    levels: dict[str, int] = {}
    rows = [line for line in section.splitlines() if line.startswith("|") and "{ref}" in line]
    for level, row in enumerate(rows, start=1):
        for label in re.findall(r"\{ref\}`([^`<>]+)`", row):
            levels[label.strip()] = level
    return levels


def level_text(level: int) -> str:
    return f"level {level}"


def edition(config) -> str:
    name = getattr(config, "seqrmt_edition", "") or "reader"
    if name not in EDITIONS:
        raise ValueError(f"seqrmt_edition must be one of {EDITIONS}, not {name!r}")
    return name


STUDENT_SITE = "student/"  # the student site under html.baseurl (scripts/editions.py SITE_PATHS)


def set_edition(app: Sphinx, config) -> None:
    env_edition = os.environ.get("SEQRMT_EDITION", "").strip()
    if env_edition:
        config.seqrmt_edition = env_edition
    if edition(config) == "student":
        config.hide_solutions = True
        if config.html_baseurl and not config.html_baseurl.rstrip("/").endswith(STUDENT_SITE.rstrip("/")):
            config.html_baseurl = config.html_baseurl.rstrip("/") + "/" + STUDENT_SITE
        app.tags.add("student")
        # the student site says which edition it is (the PDF: student_pdf_title)
        if config.html_title and "student edition" not in config.html_title:
            config.html_title = f"{config.html_title} (student edition)"
    else:
        app.tags.add("reader")


def student_pdf_title(app: Sphinx, env, docnames) -> None:
    """The student PDF's title page says "(student edition)". jupyter-book sets the LaTeX
    document's title from ``_config.yml`` after Sphinx starts, so this runs once the build has
    begun (``env-before-read-docs``), before the LaTeX builder reads it."""
    if edition(app.config) != "student":
        return
    app.config.latex_documents = [
        (doc[0], doc[1], f"{doc[2]} (student edition)", *doc[3:])
        if len(doc) > 2 and "student edition" not in doc[2] else doc
        for doc in (app.config.latex_documents or [])
    ]


class ExerciseLevels(SphinxPostTransform):
    """Append "(level N)" to the title of every exercise box."""

    default_priority = 30  # after sphinx-exercise resolves the titles (priority 20)

    def run(self, **kwargs) -> None:
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node

        levels = getattr(self.env, "seqrmt_exercise_levels", None)
        if levels is None:
            levels = exercise_levels(pathlib.Path(self.app.srcdir))
            self.env.seqrmt_exercise_levels = levels
        for node in self.document.findall(
            lambda n: isinstance(n, (exercise_enumerable_node, exercise_node))
        ):
            level = levels.get(node.get("label", ""))
            if level is None or not node.children or not isinstance(node.children[0], nodes.title):
                continue
            title = node.children[0]
            title += nodes.inline("", f" ({level_text(level)})", classes=["exercise-level"])


SOLUTION_CHECK = re.compile(r"^# check of ex-[\w-]+")


class DropSolutionChecks(SphinxPostTransform):
    """In the student edition, remove the code cell that checks a solution, with its outputs."""

    default_priority = 30

    def run(self, **kwargs) -> None:
        if edition(self.config) != "student":
            return
        for cell in list(self.document.findall(
            lambda n: isinstance(n, nodes.container) and n.get("nb_element") == "cell_code"
        )):
            source = next(cell.findall(nodes.literal_block), None)
            if source is not None and SOLUTION_CHECK.match(source.astext()):
                cell.parent.remove(cell)


def launch_to_edition(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Point the Binder/Colab buttons of a notebook page at its edition notebook."""
    root = pathlib.Path(app.srcdir)
    name = edition(app.config)
    if not edition_notebook(root, name, pagename).is_file():
        return
    old = f"{pagename}.ipynb"
    new = f"editions/{name}/{pagename}.ipynb"
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group.get("buttons", []):
            url = button.get("url", "")
            if url.endswith("/" + old) or url.endswith("/" + old.replace("/", "%2F")):
                button["url"] = url[: len(url) - len(old)] + new


def downloads_to_edition(app: Sphinx, exception) -> None:
    """Replace the ".ipynb" downloads in ``_sources`` by the edition notebooks."""
    if exception is not None or app.builder.format != "html":
        return
    root = pathlib.Path(app.srcdir)
    name = edition(app.config)
    sources = pathlib.Path(app.outdir) / "_sources"
    for docname in sorted(app.env.found_docs):
        src = edition_notebook(root, name, docname)
        dest = sources / f"{docname}.ipynb"
        if src.is_file() and dest.exists():
            shutil.copyfile(src, dest)


def setup(app: Sphinx) -> dict:
    app.add_config_value("seqrmt_edition", "reader", "env")
    app.connect("config-inited", set_edition, priority=900)
    app.connect("env-before-read-docs", student_pdf_title)
    app.add_post_transform(ExerciseLevels)
    app.add_post_transform(DropSolutionChecks)
    # after sphinx-book-theme builds the buttons (priority 501)
    app.connect("html-page-context", launch_to_edition, priority=600)
    app.connect("build-finished", downloads_to_edition)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
