"""Test configuration shared by every suite: Hypothesis profiles and framework markers.

Profiles (select with ``HYPOTHESIS_PROFILE``): ``ci`` (the default: derandomised and small, so
CI is reproducible and fast on 2 cores), ``dev`` (random, more examples), ``fuzz`` (long).
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=25,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "fuzz", max_examples=2000, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_FRAMEWORK_MODULES = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


def pytest_collection_modifyitems(config, items):
    """Skip tests marked with a framework that is not installed, and ``gpu`` tests without a GPU."""
    missing = {
        marker: pytest.mark.skip(reason=f"{module} is not installed (pip install refgrad[{marker}])")
        for marker, module in _FRAMEWORK_MODULES.items()
        if importlib.util.find_spec(module) is None
    }
    gpu_skip = None
    if any("gpu" in item.keywords for item in items):
        from reference.backend import cupy_available

        if not cupy_available():
            gpu_skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU; none on this machine")
    for item in items:
        for marker, skip in missing.items():
            if marker in item.keywords:
                item.add_marker(skip)
        if gpu_skip is not None and "gpu" in item.keywords:
            item.add_marker(gpu_skip)
