"""The GPU check's rehearsal (issue #35): scripts/gpu_check.sh runs every step on this CPU machine.

A device loan is about fifteen minutes, so the script must not fail there on a typo. Here it runs
with ``--rehearse``: the ``gpu`` tests skip for want of a device, the two campaigns run on the CPU
under a small budget, and every file the device run brings back is written and readable.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = {"versions.txt", "gpu-tests.log", "gpu-tests.xml", "highest.tar.gz", "default.tar.gz", "summary.txt",
         "gpu_check.log"}


@pytest.mark.torch
def test_rehearsal_writes_every_file_the_device_run_brings_back(tmp_path):
    pytest.importorskip("torch", reason="the rehearsal's campaigns run torch on the CPU")
    env = {**os.environ, "REFGRAD_PYTHON": sys.executable, "GPU_CHECK_OPS": "gelu,sum",
           "GPU_CHECK_CAMPAIGN_S": "60", "GPU_CHECK_TESTS_S": "120"}
    env.pop("OUT", None)
    proc = subprocess.run(["bash", str(ROOT / "scripts/gpu_check.sh"), "--rehearse", str(tmp_path / "out")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp_path / "out"
    assert {p.name for p in out.iterdir()} == FILES
    # at most eight files come back from the device, none deeper than two folders: these are flat
    assert len(FILES) <= 8
    log = (out / "gpu_check.log").read_text()
    assert "skipped for want of a device" in log
    assert "torch:" in (out / "versions.txt").read_text()
    for precision in ("highest", "default"):
        with tarfile.open(out / f"{precision}.tar.gz") as tar:
            names = set(tar.getnames())
        for part in ("conv", "records"):  # the conv fuzzer and the records, each under its own budget
            assert {f"{precision}/{part}/{f}" for f in ("results.jsonl", "report.json", "index.html")} <= names
    summary = (out / "summary.txt").read_text()
    # every part is summarised after the known file, with its outcome and the frameworks' settings
    for part in ("highest/conv", "highest/records", "default/conv", "default/records"):
        assert f"== {part}: " in summary, summary
    assert summary.count("outcome: ") == 4 and '"precision": "default"' in summary, summary


def test_without_a_device_and_without_rehearse_nothing_is_claimed(tmp_path):
    """On a machine with no CUDA device a real run exits 2 saying so, rather than reporting CPU results."""
    env = {**os.environ, "REFGRAD_PYTHON": sys.executable}
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has a CUDA device: the real run would start")
    except ImportError:
        pass
    proc = subprocess.run(["bash", str(ROOT / "scripts/gpu_check.sh"), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "no CUDA device here" in proc.stderr
