#!/usr/bin/env python
"""Assemble what GitHub Pages publishes (``.github/workflows/pages.yml``) from the builds.

Usage, after ``bash .ci/run`` (standard library only: the CI's virtual environment is gone)::

    python3 scripts/site_bundle.py _build/site

Writes::

    _build/site/                  the website (_build/html), with book.pdf, the whole book
    _build/site/student/          the student edition (_build/student/html), with its book.pdf
    _build/site/downloads/course/ the course bundles (_build/course/), when they have been built

The address of the student edition, ``<html.baseurl>student/``, is the one the student
notebooks link to (``scripts/editions.py``). Hidden files and folders (``.ipynb_checkpoints``,
``.buildinfo``) are left out. The command fails, naming what is missing, when the website, its
PDF, the student edition or the student PDF has not been built: the site is published whole
or not at all.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
STUDENT_PATH = "student"          # the student edition's folder on the site
COURSE_PATH = "downloads/course"  # the course bundles' folder on the site


def _hidden(folder: str, names: list[str]) -> list[str]:
    """shutil.copytree ignore function: names that start with a dot."""
    return [n for n in names if n.startswith(".")]


def bundle(build: pathlib.Path, out: pathlib.Path) -> list[str]:
    """Copy the builds under ``build`` into ``out``; return what is missing (nothing on success)."""
    html, student, course = build / "html", build / "student" / "html", build / "course"
    required = {
        html / "index.html": "the website (jupyter-book build .)",
        html / "book.pdf": "the whole-book PDF (jupyter-book build . --builder pdflatex, then the HTML build)",
        student / "index.html": "the student edition (python scripts/editions.py student)",
        student / "book.pdf": "the student PDF (python scripts/editions.py student --pdf)",
    }
    missing = [f"{path}: {what}" for path, what in required.items() if not path.is_file()]
    if missing:
        return missing
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(html, out, ignore=_hidden)
    if (out / STUDENT_PATH).exists():
        return [f"{html / STUDENT_PATH} exists in the website: it would clash with the student edition"]
    shutil.copytree(student, out / STUDENT_PATH, ignore=_hidden)
    if course.is_dir():
        shutil.copytree(course, out / COURSE_PATH, ignore=_hidden)
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=pathlib.Path, help="the folder to write (replaced)")
    ap.add_argument("--build", type=pathlib.Path, default=ROOT / "_build", help="the build folder")
    args = ap.parse_args(argv)
    missing = bundle(args.build, args.out)
    if missing:
        print("site_bundle: not published, missing:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 1
    files = [f for f in args.out.rglob("*") if f.is_file()]
    size = sum(f.stat().st_size for f in files)
    course = "with" if (args.out / COURSE_PATH).is_dir() else "without"
    print(f"site_bundle: {len(files)} files, {size / 1e6:.1f} MB in {args.out} "
          f"(student edition in {STUDENT_PATH}/, {course} course bundles)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
