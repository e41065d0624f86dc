"""The load benchmark's smoke test: every result recorded, the driver's peak memory flat."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.faults.conftest import ROOT, env

pytestmark = pytest.mark.torch


def test_load_benchmark_quick(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "load.json"
    proc = subprocess.run(
        # 1,500 results: enough for the memory judgement (--quick's 150 skip it; benchmarks/ smoke test)
        [sys.executable, str(ROOT / "benchmarks" / "load.py"), "--results", "1500", "--json", str(out)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["lines"] == 1500 and data["verdicts"].get("pass") == 1500
