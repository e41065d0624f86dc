"""Fixtures of the conformance suite: planted adapters on the workers' path, campaign helpers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session", autouse=True)
def planted_adapters_importable():
    """Workers import ``planted_adapters`` (this directory) and the docs example by module name."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE)] + ([old] if old else []))
    yield
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


def planted(name: str) -> dict[str, str]:
    return {name: f"planted_adapters:{name}"}
