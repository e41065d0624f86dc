"""Every benchmark runs to the end with ``--quick``, so a benchmark that breaks fails CI.

Each ``benchmarks/*.py`` (helpers starting with ``_`` excluded; a new script is picked up by the
glob) runs as a subprocess, the way a user runs it. No timing is asserted: ``--quick`` is a smoke
test with tiny sizes and one round, whose figures mean nothing on a shared machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if not p.name.startswith("_"))

# What a run must print: the figure it exists for (a benchmark that prints only times has rotted).
EXPECTED = {
    "conv.py": "GEMM floor",
    "autograd.py": "ratio reference/torch",
    "vmap.py": "reference / torch",
    "load.py": "results.jsonl lines",
    "scaling.py": "reference/torch",
    "campaign.py": "reference share",
    "ray_scaling.py": "ratio to local",
    "constructed_batch.py": "ratio 2/1",
}


def _param(path):
    marks = (
        [pytest.mark.skipif(_no_ray(), reason="ray is not installed (pip install refgrad[ray])")]
        if path.name == "ray_scaling.py"
        else []
    )
    return pytest.param(path, id=path.name, marks=marks)


def _no_ray() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is None


def test_the_glob_finds_the_benchmarks():
    assert {"conv.py", "autograd.py", "vmap.py", "load.py", "scaling.py"} <= {p.name for p in SCRIPTS}


@pytest.mark.parametrize("script", [_param(p) for p in SCRIPTS])
def test_quick_run_completes(script, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=tmp_path,  # a benchmark must not depend on (or write into) the current directory
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (
        f"{script.name} --quick exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    want = EXPECTED.get(script.name)
    if want is not None:
        assert want in proc.stdout, f"{script.name} --quick did not print {want!r}:\n{proc.stdout}"
