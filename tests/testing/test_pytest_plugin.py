"""The pytest plugin's ``--refgrad-report DIR`` keeps ``conformance run``'s ownership rules (issue #36):
an earlier session's results are moved to ``previous/``, never replaced; a directory held by another
run or not usable is a pytest usage error (exit 4, no INTERNALERROR); under pytest-xdist every
worker's results reach the one report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.outdir import OutputDir

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("torch")

USER_TESTS = textwrap.dedent(
    """
    import pytest, torch
    from refgrad.testing import assert_conforms

    @pytest.mark.parametrize("k", range({n}))
    def test_scaled(k):
        assert_conforms(lambda x: x * (k + 1), lambda x: x * (k + 1), torch.linspace(-2, 2, 9),
                        checks=("forward",), name=f"scaled{{k}}")
    """
)


def _pytest(tmp_path, *args, n=2):
    test_file = tmp_path / "test_user.py"
    test_file.write_text(USER_TESTS.format(n=n))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's plugin, not an installed one
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )


def _records(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "results.jsonl").read_text().splitlines()]


def test_an_earlier_sessions_results_are_moved_to_previous_not_replaced(tmp_path):
    out = tmp_path / "rg"
    first = _pytest(tmp_path, "--refgrad-report", out, n=2)
    assert first.returncode == 0, first.stdout + first.stderr
    earlier = (out / "results.jsonl").read_text()
    assert len(earlier.splitlines()) == 2
    second = _pytest(tmp_path, "--refgrad-report", out, n=3)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(_records(out)) == 3
    kept = list((out / "previous").glob("*/results.jsonl"))
    assert len(kept) == 1 and kept[0].read_text() == earlier
    assert (kept[0].parent / "report.json").is_file()
    assert f"the earlier results there were moved to {kept[0].parent}" in second.stdout


def test_a_report_directory_held_by_another_run_is_a_usage_error(tmp_path):
    out = tmp_path / "rg"
    holder = OutputDir.lock_only(out)  # as a `conformance run --out rg` in progress would
    try:
        run = _pytest(tmp_path, "--refgrad-report", out)
    finally:
        holder.release()
    assert run.returncode == 4, run.stdout + run.stderr  # pytest's usage error
    assert "INTERNALERROR" not in run.stdout + run.stderr
    assert f"--refgrad-report: {str(out)!r} is in use by another run (pid {os.getpid()}" in run.stderr
    assert not (out / "results.jsonl").exists()


@pytest.mark.parametrize("kind", ["a file", "under a file"])
def test_an_unusable_report_directory_is_a_usage_error_not_internalerror(tmp_path, kind):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    out = blocker if kind == "a file" else blocker / "rg"
    run = _pytest(tmp_path, "--refgrad-report", out)
    assert run.returncode == 4, run.stdout + run.stderr
    assert "INTERNALERROR" not in run.stdout + run.stderr
    assert "ERROR: --refgrad-report:" in run.stderr and "passed" not in run.stdout  # nothing ran
    assert blocker.read_text() == "not a directory"


def test_under_xdist_every_workers_results_reach_the_one_report(tmp_path):
    pytest.importorskip("xdist")
    out = tmp_path / "rg"
    run = _pytest(tmp_path, "-n", 2, "--refgrad-report", out, n=4)
    assert run.returncode == 0, run.stdout + run.stderr
    records = _records(out)
    assert sorted(r["case"]["op"] for r in records) == ["scaled0", "scaled1", "scaled2", "scaled3"]
    assert {r["verdict"] for r in records} == {"pass"}
    assert json.loads((out / "report.json").read_text())["totals"]["results"] == 4
    assert "refgrad: 4 assert_conforms results" in run.stdout
