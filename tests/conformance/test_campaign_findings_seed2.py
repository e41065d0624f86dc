"""Regression tests for what the seed-2 campaign (session 5, docs/conformance.md "Seed-2 campaign:
indexing and forward mode") found in refgrad's indexing spellings: each test fails on the code
before its fix."""

from __future__ import annotations

import pytest

from conformance.case import Case
from conformance.ops import RecordParams


def _case(op, shapes, check, dtype="float64", seed=5, **params):
    params = {"values": "normal", **params}
    return Case(op, RecordParams.of(params), shapes, dtype, seed, (check,))


# TensorFlow spellings through tensor_scatter_nd_update, each with a shared (None) and a batched
# input: with int64 indices tf.vectorized_map raised "Tensors in list passed to 'values' of
# 'ConcatV2' Op have types [int32, int64] that don't all match" (pfor's converter of
# TensorScatterUpdate concatenates its int32 loop counter with the indices).
TF_SCATTERS = [
    _case(
        "scatter",
        {"input": (4,), "src": (2,)},
        "vmap",
        dim=0,
        index=[3, 1],
        ishape=[2],
        in_dims=[None, 0],
        vmap_size=2,
    ),
    _case(
        "scatter",
        {"input": (3, 2), "src": (2, 2)},
        "vmap_vjp",
        dim=-2,
        index=[1, 0, 2, 1],
        ishape=[2, 2],
        in_dims=[-1, None],
        vmap_size=3,
    ),
    _case(
        "scatter_value",
        {"input": (2, 3)},
        "vmap",
        dim=1,
        index=[2, 0],
        ishape=[1, 2],
        value=-1.5,
        in_dims=[1],
        vmap_size=2,
    ),
    _case(
        "scatter_reduce",
        {"input": (4,), "src": (3,)},
        "vmap_vjp",
        dim=0,
        index=[1, 3, 1],
        ishape=[3],
        reduce="sum",
        include_self=False,
        in_dims=[0, None],
        vmap_size=2,
    ),
    _case("put", {"input": (5,), "src": (2,)}, "vmap", index=[4, 1], in_dims=[None, 0], vmap_size=2),
    _case("put", {"input": (5,), "src": (2,)}, "vmap_vjp", index=[0, 3], in_dims=[0, None], vmap_size=3),
    _case(
        "masked_scatter",
        {"input": (2, 2), "source": (3,)},
        "vmap",
        mask=[True, False, True, True],
        in_dims=[None, 0],
        vmap_size=2,
    ),
    _case(
        "index_put",
        {"input": (3, 2), "values_in": (2, 2)},
        "vmap_vjp",
        index=[2, 0],
        accumulate=False,
        in_dims=[0, None],
        vmap_size=2,
    ),
    _case(
        "put_index",
        {"input": (2, 3), "source": (2,)},
        "vmap",
        index=[5, 1],
        accumulate=False,
        in_dims=[None, 0],
        vmap_size=2,
    ),
]


@pytest.mark.parametrize("case", TF_SCATTERS, ids=lambda c: f"{c.op}-{c.checks[0]}")
def test_tensorflow_scatter_spellings_vectorize(case):
    pytest.importorskip("tensorflow")
    from conformance.adapters.tf_adapter import TensorFlowAdapter
    from conformance.ops.judge import run_in_process

    adapter = TensorFlowAdapter()
    result = run_in_process(adapter, case, case.checks[0], adapter.setup())
    assert result["verdict"] == "pass", result


@pytest.mark.parametrize("check", ["vmap", "vmap_vjp"])
def test_torch_put_maps_a_batched_src_over_a_shared_input(check):
    # `y = x * 1.0; y[index] = src` is an in-place index_put_ on an unbatched y: torch.func.vmap
    # refuses it when src is batched ("Please try to use out-of-place operators instead of
    # index_put_"); the record now spells it out of place (torch.index_put)
    pytest.importorskip("torch")
    from conformance.adapters.torch_adapter import TorchAdapter
    from conformance.ops.judge import run_in_process

    case = _case("put", {"input": (5,), "src": (3,)}, check, index=[4, 0, 2], in_dims=[None, -1], vmap_size=2)
    adapter = TorchAdapter()
    result = run_in_process(adapter, case, check, adapter.setup())
    assert result["verdict"] == "pass", result


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_tensorflow_hardsigmoid_gradient_is_zero_at_minus_and_plus_three(dtype):
    # the TF spelling was tf.clip_by_value(x + 3, 0, 6) / 6, whose gradient passes at the bounds:
    # g/6 at x = -3 and 3 where PyTorch's hardsigmoid_backward gives 0 (campaign seed 2, bfloat16
    # vmap_vjp at x = -3); now Keras's relu6(x + 3) / 6
    tf = pytest.importorskip("tensorflow")
    from conformance.ops import RECORDS

    x = tf.constant([-3.0, 3.0, -1.0, 2.5], getattr(tf, dtype))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = RECORDS["hardsigmoid"].tf(tf, x)
    g = tf.cast(tape.gradient(y, x), tf.float64).numpy().tolist()
    assert g[0] == 0.0 and g[1] == 0.0
    assert abs(g[2] - 1 / 6) < 1e-2 and abs(g[3] - 1 / 6) < 1e-2


def test_tensorflow_hardswish_gradient_at_minus_and_plus_three_is_pytorchs():
    # x * tf.clip_by_value(x + 3, 0, 6) / 6 differentiated to -1/2 at x = -3 and 3/2 at x = 3;
    # PyTorch's hardswish_backward gives 0 and 1 (Keras's x * relu6(x + 3) / 6 does too)
    tf = pytest.importorskip("tensorflow")
    torch = pytest.importorskip("torch")
    from conformance.ops import RECORDS

    values = [-3.0, 3.0, -1.0, 2.5, -4.0, 4.0]
    x = tf.constant(values, tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = RECORDS["hardswish"].tf(tf, x)
    got = tape.gradient(y, x).numpy().tolist()
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    want = torch.autograd.grad(torch.nn.functional.hardswish(t).sum(), t)[0].tolist()
    assert got == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("weight", [float("inf"), float("nan")])
def test_prelu_spellings_input_derivative_at_positive_x_ignores_the_weight(weight):
    # prelu is x where x > 0, whatever the weight: its derivative there is 1 (PyTorch's
    # prelu_backward). The JAX and TensorFlow spellings where(x > 0, x, w * x) gave NaN, an infinite
    # or NaN w times the zero cotangent of the unselected branch (seed-2 seeded draws, jvp_vjp)
    jax = pytest.importorskip("jax")
    tf = pytest.importorskip("tensorflow")
    from conformance.ops import RECORDS
    from conformance.ops._run import JaxNamespace

    rec = RECORDS["prelu"]
    x = [[0.59, -0.5]]  # (n, c) = (1, 2): one positive, one negative element
    w = [weight]
    gx, gw = jax.grad(lambda x_, w_: rec.jax(JaxNamespace(), x_, w_).sum(), (0, 1))(
        jax.numpy.asarray(x, jax.numpy.float32), jax.numpy.asarray(w, jax.numpy.float32)
    )
    assert float(gx[0, 0]) == 1.0
    xt, wt = tf.constant(x, tf.float32), tf.constant(w, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        y = tf.reduce_sum(rec.tf(tf, xt, wt))
    tx, tw = tape.gradient(y, [xt, wt])
    assert float(tx[0, 0]) == 1.0
    # at x = -0.5 the slope and its derivative are PyTorch's: w and x
    torch = pytest.importorskip("torch")
    xs = torch.tensor(x, requires_grad=True)
    ws = torch.tensor(w, requires_grad=True)
    want_x, want_w = torch.autograd.grad(torch.nn.functional.prelu(xs, ws).sum(), (xs, ws))
    for got_x, got_w in ((gx, gw), (tx.numpy(), tw.numpy())):
        assert str(float(got_x[0][1])) == str(float(want_x[0, 1]))
        assert float(got_w[0]) == float(want_w[0])
