"""Fixtures of the report tests: one small real campaign with planted bugs, a crash and an unsupported case."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

PLANTED_DIRS = [
    str(Path(__file__).resolve().parent),
    str(Path(__file__).resolve().parents[1] / "conformance"),
]
FRAMEWORKS = {
    "torch": "conformance.adapters.torch_adapter:TorchAdapter",
    "torch-dropped-group": "planted_adapters:DroppedGroup",
    "torch-unflipped-dgrad": "planted_adapters:UnflippedInputGradient",
    "torch-aborts": "planted_adapters:AbortsOnCue",
    "torch-strict-and-lenient": "planted_report_adapters:StrictAndLenient",
}
CASES = [
    {  # groups=2: DroppedGroup departs in forward and vjp, UnflippedInputGradient in vjp
        "id": "grouped-3x3",
        "op": "conv",
        "params": {"rank": 2, "padding": 1, "groups": 2},
        "shapes": {"input": [1, 4, 5, 5], "weight": [4, 2, 3, 3]},
        "checks": ["forward", "vjp"],
    },
    {  # ungrouped 1-d: only UnflippedInputGradient departs (vjp)
        "id": "plain-1d",
        "op": "conv",
        "params": {"rank": 1, "padding": 0},
        "shapes": {"input": [2, 3, 7], "weight": [2, 3, 3]},
        "dtype": "float32",
        "checks": ["forward", "vjp"],
    },
    {  # AbortsOnCue aborts on ids starting with 'abort': a crash
        "id": "abort-here",
        "op": "conv",
        "params": {"rank": 2, "padding": 0},
        "shapes": {"input": [1, 1, 3, 3], "weight": [1, 1, 2, 2]},
        "checks": ["forward"],
    },
    {  # stride 2: valid, but StrictAndLenient raises (error_mismatch)
        "id": "strided",
        "op": "conv",
        "params": {"rank": 2, "padding": 0, "stride": 2},
        "shapes": {"input": [1, 2, 5, 5], "weight": [2, 2, 3, 3]},
        "checks": ["forward"],
    },
    {  # groups=3 does not divide 4 channels: every framework must reject it; StrictAndLenient accepts
        "id": "groups-do-not-divide",
        "op": "conv",
        "params": {"rank": 2, "padding": 0, "groups": 3},
        "shapes": {"input": [1, 4, 5, 5], "weight": [3, 1, 3, 3]},
        "checks": ["error"],
    },
    {  # torch has no channels-last memory format for rank 1: unsupported, with its reason
        "id": "channels-last-1d",
        "op": "conv",
        "params": {"rank": 1, "padding": 0, "layout": "channels_last"},
        "shapes": {"input": [1, 2, 4], "weight": [2, 2, 2]},
        "checks": ["forward"],
    },
]


@pytest.fixture(scope="session")
def planted_path():
    """Workers (PYTHONPATH) and the parent (sys.path, for reproducer generation) import the planted adapters."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(PLANTED_DIRS + ([old] if old else []))
    sys.path[:0] = PLANTED_DIRS
    yield
    for d in PLANTED_DIRS:
        sys.path.remove(d)
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="session")
def campaign_dir(tmp_path_factory, planted_path):
    """A real campaign (five torch workers, six cases) and its report; returns the output directory."""
    pytest.importorskip("torch")
    from conformance.case import Case
    from conformance.report import build_report
    from conformance.runner import Campaign

    out = tmp_path_factory.mktemp("campaign")
    cases = [Case.from_dict(c) for c in CASES]
    with Campaign(out, FRAMEWORKS, timeout=120) as camp:
        camp.start()
        camp.run_cases(cases, phase="curated")
        info = camp.frameworks_info()
    build_report(
        out,
        info,
        "conformance run (test campaign)",
        run={"device": "cpu", "precision": "highest", "seed": 0, "max_examples": 0},
    )
    return out


@pytest.fixture()
def report(campaign_dir):
    return json.loads((campaign_dir / "report.json").read_text())
