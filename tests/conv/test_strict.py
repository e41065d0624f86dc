"""The conv reference on the strict namespace: every algorithm path, forward, backward and
double backward, bit for bit against NumPy.

The strict namespace (:mod:`reference.testing.strict_xp`) refuses NumPy calls on its arrays the
way CuPy does (and stricter), so a conv kernel that computes with ``np.`` instead of its inputs'
namespace fails here, on CPU; ``tests/conv/test_gpu.py`` runs the same paths on CuPy.
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
from reference.testing import strict_xp
from tests.conv.strategies import conv_cases


def _same(got, expected, what):
    assert type(got) is strict_xp.StrictArray, f"{what}: the result left the strict namespace"
    host = got.get()
    assert host.dtype == expected.dtype and host.shape == expected.shape, what
    np.testing.assert_array_equal(host, expected, err_msg=what)


@settings(max_examples=15)
@given(conv_cases())
def test_strict_matches_numpy_on_every_path(case):
    x, w, b = case.arrays(0)
    gy = np.random.default_rng(1).standard_normal(convolution(x, w, None, *case.params).shape)
    dev = [strict_xp.asarray(a) for a in (x, w, gy)]
    db = None if b is None else strict_xp.asarray(b)
    paths = applicable_algorithms(case.input_shape, case.weight_shape, *case.params)
    for name in paths["forward"]:
        _same(
            convolution(dev[0], dev[1], db, *case.params, algorithm=name),
            convolution(x, w, b, *case.params, algorithm=name),
            f"forward {name} {case}",
        )
    for role, idx in (("grad_input", 0), ("grad_weight", 1)):
        mask = (idx == 0, idx == 1, b is not None)
        for name in paths[role]:
            got = convolution_backward(dev[2], dev[0], dev[1], None, *case.params, mask, algorithm=name)
            exp = convolution_backward(gy, x, w, None, *case.params, mask, algorithm=name)
            _same(got[idx], exp[idx], f"{role} {name} {case}")
    got = convolution_double_backward(
        dev[0], dev[1], None, dev[2], dev[1], dev[0], *case.params, (True, True, True)
    )
    exp = convolution_double_backward(x, w, None, gy, w, x, *case.params, (True, True, True))
    for k, (g, e) in enumerate(zip(got, exp)):
        if e is not None:
            _same(g, e, f"double backward [{k}] {case}")


def test_a_conv_kernel_calling_numpy_is_caught(monkeypatch):
    """A planted bug: a path that converts its input with np.asarray fails on strict arrays."""
    import reference.conv.api as conv_api

    x, w = np.ones((1, 1, 4)), np.ones((1, 1, 2))
    original = conv_api.convolution
    monkeypatch.setattr(conv_api, "convolution", lambda x, *a, **k: original(np.asarray(x), *a, **k))
    with pytest.raises(TypeError, match="Implicit conversion"):
        conv_api.convolution(
            strict_xp.asarray(x), strict_xp.asarray(w), None, (1,), (0,), (1,), False, (0,), 1
        )
