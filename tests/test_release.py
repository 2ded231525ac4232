"""One version number, read everywhere from one place; the licences named where they must be.

The version is written once, as ``seqrmt.__version__`` in ``lib/seqrmt/__init__.py``:
``pyproject.toml`` reads it (setuptools dynamic version), ``_ext/seqrmt_site.py`` makes it the
book's ``release`` and puts it in every page's footer. ``CITATION.cff`` and the changelog
repeat it for their readers; these tests fail when a copy disagrees.
"""

from __future__ import annotations

import os
import pathlib
import re
import tomllib

import pytest
import yaml

import seqrmt

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = pathlib.Path(os.environ.get("SEQRMT_SITE", ROOT / "_build" / "html"))


def _source_version() -> str:
    text = (ROOT / "lib" / "seqrmt" / "__init__.py").read_text()
    return re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.M).group(1)


def test_version_is_written_once_and_imported():
    assert re.fullmatch(r"\d+\.\d+\.\d+", _source_version())
    assert seqrmt.__version__ == _source_version()


def test_pyproject_reads_the_version_from_the_library():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"], "pyproject.toml must not repeat the version"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "seqrmt.__version__"}


def test_citation_file_agrees():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["version"] == _source_version()
    assert cff["preferred-citation"]["version"] == _source_version()
    assert set(cff["license"]) == {"CC-BY-4.0", "MIT"}
    assert cff["title"] == yaml.safe_load((ROOT / "_config.yml").read_text())["title"]


def test_changelog_names_the_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, re.M)
    assert releases and releases[0] == _source_version(), (
        f"the newest release heading of CHANGELOG.md is {releases[:1]}, the library's version "
        f"is {_source_version()}"
    )


def test_licence_files_and_footer():
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    text_licence = (ROOT / "LICENSE-TEXT").read_text()
    assert "Attribution 4.0 International" in text_licence and "CC BY 4.0" in text_licence
    footer = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "MIT" in footer and "{version}" in footer


@pytest.mark.needs_build
def test_built_site_footer_shows_version_and_licences():
    """Every page of the built site names the version and both licences (skipped without a build)."""
    pages = sorted(SITE.glob("**/*.html")) if SITE.is_dir() else []
    # lite/ is the JupyterLite app (its own pages, not the book's): no book footer there
    pages = [p for p in pages if "_static" not in p.parts and "lite" not in p.parts
             and p.name not in ("genindex.html", "search.html")]
    if not pages:
        pytest.skip(f"no built site at {SITE}")
    version = _source_version()
    bad = [str(p.relative_to(SITE)) for p in pages
           if p.stat().st_size > 2000 and not all(s in p.read_text(errors="replace")
                                                   for s in (f"Version {version}.", "CC BY 4.0", "MIT licence"))]
    assert not bad, f"{len(bad)} pages without the version and licence footer, e.g. {bad[:5]}"
