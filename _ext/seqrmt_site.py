"""Site-wide fixes for the HTML and PDF builds of the book (a local Sphinx extension).

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
4. One macro table. ``book/macros.yml`` (name -> replacement, no arguments) is read on
   ``config-inited`` and fed to MathJax (``mathjax3_config.tex.macros``) and to the LaTeX
   preamble (``latex_elements['preamble']``), so the website and the PDF define ``\\RR``,
   ``\\Tr``, ... from the same lines; no other copy exists.
5. One version, ``seqrmt.__version__`` (``lib/seqrmt/__init__.py``): it becomes Sphinx's
   ``version``/``release`` and fills ``{version}`` in the footer (``html.extra_footer``),
   which names the licences on every page and on the page after the PDF's title page.
6. The PDF (``jupyter-book build . --builder pdflatex``): LaTeX-only post-transforms
   (braced ``_\\mathcal F`` scripts, exercise and proof boxes, API equations and
   signatures that fit the line, the appendices lettered A, B, ...), tables whose narrow
   columns are not hyphenated, check marks that survive wrapped code lines, a ``bbm.sty``
   stub; and the PDF on the site, in either order of the two builds (see ``publish_pdf``).
7. Inline maths in the HTML: a formula and the brackets or punctuation that touch it stay on
   one line (``span.seqrmt-nobr``), while the formula itself may break
   (``_static/seqrmt-site.css``, ``_static/seqrmt-fit-math.js``).
"""

from __future__ import annotations

import copy
import importlib.util
import pathlib
import re
import shlex
import shutil
import sys

import yaml

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.transforms.post_transforms import SphinxPostTransform

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


# ----------------------------------------------------------------------------- macros
MACROS_FILE = "book/macros.yml"
_MACRO_NAME = re.compile(r"[A-Za-z]+")


def load_macros(root: pathlib.Path | str) -> dict[str, str]:
    """The book's macro table ``book/macros.yml`` as ``{name: replacement}`` (names without ``\\``)."""
    path = pathlib.Path(root) / MACROS_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ExtensionError(f"the book's macro table {path} cannot be read: {exc}") from exc
    if not isinstance(data, dict) or not data:
        raise ExtensionError(f"{path} must map macro names to their LaTeX replacements")
    for name, body in data.items():
        if not isinstance(name, str) or not _MACRO_NAME.fullmatch(name):
            raise ExtensionError(f"{path}: macro name {name!r} is not letters only")
        if not isinstance(body, str) or not body.strip():
            raise ExtensionError(f"{path}: macro {name!r} has no replacement text")
        if body.count("{") != body.count("}"):
            raise ExtensionError(f"{path}: macro {name!r} has unbalanced braces: {body!r}")
    return dict(data)


def latex_macro_preamble(macros: dict[str, str]) -> str:
    """LaTeX definitions of the macros; each replaces any earlier definition.

    ``jupyterBook.cls`` (sphinx-jupyterbook-latex) defines ``\\RR``, ``\\EE``, ``\\Var``, ...
    its own way (``\\mathbbm``, an extra space after ``\\EE``): ``\\providecommand`` then
    ``\\renewcommand`` makes the PDF use the book's definitions, as the website does.
    """
    lines = ["% the book's macros, generated from book/macros.yml by _ext/seqrmt_site.py"]
    for name, body in macros.items():
        lines.append(f"\\providecommand{{\\{name}}}{{}}\\renewcommand{{\\{name}}}{{{body}}}")
    # PDF bookmarks (hyperref) are plain text: there each macro is its text form.
    plain = "".join(f"\\def\\{name}{{{plain_text(body)}}}" for name, body in macros.items())
    lines.append(f"\\pdfstringdefDisableCommands{{{plain}}}")
    return "\n".join(lines) + "\n"


_DOUBLE_STRUCK = {"E": "\U0001d53c", "C": "\u2102", "N": "\u2115", "P": "\u2119", "Q": "\u211a", "R": "\u211d", "Z": "\u2124"}
_PLAIN_SYMBOLS = {"varepsilon": "\u03b5", "epsilon": "\u03f5"}


def plain_text(body: str) -> str:
    """A macro's replacement as bookmark text: ``\\mathbb{R}`` -> ``ℝ``, ``\\operatorname{Tr}`` -> ``Tr``.

    >>> [plain_text(b) for b in (r"\\mathbb{R}", r"\\operatorname{Tr}", r"\\bar{Q}", r"\\varepsilon")]
    ['ℝ', 'Tr', 'Q̄', 'ε']
    """
    body = re.sub(r"\\mathbb\{(\w)\}", lambda m: _DOUBLE_STRUCK.get(m.group(1), m.group(1)), body)
    body = re.sub(r"\\(?:operatorname|mathrm|text)\{([^{}]*)\}", r"\1", body)
    body = re.sub(r"\\bar\{(\w)\}", "\\1\u0304", body)
    body = re.sub(r"\\([A-Za-z]+)", lambda m: _PLAIN_SYMBOLS.get(m.group(1), m.group(1)), body)
    return body.replace("{", "").replace("}", "")


# LaTeX set-up of the PDF besides the macros (appended to the preamble with them).
LATEX_EXTRA = r"""
% unicode-math maps \setminus to U+29F5, which Latin Modern Math lacks; use U+2216
\AtBeginDocument{\renewcommand{\setminus}{\smallsetminus}}
\usepackage{adjustbox}
% long box titles ("Theorem 1.2 (Weak convergence ... [Anderson et al., 2010, ...])") wrap inside
% the title row instead of running into the margin: Sphinx 7.4's \sphinxdotitlerowwithicon with
% \parbox in place of \makebox
\makeatletter
\newcommand\seqrmtdotitlerowwrapped[2]{%
   \begingroup
     \kern-\spx@boxes@padding@top
     \parskip\z@skip
     \noindent
     \kern-\spx@boxes@padding@left
     \spx@boxes@border@top=\z@ \spx@boxes@border@right=\z@
     \spx@boxes@border@bottom=\z@ \spx@boxes@border@left=\z@
     \spx@boxes@radius@bottomright@x=\z@ \spx@boxes@radius@bottomright@y=\z@
     \spx@boxes@radius@bottomleft@x=\z@
     \spx@boxes@padding@top=\sphinxtitlerowtoppadding\relax
     \spx@boxes@padding@bottom=\sphinxtitlerowbottompadding\relax
     \spx@boxes@withshadowfalse
     \sphinxcolorlet{spx@boxes@backgroundcolor}{sphinx#1TtlBgColor}%
     \spx@boxes@fcolorbox{%
        \parbox{\linewidth}{\raggedright\strut
         \textcolor{sphinx#1TtlFgColor}{\@nameuse{sphinx#1TtlIcon}\sphinxtitlerowaftericonspacecmd}%
         \sphinxstrong{#2}\strut}}%
     \kern-\spx@boxes@padding@right
     \par
   \endgroup
   \vskip-\parskip
   \kern\spx@boxes@padding@top
}
\renewcommand\sphinxstylenotetitle[1]{\seqrmtdotitlerowwrapped{note}{\sphinxremovefinalcolon{#1}}}
\makeatother
% a figure and its caption fit one page: images at most 80 % of the text height
\makeatletter\AtBeginDocument{\spx@image@maxheight=0.8\textheight}\makeatother
% tables (tabulary): no column is squeezed below 6em (Sphinx's default, three digits wide, split
% "advanced undergraduate" into "ad-vanced under-graduate"), and cells are set ragged right
\AtBeginDocument{\setlength{\tymin}{6em}\newcolumntype{T}{L}}
"""


def feed_macros(app: Sphinx, config) -> None:
    """Put the one macro table into MathJax's configuration and the LaTeX preamble."""
    macros = load_macros(app.confdir)
    mathjax = copy.deepcopy(config.mathjax3_config or {})
    tex_macros = mathjax.setdefault("tex", {}).setdefault("macros", {})
    clash = {k for k in tex_macros if k in macros and tex_macros[k] != macros[k]}
    if clash:
        raise ExtensionError(
            f"mathjax3_config defines {sorted(clash)} differently from {MACROS_FILE}: "
            "keep the macros only in the table"
        )
    tex_macros.update(macros)
    config.mathjax3_config = mathjax
    latex_elements = dict(config.latex_elements or {})
    latex_elements["preamble"] = (
        latex_elements.get("preamble", "") + latex_macro_preamble(macros) + LATEX_EXTRA + CHECK_MARK_PREAMBLE
    )
    config.latex_elements = latex_elements


# ----------------------------------------------------------------------------- version and licence
VERSION_FILE = "lib/seqrmt/__init__.py"


def library_version(root: pathlib.Path | str) -> str:
    """``seqrmt.__version__``, read from the source (the one place the version is written)."""
    path = pathlib.Path(root) / VERSION_FILE
    m = re.search(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", path.read_text(encoding="utf-8"), re.M)
    if m is None:
        raise ExtensionError(f"no __version__ = '...' line in {path}")
    return m.group(1)


def footer_to_latex(html: str) -> str:
    """The footer's HTML as LaTeX text: links become "text (URL)", other tags go."""
    def link(m):
        return f"{m.group(2)} (\\url{{{m.group(1)}}})"

    parts = re.split(r'(<a href="[^"]*">.*?</a>)', html, flags=re.S)
    out = []
    for part in parts:
        m = re.fullmatch(r'<a href="([^"]*)">(.*?)</a>', part, flags=re.S)
        if m:
            out.append(link(m))
        else:
            text = re.sub(r"<[^>]+>", "", part)
            for a, b in (("\\", "\\textbackslash{}"), ("&", "\\&"), ("%", "\\%"), ("#", "\\#"), ("_", "\\_")):
                text = text.replace(a, b)
            out.append(text)
    return " ".join("".join(out).split())


def set_version_and_licence(app: Sphinx, config) -> None:
    """The version everywhere from ``seqrmt.__version__``; the licence footer on every page."""
    version = library_version(app.confdir)
    config.version = config.release = version
    options = dict(config.html_theme_options or {})
    footer = options.get("extra_footer", "").replace("{version}", version)
    options["extra_footer"] = footer
    config.html_theme_options = options
    if footer:
        latex_elements = dict(config.latex_elements or {})
        latex_elements.setdefault(
            "maketitle",
            "\\sphinxmaketitle\n\\thispagestyle{empty}\\vspace*{\\fill}\n"
            f"\\noindent{{\\small {footer_to_latex(footer)}\\par}}\n\\clearpage\n",
        )
        config.latex_elements = latex_elements


# ----------------------------------------------------------------------------- LaTeX / PDF
# ``jupyterBook.cls`` (sphinx-jupyterbook-latex) loads ``bbm`` only for its own ``\\RR``-style
# macros, which the book's table replaces; the real package lives in Debian's 500 MB
# texlive-fonts-extra. This stub, written next to the .tex file, lets the PDF build with the
# small TeX set that .ci/run installs. The book itself never uses ``\\mathbbm``.
BBM_STUB = r"""\NeedsTeXFormat{LaTeX2e}
\ProvidesPackage{bbm}[2026/11/27 seqrmt stub: mathbbm as amssymb mathbb]
\providecommand{\mathbbm}[1]{\mathbb{#1}}
\endinput
"""

# Commands that take an argument. MathJax accepts them unbraced after _ or ^ (``P_\\mathcal F``);
# LaTeX with unicode-math stops with "Missing { inserted". In the LaTeX output only, such a
# sub/superscript is braced: ``P_{\\mathcal F}`` (the HTML keeps the source text).
_ARG_COMMANDS = (
    "mathcal|mathbb|mathrm|mathbf|mathsf|mathit|mathtt|mathfrak|mathscr|boldsymbol|bm|"
    "text|textrm|textit|textbf|operatorname|hat|tilde|bar|vec|dot|ddot|check|breve|"
    "widetilde|widehat|overline|underline"
)
_UNBRACED_SCRIPT = re.compile(r"([_^])\s*(\\(?:" + _ARG_COMMANDS + r"))(?![A-Za-z])")


def _group_end(text: str, start: int) -> int:
    """End (exclusive) of the TeX argument that starts at ``text[start]`` (after spaces)."""
    i = start
    while i < len(text) and text[i] in " \t\n":
        i += 1
    if i >= len(text):
        return i
    if text[i] == "{":
        depth = 0
        for j in range(i, len(text)):
            if text[j] == "{" and text[j - 1] != "\\":
                depth += 1
            elif text[j] == "}" and text[j - 1] != "\\":
                depth -= 1
                if depth == 0:
                    return j + 1
        return len(text)
    if text[i] == "\\":
        m = re.match(r"\\(?:[A-Za-z]+|.)", text[i:])
        return i + (m.end() if m else 1)
    return i + 1


def brace_scripts(tex: str) -> str:
    """Brace sub/superscripts that start with an argument-taking command: ``_\\mathcal F``
    becomes ``_{\\mathcal F}``; already braced scripts are left alone.

    >>> brace_scripts(r"P_\\mathcal F W + x^\\hat{a}_{\\mathcal H} + T_\\mathrm{in}")
    'P_{\\\\mathcal F} W + x^{\\\\hat{a}}_{\\\\mathcal H} + T_{\\\\mathrm{in}}'
    """
    out, pos = [], 0
    while (m := _UNBRACED_SCRIPT.search(tex, pos)) is not None:
        end = _group_end(tex, m.end())
        out.append(tex[pos : m.start()])
        out.append(f"{m.group(1)}{{{m.group(2)}{tex[m.end():end]}}}")
        pos = end
    out.append(tex[pos:])
    return "".join(out)


def latex_support_files(app: Sphinx) -> None:
    if app.builder.name != "latex":
        return
    out = pathlib.Path(app.outdir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bbm.sty").write_text(BBM_STUB, encoding="utf-8")


class BraceScriptsForLatex(SphinxPostTransform):
    """In the LaTeX output, brace ``_\\mathcal F``-style scripts (see :func:`brace_scripts`)."""

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block)))):
            old = node.astext()
            new = brace_scripts(old)
            if new != old:
                node.children = []
                node += nodes.Text(new)


class ProofTitlesAndLabelsForLatex(SphinxPostTransform):
    """Two repairs of sphinx-proof's LaTeX output, in the LaTeX output only.

    * A proof box gets the title "Proof" in its header, instead of an empty header above
      a paragraph that starts with "Proof. ".
    * sphinx-proof finds the document of a theorem by comparing the page title with the
      section's names; a title with an apostrophe ("... GPT's weights") is typeset with a
      curly one and never matches, so the box lost its number ("Definition  (...)") and its
      label ("None:def-..."). The typeset title is added to the section's names.
    """

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        titles = self.env.titles
        for section in self.document.findall(nodes.section):
            docname = section.get("docname")
            if docname in titles:
                name = titles[docname].astext().lower()
                if name not in section["names"]:
                    section["names"].append(name)
        for box in list(self.document.findall(nodes.admonition)):
            if "proof" not in box.get("classes", []) or any(isinstance(c, nodes.title) for c in box.children):
                continue
            first = next(iter(box.findall(nodes.Text)), None)
            if first is not None and first.astext().startswith("Proof. "):
                first.parent.replace(first, nodes.Text(first.astext()[len("Proof. "):]))
            box.insert(0, nodes.title("", "Proof"))


APPENDIX_CAPTION = re.compile(r"append", re.I)


def first_appendix(root: pathlib.Path | str) -> str | None:
    """The first page of the ``_toc.yml`` part whose caption names the appendices, or None."""
    path = pathlib.Path(root) / "_toc.yml"
    if not path.is_file():
        return None
    toc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for part in toc.get("parts", []) or []:
        if APPENDIX_CAPTION.search(str(part.get("caption", ""))) and part.get("chapters"):
            return re.sub(r"\.(md|ipynb)$", "", part["chapters"][0]["file"])
    return None


class AppendicesForLatex(SphinxPostTransform):
    """In the PDF the appendices are Appendix A, B, ... (they were Chapters 6-11): ``\\appendix``
    before the first page of the part captioned "Appendices" in ``_toc.yml``."""

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        first = first_appendix(self.app.srcdir)
        if first is None:
            return
        for section in self.document.findall(nodes.section):
            if section.get("docname") == first:
                section.parent.insert(section.parent.index(section),
                                      nodes.raw("", "\\appendix\n", format="latex"))
                return


class ApiLayoutForLatex(SphinxPostTransform):
    """API reference in the PDF: nothing runs into the margin.

    * A display equation of a docstring is set in an ``adjustbox`` no wider than the line
      (the website scales the same equations down, ``_static/seqrmt-fit-math.js``).
    * A long unbreakable token in a signature (a sha256 default value) may break anywhere.
    """

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        from sphinx import addnodes

        for desc in self.document.findall(addnodes.desc_content):
            for block in list(desc.findall(nodes.math_block)):
                if block.get("nowrap") or block.get("label") or block.get("number"):
                    continue
                # blank lines separate equations (as Sphinx's math_block does)
                pieces = [p.strip() for p in re.split(r"\n\s*\n", brace_scripts(block.astext()))]
                raw = "".join(
                    "\n\\begin{center}\\begin{adjustbox}{max width=\\linewidth}"
                    f"$\\displaystyle\\begin{{aligned}}{tex}\\end{{aligned}}$"
                    "\\end{adjustbox}\\end{center}\n"
                    for tex in pieces
                    if tex
                )
                block.replace_self(nodes.raw("", raw, format="latex"))
        for param in self.document.findall(addnodes.desc_signature):
            for text in list(param.findall(nodes.Text)):
                value = text.astext()
                if len(value) <= 30 or " " in value:
                    continue
                parent = text.parent
                index = parent.index(text)
                pieces = [value[i : i + 16] for i in range(0, len(value), 16)]
                new: list[nodes.Node] = []
                for i, piece in enumerate(pieces):
                    if i:
                        new.append(nodes.raw("", "\\allowbreak{}", format="latex"))
                    new.append(nodes.Text(piece))
                parent.remove(text)
                for offset, node in enumerate(new):
                    parent.insert(index + offset, node)


# ----------------------------------------------------------------------------- inline maths in HTML
# Inline maths may break across lines (``_static/seqrmt-site.css``), and each MathJax symbol is a
# break opportunity, also before a closing ")" or "," that follows the formula: the line ended
# "(the tail weight is 1 - A" and the ")" began the next. The brackets and punctuation that touch
# a formula are kept on its line.
_CLOSING = re.compile(r"^[)\]}.,;:!?\u2019\u201d%]+")
_OPENING = re.compile(r"[(\[{\u2018\u201c]+$")


class KeepPunctuationWithMath(SphinxPostTransform):
    """HTML only: wrap an inline formula and the brackets or punctuation that touch it in a
    ``span.seqrmt-nobr`` (``white-space: nowrap`` around it; the formula itself still wraps)."""

    default_priority = 400
    formats = ("html",)

    def run(self, **kwargs) -> None:
        for math in list(self.document.findall(nodes.math)):
            parent = math.parent
            if parent is None or isinstance(parent, nodes.FixedTextElement):
                continue
            index = parent.index(math)
            before = parent[index - 1] if index > 0 and isinstance(parent[index - 1], nodes.Text) else None
            after = parent[index + 1] if index + 1 < len(parent) and isinstance(parent[index + 1], nodes.Text) else None
            opening = _OPENING.search(before.astext()) if before is not None else None
            closing = _CLOSING.match(after.astext()) if after is not None else None
            if not opening and not closing:
                continue
            wrapper = nodes.inline(classes=["seqrmt-nobr"])
            if opening:
                text = before.astext()
                parent.replace(before, nodes.Text(text[: opening.start()]))
                wrapper += nodes.Text(opening.group(0))
            parent.replace(math, wrapper)
            wrapper += math
            if closing:
                text = after.astext()
                parent.replace(after, nodes.Text(text[closing.end():]))
                wrapper += nodes.Text(closing.group(0))


# The whole book as one PDF on the site. Every page loads _static/seqrmt-pdf.js, which says
# whether the site holds book.pdf; _static/seqrmt-phone.js then adds "Whole book (PDF)" to the
# download menu. No page asks the server for a book.pdf that may not be there (a 404 in every
# page's console). The HTML build writes the file (copying a PDF built before it); the PDF is
# made after Sphinx, by jupyter-book's `make all-pdf` in _build/latex, so the LaTeX build adds
# a step to that Makefile that copies book.pdf to _build/html and rewrites the file. Either
# order of `jupyter-book build .` and `jupyter-book build . --builder pdflatex` ends with the
# PDF offered.
PDF_FLAG = "seqrmt-pdf.js"


def publish_pdf(latex_dir: pathlib.Path, html_dir: pathlib.Path) -> bool:
    """Copy ``latex_dir/book.pdf`` (when built) to ``html_dir`` and write
    ``html_dir/_static/seqrmt-pdf.js``; returns whether the site holds the PDF."""
    if (latex_dir / "book.pdf").is_file():
        shutil.copy2(latex_dir / "book.pdf", html_dir / "book.pdf")
    held = (html_dir / "book.pdf").is_file()
    (html_dir / "_static").mkdir(parents=True, exist_ok=True)
    (html_dir / "_static" / PDF_FLAG).write_text(
        "// written by _ext/seqrmt_site.py (publish_pdf): does this site hold book.pdf?\n"
        f"window.seqrmtBookPdf = {'true' if held else 'false'};\n"
        "if (window.seqrmtOfferPdf) window.seqrmtOfferPdf();\n", encoding="utf-8")
    return held


def pdf_on_site(app: Sphinx, exception) -> None:
    """HTML build: publish the PDF built before (or say there is none). LaTeX build: make
    ``make all-pdf`` publish it once built, if the HTML site is there."""
    out = pathlib.Path(app.outdir)
    if app.builder.format == "html":
        publish_pdf(out.parent / "latex", out)  # also after a failed build: pages load the file
    elif app.builder.name == "latex" and exception is None and (out / "Makefile").is_file():
        # make's recipes are shell lines, where $ is written $$
        command = " ".join(shlex.quote(str(a)).replace("$", "$$") for a in (
            sys.executable, __file__, out, out.parent / "html"))
        with open(out / "Makefile", "a", encoding="utf-8") as makefile:
            makefile.write("\n# _ext/seqrmt_site.py: the HTML site offers the PDF once it is built\n"
                           "all-pdf: seqrmt-publish-pdf\n"
                           "seqrmt-publish-pdf: $(ALLPDF)\n"
                           f"\t@{command}\n"
                           ".PHONY: seqrmt-publish-pdf\n")


class ExerciseRefsForLatex(SphinxPostTransform):
    """In the LaTeX output, a reference to an exercise shows the number the website shows.

    Sphinx writes a numbered reference as ``Exercise \\ref{docname:label}``, but
    sphinx-exercise labels its boxes ``exercise:label`` and numbers them itself, so the PDF
    printed "Exercise ??". The reference becomes sphinx-exercise's own LaTeX reference node,
    with the resolved text ("Exercise 1.10") linked to the box.
    """

    default_priority = 400
    builders = ("latex",)

    def run(self, **kwargs) -> None:
        registry = getattr(self.env, "sphinx_exercise_registry", None)
        if not registry:
            return
        from sphinx import addnodes
        from sphinx_exercise.nodes import exercise_enumerable_node, exercise_latex_number_reference

        for node in list(self.document.findall(addnodes.number_reference)):
            if isinstance(node, exercise_latex_number_reference):
                continue
            target = node.get("refid") or node.get("refuri", "")
            label = re.split(r"[#:]", target)[-1]
            entry = registry.get(label)
            if not entry or not isinstance(entry.get("node"), exercise_enumerable_node):
                continue
            new = exercise_latex_number_reference()
            new["refid"] = label
            new += nodes.Text(node.astext())
            node.replace_self(new)


# Sphinx writes a check mark of the text (the "✓" that ``seqrmt.stats.check`` prints) as the
# maths ``\(\checkmark\)``; inside a code block whose long lines are wrapped
# (``verbatimforcewraps``) the pair is split and LaTeX stops ("Extra }, or forgotten $"). One
# command, defined in the preamble, cannot be split. The ballot crosses "✗" and "✘" (a failed
# check), which the monospaced font lacks, are set the same way.
CHECK_MARKS = {"\u2713": r"\seqrmtcheckmark{}", "\u2714": r"\seqrmtcheckmark{}",
               "\u2715": r"\seqrmtcrossmark{}", "\u2716": r"\seqrmtcrossmark{}",
               "\u2717": r"\seqrmtcrossmark{}", "\u2718": r"\seqrmtcrossmark{}"}
CHECK_MARK_PREAMBLE = (
    "\\providecommand{\\seqrmtcheckmark}{\\ensuremath{\\checkmark}}\n"
    "\\providecommand{\\seqrmtcrossmark}{\\ensuremath{\\times}}\n"
)


def single_command_check_marks() -> None:
    """Replace Sphinx's ``\\(\\checkmark\\)`` by one command (see ``CHECK_MARKS``)."""
    from sphinx.util import texescape

    known = {a for a, _ in texescape.tex_replacements}
    texescape.tex_replacements[:] = [(a, CHECK_MARKS.get(a, b)) for a, b in texescape.tex_replacements]
    texescape.tex_replacements += [(a, b) for a, b in CHECK_MARKS.items() if a not in known]
    texescape.init()


# ----------------------------------------------------------------------------- setup
def setup(app: Sphinx) -> dict:
    single_command_check_marks()
    app.add_post_transform(ExerciseRefsForLatex)
    app.add_post_transform(ProofTitlesAndLabelsForLatex)
    app.add_post_transform(ApiLayoutForLatex)
    app.add_post_transform(AppendicesForLatex)
    app.connect("builder-inited", latex_support_files)
    app.add_post_transform(BraceScriptsForLatex)
    app.add_post_transform(KeepPunctuationWithMath)
    app.connect("config-inited", feed_macros)
    app.connect("config-inited", set_version_and_licence)
    app.connect("builder-inited", disambiguate_years, priority=800)
    app.connect("builder-inited", copy_mathjax)
    app.add_js_file(PDF_FLAG)
    app.connect("build-finished", pdf_on_site)
    # html-page-context stops at the first handler that returns a template name, so run early
    app.connect("html-page-context", dedupe_inline_scripts, priority=1)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # the step `make all-pdf` runs: python seqrmt_site.py LATEX_DIR HTML_DIR
    if pathlib.Path(sys.argv[2]).is_dir():  # no HTML build yet: it will copy the PDF itself
        publish_pdf(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
