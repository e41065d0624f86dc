"""convolution_backward and convolution_double_backward against central finite differences of
the forward convolution (float64), and the adjoint identity.

Directional checks: for random directions t, the finite difference of a scalar functional φ
along t must equal ⟨∇φ, t⟩. φ is linear (or bilinear) in every argument here, so central
differences have no truncation error and the tolerance is rounding only.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from reference.conv import convolution, convolution_backward, convolution_double_backward
from tests.conv.checks import assert_scalar_close
from tests.conv.strategies import conv_cases

EPS = 1e-3
REL = 1e-9


def _dot(a, b):
    return float(np.vdot(a, b)) if a is not None and b is not None else 0.0


def _central(phi, args, directions):
    plus = [a + EPS * t for a, t in zip(args, directions)]
    minus = [a - EPS * t for a, t in zip(args, directions)]
    return (phi(*plus) - phi(*minus)) / (2 * EPS)


@given(conv_cases(), st.integers(0, 2**16))
def test_backward_matches_finite_differences(case, seed):
    x, w, b = case.arrays(seed)
    if b is None:
        b = np.zeros(convolution(x, w, None, *case.params).shape[1])
    rng = np.random.default_rng(seed + 7)
    gy = rng.standard_normal(convolution(x, w, b, *case.params).shape)
    gx, gw, gb = convolution_backward(gy, x, w, b.shape, *case.params, (True, True, True))

    def phi(x_, w_, b_):  # ⟨gy, conv(x, w) + b⟩
        return _dot(gy, convolution(x_, w_, b_, *case.params))

    scale = _dot(np.abs(gy), convolution(np.abs(x), np.abs(w), np.abs(b), *case.params)) + 1.0
    for _ in range(2):
        tx, tw, tb = (rng.standard_normal(a.shape) for a in (x, w, b))
        fd = _central(phi, (x, w, b), (tx, tw, tb))
        assert_scalar_close(
            "⟨∇φ, t⟩ vs finite difference", _dot(gx, tx) + _dot(gw, tw) + _dot(gb, tb), fd, scale, REL, case
        )
        # Each argument alone, so that a wrong gradient cannot hide behind another's.
        for i, g in enumerate((gx, gw, gb)):
            t = [np.zeros_like(a) for a in (x, w, b)]
            t[i] = (tx, tw, tb)[i]
            assert_scalar_close(
                f"{('grad_input', 'grad_weight', 'grad_bias')[i]}",
                _dot(g, t[i]),
                _central(phi, (x, w, b), t),
                scale,
                REL,
                case,
            )


@given(conv_cases(), st.integers(0, 2**16))
def test_adjoint_identity(case, seed):
    """⟨conv(x, w), g⟩ = ⟨x, dgrad(g)⟩ = ⟨w, wgrad(g)⟩."""
    x, w, _ = case.arrays(seed)
    y = convolution(x, w, None, *case.params)
    g = np.random.default_rng(seed + 3).standard_normal(y.shape)
    gx, gw, _ = convolution_backward(g, x, w, None, *case.params, (True, True, False))
    scale = _dot(np.abs(g), convolution(np.abs(x), np.abs(w), None, *case.params)) + 1.0
    assert_scalar_close("⟨x, dgrad(g)⟩", _dot(x, gx), _dot(y, g), scale, 1e-12, case)
    assert_scalar_close("⟨w, wgrad(g)⟩", _dot(w, gw), _dot(y, g), scale, 1e-12, case)


@given(
    conv_cases(ranks=(1, 2)), st.integers(0, 2**16), st.sampled_from(["all", "no_ggI", "no_ggW", "no_ggb"])
)
def test_double_backward_matches_finite_differences(case, seed, which):
    """φ(gO, x, w) = ⟨ggI, gI⟩ + ⟨ggW, gW⟩ + ⟨ggb, gb⟩ has gradient (g_grad_output, g_input, g_weight)."""
    x, w, b = case.arrays(seed)
    params = case.params
    rng = np.random.default_rng(seed + 11)
    gO = rng.standard_normal(convolution(x, w, None, *params).shape)
    ggI = None if which == "no_ggI" else rng.standard_normal(x.shape)
    ggW = None if which == "no_ggW" else rng.standard_normal(w.shape)
    ggb = None if which == "no_ggb" else rng.standard_normal(gO.shape[1])
    g_gO, g_x, g_w = convolution_double_backward(ggI, ggW, ggb, gO, w, x, *params, (True, True, True))

    def phi(gO_, x_, w_):
        gI, gW, gb = convolution_backward(gO_, x_, w_, None, *params, (True, True, True))
        return _dot(ggI, gI) + _dot(ggW, gW) + _dot(ggb, gb)

    # Rounding scale: the same functional with every array replaced by its absolute value.
    abs_ = lambda a: None if a is None else np.abs(a)
    gI, gW, gb = convolution_backward(np.abs(gO), np.abs(x), np.abs(w), None, *params, (True, True, True))
    scale = _dot(abs_(ggI), gI) + _dot(abs_(ggW), gW) + _dot(abs_(ggb), gb) + 1.0
    for i, g in enumerate((g_gO, g_x, g_w)):
        t = [np.zeros_like(a) for a in (gO, x, w)]
        t[i] = rng.standard_normal(t[i].shape)
        fd = _central(phi, (gO, x, w), t)
        assert_scalar_close(
            ("g_grad_output", "g_input", "g_weight")[i], _dot(g, t[i]), fd, scale, REL, f"{which} {case}"
        )


def test_double_backward_respects_output_mask_and_missing_cotangents():
    """As aten: an output is undefined (None) when masked off or when no cotangent feeds it."""
    x, w = np.ones((1, 2, 5)), np.ones((3, 2, 2))
    gO = np.ones((1, 3, 4))
    none = convolution_double_backward(None, None, None, gO, w, x, 1, 0, 1, False, 0, 1, (True, True, True))
    assert none == (None, None, None)
    only_ggI = convolution_double_backward(
        np.ones_like(x), None, None, gO, w, x, 1, 0, 1, False, 0, 1, (True, True, True)
    )
    assert only_ggI[0].shape == gO.shape and only_ggI[1] is None and only_ggI[2].shape == w.shape
    only_ggb = convolution_double_backward(
        None, None, np.ones(3), gO, w, x, 1, 0, 1, False, 0, 1, (True, False, True)
    )
    assert only_ggb[0].shape == gO.shape and only_ggb[1] is None and only_ggb[2] is None
