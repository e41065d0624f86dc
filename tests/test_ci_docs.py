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

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ci.md").read_text()


def _block(marker: str) -> str:
    return DOC.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]


def _commands() -> list[list[str]]:
    lines = []
    for marker in ("github-workflow", "gitlab-job"):
        lines += re.findall(r"(?:- run:|^\s*-)\s*(\.venv/bin/conformance .*)$", _block(marker), re.M)
    return [shlex.split(line) for line in lines]


def test_the_jobs_run_conformance_commands_the_cli_accepts():
    commands = _commands()
    assert len(commands) == 2
    for argv in commands:
        args = _parser().parse_args(argv[1:])  # argparse exits 2 on an unknown flag
        assert args.known and (ROOT / args.known).exists()
        assert args.junit_xml and args.command == "run"


@pytest.mark.slow  # three frameworks, one fuzz example each: minutes on 2 cores
def test_the_workflow_command_runs_and_writes_its_report_and_junit(tmp_path):
    argv = _commands()[0]
    argv = [sys.executable, "-m", "conformance", *argv[1:]]
    out = tmp_path / "latest"
    argv = [str(out) if a == "reports/latest" else a for a in argv]
    argv = [str(out / "junit.xml") if a == "reports/latest/junit.xml" else a for a in argv]
    run = subprocess.run(
        [*argv, "--max-examples", "1", "--found-dir", str(tmp_path / "found"), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=3000,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (out / "junit.xml").exists() and (out / "index.html").exists()
