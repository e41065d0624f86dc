"""refgrad as an installed tool: the wheel, a fresh virtualenv, no checkout on the path.

The wheel is built from the checkout's files (``git ls-files``: what CI would check out) with this
environment's pip and setuptools (``--no-build-isolation``: no package index needed) and installed
into a fresh virtualenv with the virtualenv's own pip. The frameworks are not reinstalled there (GBs):
a ``.pth`` line puts this environment's site-packages after the new one's, as a directory only (its
own ``.pth`` files, an editable refgrad among them, are not run), so ``conformance``, ``reference``
and ``refgrad`` come from the wheel and torch from here. Every command runs from a temporary
directory outside the checkout, without ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

import refgrad

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "refgrad" / "cases"
RUN = ["run", "--known", "--ops", "conv", "--max-examples", "5", "--frameworks", "torch", "--quiet"]
# pip's own notices that are not about this package (an index it cannot reach is not a packaging fault)
WARNING = re.compile(r"warning|deprecat", re.I)


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("PIP_")}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _run(argv, cwd, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout
    )


def _checkout_copy(dest: Path) -> Path:
    """The checkout's files as CI checks them out (tracked and new, not ignored), nothing built."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def _site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python*/site-packages")
    return found


def _frameworks_from_here(venv: Path) -> None:
    """This environment's site-packages (torch, numpy, ...) on the new one's path, after its own."""
    paths = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (_site_packages(venv) / "refgrad-test-frameworks.pth").write_text("\n".join(paths) + "\n")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the wheel, pip's output while building it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = _checkout_copy(tmp / "src")
    pip = [sys.executable, "-m", "pip", "--isolated", "wheel", "--no-deps", "--no-build-isolation"]
    build = _run([*pip, src, "-w", tmp / "dist"], cwd=tmp)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = (tmp / "dist").glob("refgrad-*.whl")
    return wheel, build.stdout + build.stderr


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory):
    """(a fresh virtualenv with the wheel installed by its own pip, pip's output, a directory outside
    any checkout to run in)."""
    tmp = tmp_path_factory.mktemp("venv")
    venv = tmp / "venv"
    made = _run([sys.executable, "-m", "venv", venv], cwd=tmp)
    assert made.returncode == 0, made.stderr
    install = _run(
        [venv / "bin" / "python", "-m", "pip", "--isolated", "install", "--no-deps", "--no-index", built[0]],
        cwd=tmp,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    _frameworks_from_here(venv)
    (tmp / "work").mkdir()
    return venv, install.stdout + install.stderr, tmp / "work"


def test_the_wheel_carries_the_cases_and_known_departures_and_no_tests_or_reports(built):
    names = zipfile.ZipFile(built[0]).namelist()
    shipped = {
        f"refgrad/cases/{p.relative_to(CASES)}"
        for p in CASES.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }  # (bytecode a test run left)
    assert "refgrad/cases/known_departures.toml" in shipped and len(shipped) > 10
    assert shipped <= set(names), sorted(shipped - set(names))
    assert any(n.startswith("refgrad/cases/found/") for n in names)
    assert any(n.startswith("refgrad/cases/programs/") for n in names)
    tops = {n.split("/")[0] for n in names}
    assert tops == {"conformance", "reference", "refgrad", f"refgrad-{refgrad.__version__}.dist-info"}
    assert not [n for n in names if n.startswith(("tests/", "reports/", "benchmarks/", "docs/", "scripts/"))]


def test_the_wheels_metadata_is_what_a_registry_accepts(built):
    wheel = zipfile.ZipFile(built[0])
    info = f"refgrad-{refgrad.__version__}.dist-info"
    meta = wheel.read(f"{info}/METADATA").decode()
    head = meta.split("\n\n", 1)[0]
    assert re.search(r"^License-Expression: Apache-2.0$", head, re.M)
    assert not re.search(r"^License: ", head, re.M)  # the deprecated free-text field
    assert re.search(r"^Requires-Python: >=3\.10$", head, re.M)
    assert re.search(r"^Version: " + re.escape(refgrad.__version__) + "$", head, re.M)
    assert len(re.findall(r"^Classifier: ", head, re.M)) >= 5
    assert re.search(r"^Project-URL: Source, https://github\.com/refgrad/refgrad$", head, re.M)
    extras = set(re.findall(r"^Provides-Extra: (\S+)$", head, re.M))
    assert {"torch", "tensorflow", "jax", "cupy", "ray", "bisect", "test", "all"} <= extras
    assert re.search(r"^Requires-Dist: uv>=[\d.]+; extra == \"bisect\"$", head, re.M)
    scripts = wheel.read(f"{info}/entry_points.txt").decode()
    assert "refgrad = conformance.cli:main" in scripts and "conformance = conformance.cli:main" in scripts


def test_building_and_installing_print_no_packaging_warning(built, installed):
    for output in (built[1], installed[1]):
        assert not [line for line in output.splitlines() if WARNING.search(line)], output


def test_the_installed_refgrad_runs_from_its_own_files_outside_any_checkout(installed):
    venv, _, work = installed
    version = _run([venv / "bin" / "refgrad", "--version"], cwd=work)
    assert (version.returncode, version.stdout.strip()) == (0, f"refgrad {refgrad.__version__}")
    alias = _run([venv / "bin" / "conformance", "--version"], cwd=work)
    assert alias.stdout == version.stdout
    where = _run(
        [
            venv / "bin" / "python",
            "-c",
            "import json, conformance, reference, refgrad; from conformance import known, shipped; "
            "print(json.dumps([conformance.__file__, reference.__file__, refgrad.__file__, "
            "str(shipped.cases_dir()), str(known.SHIPPED)]))",
        ],
        cwd=work,
    )
    site = _site_packages(venv).resolve()
    for path in json.loads(where.stdout):
        assert Path(path).resolve().is_relative_to(site), (path, where.stderr)
    assert (site / "refgrad" / "cases" / "known_departures.toml").is_file()


def _verdicts(out: Path) -> set:
    return {
        (r["case_id"], r["framework"], r["check"], r.get("dtype"), r["verdict"])
        for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }


@pytest.mark.torch
def test_an_installed_refgrad_gives_a_checkouts_verdicts(installed, tmp_path):
    venv, _, work = installed
    out = work / "out"
    run = _run([venv / "bin" / "refgrad", *RUN, "--out", out, "--junit-xml", out / "junit.xml"], cwd=work)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((out / "report.json").read_text())
    (known,) = report["known"]["files"]
    site = _site_packages(venv).resolve()
    assert known["file"] == "builtin" and Path(known["path"]).resolve().is_relative_to(site)
    assert known["refgrad"] == refgrad.__version__ and known["digest"].startswith("sha256:")
    inputs = report["environment"]["inputs"]
    assert inputs["cases"] == "builtin" and Path(inputs["path"]).resolve().is_relative_to(site)
    assert inputs["case_files"] == sorted(str(p.relative_to(CASES)) for p in CASES.rglob("*.json"))
    assert Path(inputs["found_dir"]) == out / "found"  # beside the report, not in the package
    suite = ElementTree.parse(out / "junit.xml").getroot()
    cases = suite.iter("testcase")
    assert sum(1 for _ in cases) == report["totals"]["results"] > 100
    # the same arguments from the checkout
    here = tmp_path / "checkout"
    from_checkout = _run([sys.executable, "-m", "conformance", *RUN, "--out", here], cwd=ROOT)
    assert from_checkout.returncode == 0, from_checkout.stdout + from_checkout.stderr
    assert _verdicts(out) == _verdicts(here)
    assert json.loads((here / "report.json").read_text())["totals"] == report["totals"]


def test_an_editable_install_finds_the_cases_in_its_source_tree(tmp_path):
    src = _checkout_copy(tmp_path / "src")
    venv = tmp_path / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path).returncode == 0
    _frameworks_from_here(venv)  # this environment's pip and setuptools build the editable install
    install = _run(
        [venv / "bin" / "python", "-m", "pip", "--isolated", "install", "--no-deps", "--no-build-isolation"]
        + ["--no-index", "-e", src],
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    (tmp_path / "work").mkdir()
    where = _run(
        [venv / "bin" / "python", "-c", "from conformance import known, shipped; print(shipped.cases_dir())"],
        cwd=tmp_path / "work",
    )
    assert Path(where.stdout.strip()) == src / "refgrad" / "cases", where.stderr
    version = _run([venv / "bin" / "refgrad", "--version"], cwd=tmp_path / "work")
    assert version.stdout.strip() == f"refgrad {refgrad.__version__}", version.stderr
