"""XLA:CPU's wrong rank-1/rank-2 convolutions with a crop at the low end and a pad at the high end
(issue #38): the departure follows the pads the output windows *read*, not the pads drawn. With
stride s the last (padded - dilated kernel) mod s positions of the padded input are read by no
window and XLA drops them, so padding (-1, 2) at stride 2 over 4 elements with a 2-wide kernel is
computed as (-1, 1), inside the law 0 < high <= -low. Seed 4 of the README command drew exactly that
(conv-4a53a3a76737) and failed against an entry whose region read the drawn pair. Known entries read
the derived field ``geometry.padding_read.D`` (conformance/known.py)."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.known import _lookup, load_known

PLAIN = "jax-conv1d-mixed-sign-padding-wrong-values"
TRANSPOSED = "jax-conv-transpose1d-mixed-sign-padding-input-gradient"


def _conv(padding, stride=1, length=4, k=2, transposed=False, check="vmap", cin=4, cout=3):
    params = {
        "rank": 1,
        "stride": [stride],
        "padding": padding,
        "dilation": [1],
        "groups": 1,
        "transposed": transposed,
        "output_padding": [0],
        "bias": False,
        "layout": "channels_first",
    }
    weight = [cin, cout, k] if transposed else [cout, cin, k]
    return {
        "op": "conv",
        "params": params,
        "shapes": {"input": [2, cin, length], "weight": weight},
        "dtype": "float32",
        "seed": 4224,
        "checks": [check],
    }


def _result(case, check="vmap"):
    return {
        "framework": "jax",
        "version": "0.10.2",
        "check": check,
        "dtype": "float32",
        "verdict": "fail",
        "reason": "output[0,0,1,1]=0.95182747 but reference says -1.8749185433415831",
        "case": case,
    }


def test_the_pads_read_drop_what_no_window_reaches():
    assert _lookup(_conv([[-1, 2]], stride=2), "geometry.padding_read.0") == [-1, 1]  # 5 padded, 2 windows
    assert _lookup(_conv([[-1, 2]], stride=1), "geometry.padding_read.0") == [-1, 2]
    assert _lookup(_conv([[-1, 2]], stride=3), "geometry.padding_read.0") == [-1, 2]  # 5 - 2 = 3: none unread
    assert _lookup(_conv([[1, 1]], stride=2, length=5, k=3), "geometry.padding_read.0.sum") == 2
    assert _lookup(_conv([[-1, 2]], stride=2), "geometry.out.0") == 2
    assert _lookup(_conv("valid", stride=2, length=5), "geometry.padding_read.0") == [0, -1]
    missing = _lookup(_conv([[-1, 2]], transposed=True), "geometry.padding_read.0")
    assert missing is _lookup({"op": "tanh"}, "geometry.out.0")  # no plain convolution: absent


def test_the_seed_4_failure_is_claimed_and_the_drawn_pair_outside_the_law_is_not():
    entries = {e.id: e for e in load_known("builtin").entries}
    assert entries[PLAIN].in_region(_result(_conv([[-1, 2]], stride=2)))
    assert not entries[PLAIN].in_region(_result(_conv([[-1, 2]], stride=1)))  # reads (-1, 2): right
    assert not entries[PLAIN].in_region(_result(_conv([[-1, 1]], stride=2, length=5)))  # reads (-1, 0)
    transposed = _result(_conv([[-1, 1]], transposed=True), check="vjp")
    assert entries[TRANSPOSED].in_region(transposed) and not entries[PLAIN].in_region(transposed)


@pytest.mark.jax
def test_xla_follows_the_pads_read():
    """The law, run: JAX's float32 convolution against the reference's float64 one (8 channels
    each side), wrong exactly where the entry claims it."""
    pytest.importorskip("jax")
    from jax import lax

    from reference.conv.api import convolution

    entry = {e.id: e for e in load_known("builtin").entries}[PLAIN]
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 8, 2)).astype(np.float32)
    for stride, pad, length in [
        (2, (-1, 2), 4),
        (1, (-1, 1), 4),
        (1, (-1, 2), 4),
        (2, (-1, 1), 5),
        (3, (-2, 2), 4),
    ]:
        x = rng.standard_normal((2, 8, length)).astype(np.float32)
        got = np.asarray(
            lax.conv_general_dilated(x, w, (stride,), [pad], dimension_numbers=("NCH", "OIH", "NCH"))
        )
        exact = np.asarray(
            convolution(x.astype(np.float64), w.astype(np.float64), stride=stride, padding=[pad])
        )
        wrong = not np.allclose(got, exact, rtol=1e-4, atol=1e-4 * np.abs(exact).max())
        case = _conv([list(pad)], stride=stride, length=length, cin=8, cout=8, check="forward")
        claimed = entry.in_region(_result(case, check="forward"))
        assert wrong == claimed, (stride, pad, length, wrong, claimed)
