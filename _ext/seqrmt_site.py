"""Site-wide fixes for the HTML build of the book (a local Sphinx extension).

1. Offline maths. MathJax 3 is shipped with the built site: the files come from the
   pip package ``django-static-mathjax`` (pinned in ``requirements.txt``) and are copied
   into ``_build/html/_static/mathjax/``; ``mathjax_path`` in ``_config.yml`` points
   there. Nothing is fetched from a CDN, so the site also reads offline. The build
   fails with a clear error when the package is missing.
2. One author-year style for the bibliography and the in-text citations: the labels of
   the reference list read "Aarts et al., 2024a" like the citations in the text; works by
   the same authors in the same year get a, b, ... in both places (natbib's rule).
3. The thebe configuration snippet of sphinx-thebe is registered twice under
   Jupyter Book 1.0.4 (``const THEBE_JS_URL`` then throws "already declared" in every
   page); identical inline scripts are emitted once.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

# What a page needs from MathJax's es5 tree: the combined TeX+MathML/CHTML component,
# the lazily loaded TeX extensions, CHTML fonts, the menu and accessibility parts.
MATHJAX_ENTRY = "tex-mml-chtml.js"
MATHJAX_PARTS = [MATHJAX_ENTRY, "input", "output/chtml", "output/chtml.js", "ui", "a11y", "sre", "adaptors"]


def mathjax_source() -> pathlib.Path:
    """The ``es5`` folder of MathJax 3 inside the installed django-static-mathjax."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise ExtensionError(
            "MathJax is not installed: pip install django-static-mathjax==3.2.2.1 "
            "(pinned in requirements.txt); the book ships MathJax instead of using a CDN"
        )
    es5 = pathlib.Path(list(spec.submodule_search_locations)[0]) / "static" / "mathjax" / "es5"
    if not (es5 / MATHJAX_ENTRY).is_file():
        raise ExtensionError(f"{es5 / MATHJAX_ENTRY} not found in the installed django-static-mathjax")
    return es5


def copy_mathjax(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    src = mathjax_source()
    dest = pathlib.Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        s = src / part
        if not s.exists():
            continue
        d = dest / part
        d.parent.mkdir(parents=True, exist_ok=True)
        if s.is_dir():
            shutil.copytree(s, d, dirs_exist_ok=True)
        else:
            shutil.copy2(s, d)


def dedupe_inline_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Emit each inline script (a ``<script>`` with a body and no file) only once."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for js in scripts:
        # the same snippet arrives once with filename None and once with filename ""
        filename = getattr(js, "filename", js) or None
        body = getattr(js, "attributes", {}).get("body")
        key = (str(filename), body)
        if key in seen:
            continue
        seen.add(key)
        kept.append(js)
    scripts[:] = kept  # in place: the builder's list, which later handlers may extend


# ----------------------------------------------------------------------------- bibliography
def _surname(person) -> str:
    return Text.from_latex(" ".join(person.prelast_names + person.last_names)).render_as("text")


def author_key(entry) -> str:
    """The author part of an author-year citation, as sphinxcontrib-bibtex writes it."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    if not persons:
        return entry.key
    if len(persons) == 1:
        return _surname(persons[0])
    if len(persons) == 2:
        return f"{_surname(persons[0])} and {_surname(persons[1])}"
    return f"{_surname(persons[0])} et al."


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Surname, 2024", "A and B, 2024", "A et al., 2024a"."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield f"{author_key(entry)}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearStyle(UnsrtStyle):
    """pybtex's unsrt entries (arXiv ids linked), author-year labels, sorted by author and year."""

    default_label_style = "seqrmt_author_year"
    default_sorting_style = "author_year_title"


register_plugin("pybtex.style.labels", "seqrmt_author_year", AuthorYearLabelStyle)
register_plugin("pybtex.style.formatting", "seqrmt_author_year", AuthorYearStyle)


def disambiguate_years(app: Sphinx) -> None:
    """Give works with the same author-year citation the years 2024a, 2024b, ... (by key)."""
    try:
        bibdata = app.env.get_domain("cite").data["bibdata"]
    except (KeyError, AttributeError):
        return
    disambiguate_entries(bibdata.data.entries)


def disambiguate_entries(entries) -> None:
    """The same, on a mapping key -> pybtex entry (also used by scripts/editions.py)."""
    groups: dict[tuple[str, str], list] = {}
    for key in sorted(entries):
        entry = entries[key]
        m = re.match(r"\d{4}", entry.fields.get("year", ""))
        if not m:
            continue
        entry.fields["year"] = m.group(0)  # idempotent across incremental builds
        groups.setdefault((author_key(entry), m.group(0)), []).append(entry)
    for (_, year), group in groups.items():
        if len(group) > 1:
            for i, entry in enumerate(group):
                entry.fields["year"] = year + "abcdefghijklmnopqrstuvwxyz"[i]


# ----------------------------------------------------------------------------- setup
def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", disambiguate_years, priority=800)
    app.connect("builder-inited", copy_mathjax)
    # html-page-context stops at the first handler that returns a template name, so run early
    app.connect("html-page-context", dedupe_inline_scripts, priority=1)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
