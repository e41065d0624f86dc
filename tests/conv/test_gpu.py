"""The conv suite on CuPy: every path, forward/backward/double backward, against NumPy float64.

Runs only where CuPy imports and sees a CUDA device (marker ``gpu``); skipped with that reason
elsewhere. Kernels take their namespace from their inputs, so the same code runs on both.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from reference.conv import (
    applicable_algorithms,
    convolution,
    convolution_backward,
    convolution_double_backward,
)
from tests.conv.checks import assert_close_to_bound
from tests.conv.strategies import conv_cases

pytestmark = pytest.mark.gpu


@settings(max_examples=40)
@given(conv_cases())
def test_cupy_matches_numpy_on_every_path(case):
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    x, w, b = case.arrays(0)
    gy = np.random.default_rng(1).standard_normal(convolution(x, w, None, *case.params).shape)
    on_gpu = [cupy.asarray(a) for a in (x, w, gy)]
    mag_f = convolution(np.abs(x), np.abs(w), None, *case.params) + 1
    mag_b = convolution_backward(np.abs(gy), np.abs(x), np.abs(w), None, *case.params, (True, True, False))
    paths = applicable_algorithms(case.input_shape, case.weight_shape, *case.params)
    for name in paths["forward"]:
        y = convolution(on_gpu[0], on_gpu[1], None, *case.params, algorithm=name)
        assert isinstance(y, cupy.ndarray)
        assert_close_to_bound(
            "forward", y.get(), convolution(x, w, None, *case.params), mag_f, 1e-12, f"cupy {name} {case}"
        )
    for role, idx in (("grad_input", 0), ("grad_weight", 1)):
        mask = (idx == 0, idx == 1, False)
        expected = convolution_backward(gy, x, w, None, *case.params, mask)[idx]
        for name in paths[role]:
            got = convolution_backward(
                on_gpu[2], on_gpu[0], on_gpu[1], None, *case.params, mask, algorithm=name
            )[idx]
            assert_close_to_bound(role, got.get(), expected, mag_b[idx] + 1, 1e-12, f"cupy {name} {case}")
    gg = convolution_double_backward(
        on_gpu[0], on_gpu[1], None, on_gpu[2], on_gpu[1], on_gpu[0], *case.params, (True, True, True)
    )
    ref = convolution_double_backward(x, w, None, gy, w, x, *case.params, (True, True, True))
    for got, exp in zip(gg, ref):
        scale = np.abs(exp).max(initial=0.0) + 1  # (initial: exp is empty where a size is 0)
        np.testing.assert_allclose(got.get(), exp, rtol=1e-10, atol=1e-10 * scale)


def test_backend_env_var_selects_cupy(monkeypatch):
    from reference import backend

    monkeypatch.setenv("REFGRAD_BACKEND", "cupy")
    assert backend.default_namespace().__name__ == "cupy"
    assert type(backend.asarray([1.0], device="cuda")).__module__.startswith("cupy")
