"""Publishing and the weekly check: the GitHub workflows, validated offline, and their scripts.

* every workflow in ``.github/workflows/`` is valid against GitHub's workflow schema
  (``check-jsonschema --builtin-schema vendor.github-workflows``) and has no finding of
  ``zizmor --offline`` (both pinned in requirements.txt; the test fails on any finding);
* every action is pinned by a full commit SHA with its version in a comment, and no job gets
  more than it needs (``permissions: {}`` at the top, a few scopes per job);
* the Pages workflow publishes only after the README's test command (``bash .ci/run``), in a
  Debian container; the weekly workflow runs the pinned and the newest releases, checks links
  and opens an issue on failure;
* ``scripts/site_bundle.py`` assembles the site (student edition under ``student/``, course
  bundles under ``downloads/course/``) and refuses an incomplete build;
* ``scripts/latest_requirements.py`` unpins everything but the book's Sphinx stack;
* ``CITATION.cff`` is valid Citation File Format with authors, a release date and a year.

The two validators are skipped when not installed, except under ``CI=true``.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
IN_CI = os.environ.get("CI", "").lower() == "true"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tool(name: str) -> str:
    """The executable ``name`` next to this Python (the venv's bin/) or on PATH."""
    here = pathlib.Path(sys.executable).parent / name
    found = str(here) if here.is_file() else shutil.which(name)
    if found is None:
        reason = f"{name} is not installed (pip install -r requirements.txt)"
        if IN_CI:
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return found


def _load(path: pathlib.Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key "on" as True
    if True in data:
        data["on"] = data.pop(True)
    return data


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


# ----------------------------------------------------------------------------- offline validators
def test_workflows_exist():
    names = {p.name for p in WORKFLOWS}
    assert {"pages.yml", "weekly.yml"} <= names, names


def test_workflows_match_the_github_schema():
    exe = _tool("check-jsonschema")
    run = subprocess.run([exe, "--builtin-schema", "vendor.github-workflows", *map(str, WORKFLOWS)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_zizmor_finds_nothing():
    exe = _tool("zizmor")
    run = subprocess.run([exe, "--offline", "--no-progress", str(ROOT / ".github" / "workflows")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "No findings" in run.stdout + run.stderr, run.stdout + run.stderr


def test_citation_file_is_valid_cff():
    exe = _tool("check-jsonschema")
    run = subprocess.run([exe, "--builtin-schema", "vendor.citation-file-format", str(ROOT / "CITATION.cff")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


# ----------------------------------------------------------------------------- what they say
@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_pinned_by_commit_and_permissions_minimal(path):
    text = path.read_text(encoding="utf-8")
    data = _load(path)
    assert data.get("permissions") == {}, f"{path.name}: the workflow must start from `permissions: {{}}`"
    for name, job in data["jobs"].items():
        perms = job.get("permissions")
        assert isinstance(perms, dict) and 0 < len(perms) <= 2, f"{path.name}:{name}: permissions {perms}"
        assert all(v in ("read", "write") for v in perms.values()), perms
        assert perms.get("contents") != "write", f"{path.name}:{name} may not write the repository"
        assert job.get("timeout-minutes"), f"{path.name}:{name}: no timeout-minutes"
        for step in _steps(job):
            if "uses" in step:
                assert SHA_PIN.match(step["uses"]), f"{path.name}:{name}: {step['uses']} is not pinned by commit"
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step.get("with", {}).get("persist-credentials") is False, f"{path.name}:{name}"
    for line in text.splitlines():
        if re.match(r"^\s*-?\s*uses:", line):
            assert re.search(r"@[0-9a-f]{40} # v\d+(\.\d+)*$", line), f"{path.name}: no version comment: {line.strip()}"


def test_pages_publishes_after_the_readme_test_command():
    data = _load(ROOT / ".github" / "workflows" / "pages.yml")
    build, deploy = data["jobs"]["build"], data["jobs"]["deploy"]
    assert build["container"]["image"].startswith("python:3.11-bookworm"), "Debian: .ci/run uses apt-get"
    runs = [s.get("run", "") for s in _steps(build)]
    uses = [s.get("uses", "") for s in _steps(build)]
    ci = next(i for i, r in enumerate(runs) if r.strip() == "bash .ci/run")
    bundle = next(i for i, r in enumerate(runs) if "scripts/site_bundle.py" in r)
    upload = next(i for i, u in enumerate(uses) if u.startswith("actions/upload-pages-artifact@"))
    assert ci < bundle < upload, "test, then assemble, then upload"
    assert _steps(build)[upload]["with"]["path"] == runs[bundle].split()[-1]
    assert any("_build/course" in s.get("name", "") + s.get("run", "") for s in _steps(build)), \
        "a named step for the course bundles"
    assert deploy["needs"] == "build" and deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert _steps(deploy)[-1]["uses"].startswith("actions/deploy-pages@")
    assert "main" in data["on"]["push"]["branches"]


def test_weekly_runs_pinned_latest_links_lite_and_opens_an_issue():
    data = _load(ROOT / ".github" / "workflows" / "weekly.yml")
    assert data["on"]["schedule"][0]["cron"].split()[-1] == "1", "weekly, on Mondays"
    jobs = data["jobs"]
    assert any(s.get("run", "").strip() == "bash .ci/run" for s in _steps(jobs["pinned"]))
    latest = "\n".join(s.get("run", "") for s in _steps(jobs["latest"]))
    assert "latest_requirements.py" in latest and "pytest" in latest and "SEQRMT_SEED_OFFSET=1" in latest
    assert any(s.get("uses", "").startswith("lycheeverse/lychee-action@") for s in _steps(jobs["links"]))
    lite = "\n".join(s.get("run", "") for s in _steps(jobs["lite"]))
    assert "scripts/check_lite.py" in lite and jobs["lite"]["needs"] == "pinned"  # a real browser
    report = jobs["report"]
    assert set(report["needs"]) == {"pinned", "latest", "links", "lite"} and "failure()" in report["if"]
    assert report["permissions"] == {"issues": "write"}
    assert any(s.get("uses", "").startswith("peter-evans/create-issue-from-file@") for s in _steps(report))


# ----------------------------------------------------------------------------- the scripts
def test_latest_requirements_unpins_all_but_the_book_stack():
    latest = _script("latest_requirements")
    text = latest.unpinned((ROOT / "requirements.txt").read_text(encoding="utf-8"))
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert "jupyter-book==1.0.4.post1" in lines and "sphinx==7.4.7" in lines
    for name in ("numpy", "scipy", "cvxpy", "scikit-learn", "pytest", "nbval"):
        assert name in lines, f"{name} is still pinned"
    assert 'torch ; sys_platform == "linux" or sys_platform == "win32"' in lines
    assert "-e ." in lines and any(line.startswith("--extra-index-url") for line in lines)
    pinned = [line for line in lines if "==" in line.split(";")[0]]
    book = text.split("# --- execution")[0]
    assert all(line in book for line in pinned), f"pinned outside the book's section: {pinned}"


def _fake_build(tmp: pathlib.Path, student_pdf: bool = True) -> pathlib.Path:
    build = tmp / "_build"
    for folder in (build / "html", build / "student" / "html"):
        (folder / "book").mkdir(parents=True)
        (folder / "index.html").write_text("<html></html>")
        (folder / "book" / "intro.html").write_text("<html></html>")
        (folder / ".ipynb_checkpoints").mkdir()
        (folder / ".ipynb_checkpoints" / "x-checkpoint.ipynb").write_text("{}")
    (build / "html" / "book.pdf").write_bytes(b"%PDF reader")
    if student_pdf:
        (build / "student" / "html" / "book.pdf").write_bytes(b"%PDF student")
    return build


def test_site_bundle_lays_out_the_site(tmp_path):
    bundle = _script("site_bundle")
    build = _fake_build(tmp_path)
    (build / "course").mkdir()
    (build / "course" / "ch1-autograder.zip").write_bytes(b"zip")
    out = tmp_path / "site"
    assert bundle.bundle(build, out) == []
    assert (out / "book.pdf").read_bytes() == b"%PDF reader"
    assert (out / "student" / "book.pdf").read_bytes() == b"%PDF student"
    assert (out / "student" / "book" / "intro.html").is_file()
    assert (out / "downloads" / "course" / "ch1-autograder.zip").is_file()
    assert not list(out.rglob(".ipynb_checkpoints")), "checkpoint copies are not published"


def test_site_bundle_refuses_an_incomplete_build(tmp_path):
    bundle = _script("site_bundle")
    missing = bundle.bundle(_fake_build(tmp_path, student_pdf=False), tmp_path / "site")
    assert len(missing) == 1 and "student PDF" in missing[0]
    assert not (tmp_path / "site").exists()


def test_citation_file_names_authors_date_and_year():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    for where in (cff, cff["preferred-citation"]):
        assert where["authors"] and all(a.get("name") or a.get("family-names") for a in where["authors"])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(where["date-released"]))
    assert cff["preferred-citation"]["year"] == int(str(cff["date-released"])[:4])
    assert cff["url"] == config["html"]["baseurl"], "the citation names the published book"


def test_one_address_for_the_student_site():
    """The student notebooks link to <baseurl>student/ (scripts/editions.py), the student build
    says so in its html_baseurl (_ext/seqrmt_editions.py), and the site bundle publishes it there."""
    bundle = _script("site_bundle")
    spec = importlib.util.spec_from_file_location("editions", ROOT / "scripts" / "editions.py")
    editions = importlib.util.module_from_spec(spec)
    sys.modules["editions"] = editions  # dataclasses look their module up
    spec.loader.exec_module(editions)
    spec = importlib.util.spec_from_file_location("seqrmt_editions", ROOT / "_ext" / "seqrmt_editions.py")
    ext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ext)
    assert editions.SITE_PATHS == {"reader": "", "student": ext.STUDENT_SITE}
    assert ext.STUDENT_SITE == bundle.STUDENT_PATH + "/"
