"""Fixtures of the fault-injection suite: planted adapters importable, and a tally of what it did.

Every test adds to ``TALLY`` (faults injected, runs resumed, results compared, results lost); the
totals are printed at the end of the session (and written to ``$REFGRAD_FAULT_TALLY`` if set).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLANTED = ROOT / "tests" / "conformance"
TALLY: Counter = Counter()


@pytest.fixture(scope="session", autouse=True)
def planted_adapters_importable():
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(PLANTED)] + ([old] if old else []))
    sys.path.insert(0, str(PLANTED))
    yield
    sys.path.remove(str(PLANTED))
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


@pytest.fixture
def tally():
    return TALLY


def pytest_terminal_summary(terminalreporter):
    if not TALLY:
        return
    keys = ("faults injected", "runs resumed", "results compared", "results lost")
    line = ", ".join(f"{k}: {TALLY.get(k, 0)}" for k in keys)
    terminalreporter.write_line(f"fault-injection tally: {line}")
    if os.environ.get("REFGRAD_FAULT_TALLY"):
        Path(os.environ["REFGRAD_FAULT_TALLY"]).write_text(json.dumps(dict(TALLY), indent=1))


def env() -> dict:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(PLANTED), os.environ.get("PYTHONPATH", "")]),
    }


def cli(*args) -> list[str]:
    return [sys.executable, "-m", "conformance", *map(str, args)]
