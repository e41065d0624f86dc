"""docs/ci.md: the CI jobs it shows run commands the CLI accepts, on files that exist."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import _parser
from conformance.known import load_known

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ci.md").read_text()


def _block(marker: str) -> str:
    return DOC.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]


INSTALLED = ("github-installed", "gitlab-installed")  # the installed-tool jobs, shown first
CHECKOUT = ("github-workflow", "gitlab-job")


def _commands(markers=INSTALLED + CHECKOUT) -> list[list[str]]:
    lines = []
    for marker in markers:
        lines += re.findall(r"(?:- run:|^\s*-)\s*((?:\.venv/bin/)?refgrad run .*)$", _block(marker), re.M)
    return [shlex.split(line) for line in lines]


def test_the_jobs_run_refgrad_commands_the_cli_accepts():
    commands = _commands()
    assert len(commands) == 4
    for argv in commands:
        args = _parser().parse_args(argv[1:])  # argparse exits 2 on an unknown flag
        assert args.known == ["builtin"] and load_known(args.known).entries
        assert args.junit_xml and args.command == "run"
        assert Path(args.junit_xml).parent == Path(args.out)  # the JUnit file is uploaded with the report


def test_the_installed_tool_workflow_comes_first_and_installs_before_it_runs():
    assert DOC.index("<!-- github-installed -->") < DOC.index("<!-- github-workflow -->")
    for marker in INSTALLED:
        block = _block(marker)
        assert "checkout" not in block and ".venv" not in block  # no checkout: the installed tool
        assert block.index("pip install") < block.index("refgrad run")
        assert re.search(r'"refgrad==[\d.]+"', block)  # a pinned refgrad
        (argv,) = _commands((marker,))
        assert argv[0] == "refgrad" and _installs_its_framework(block, argv)


def _installs_its_framework(block: str, argv: list[str]) -> bool:
    """The job installs the framework its --frameworks names."""
    framework = _parser().parse_args(argv[1:]).frameworks
    return re.search(rf"pip install [^\n]*\b{framework}==", block) is not None


@pytest.mark.slow  # three frameworks, one fuzz example each: minutes on 2 cores
def test_the_workflow_command_runs_and_writes_its_report_and_junit(tmp_path):
    (argv,) = _commands(("github-workflow",))
    argv = [sys.executable, "-m", "conformance", *argv[1:]]
    out = tmp_path / "latest"
    argv = [str(out) if a == "reports/latest" else a for a in argv]
    argv = [str(out / "junit.xml") if a == "reports/latest/junit.xml" else a for a in argv]
    run = subprocess.run(
        [*argv, "--max-examples", "1", "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=3000,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (out / "junit.xml").exists() and (out / "index.html").exists()
