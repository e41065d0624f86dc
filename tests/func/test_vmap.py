"""vmap against slice-loop-stack for every primitive of the derivative table (samples from
:data:`tests.autograd.op_records.OP_RECORDS`, Hypothesis-drawn in_dims including None and
negative ones, allow_fallback=False wherever the table has a batch rule), the fallback and its
counts, typed errors, and compositions with grad/jvp/vjp."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as T
from reference.func import (
    BatchRuleError,
    TransformError,
    VmapError,
    fallback_counts,
    grad,
    jacrev,
    jvp,
    reset_fallback_counts,
    vjp,
    vmap,
)
from reference.ops import RULES
from tests.autograd.op_records import OP_RECORDS
from tests.autograd.test_gradcheck import _draw

F = T.nn.functional

# Every entry of the table has a batch rule (the fallback is for primitives added without one).
WITHOUT_BATCH_RULE: set = set()


def _copy_into_like(a):
    z = T.zeros_like(a)
    z[1:].copy_(a[:2] * a[1:])  # the record's version writes into T.zeros(...): unbatched, a vmap error
    return z * 2


# Samples that write into a tensor made from input 0 need input 0 batched (as in torch.func).
OVERRIDES = {
    "copy": [("into_zeros_like", _copy_into_like, [(3,)], "a")],
}
NEEDS_FIRST_BATCHED = {"copy", "fill", "fill_tensor", "zero", "take", "put"}

SAMPLES = [(op, *sample[:4]) for op, samples in OP_RECORDS.items() for sample in OVERRIDES.get(op, samples)]
IDS = [f"{s[0]}-{s[1]}" for s in SAMPLES]


# Samples that differentiate their inputs inside (autograd.grad) get fresh leaves; the others see
# the batched inputs as drawn, so the batch rules meet batch dims anywhere.
DIFFERENTIATE_INSIDE = {
    "threshold_backward",
    "hardswish_backward",
    "tanh_backward",
    "tanh_backward_output_grad",
    "lerp_backward_self",
    "lerp_tensor_backward_self",
    "sigmoid_backward",
    "sigmoid_one_minus_twice",
    "expm1_backward",
    "tan_backward",
    "tan_backward_output_grad",
    "ndtri_backward",
    "scatter_add",
    "batch_norm_backward",
    "convolution_backward",
    "softmax_centred",
    "softmax_centred_t",
    "log_softmax_exp",
    "logsumexp_weight",
    "centred",
    "norm_ratio_power",
    "std_direction",
    "std_curvature",
    "norm_curvature",
    "prod_partials",
    "prod_curvature",
}


def _fresh_leaves(fn):
    return lambda *xs: fn(*[x.clone().requires_grad_() for x in xs])


def _np(x):
    return x.detach().resolve_conj().numpy()  # (a conjugate view such as ihfft's, as in PyTorch)


def slice_loop_stack(fn, xs, dims, size):
    """The oracle: each sample as a tensor of its own (a contiguous copy, as vmap's logical tensors are:
    view() and as_strided() see the sample's layout, not the batch's)."""
    outs = []
    for k in range(size):
        outs.append(fn(*[x if d is None else x.select(d, k).clone() for x, d in zip(xs, dims)]))
    return np.stack([_np(o) for o in outs])


@st.composite
def batched_inputs(draw, shapes, kinds, first_batched):
    size = draw(st.integers(1, 3))
    dims = []
    for i, shape in enumerate(shapes):
        n = len(shape) + 1
        choices = st.integers(-n, n - 1) if (i == 0 and first_batched) else st.none() | st.integers(-n, n - 1)
        dims.append(draw(choices))
    if all(d is None for d in dims):
        i = draw(st.integers(0, len(shapes) - 1))
        dims[i] = draw(st.integers(0, len(shapes[i])))
    seed = draw(st.integers(0, 2**16))
    base = _draw(shapes, kinds, seed)
    rng = np.random.default_rng(seed)
    xs = []
    for x, d in zip(base, dims):
        if d is None:
            xs.append(x.detach())
            continue
        arr = np.stack([_np(x) + 0.01 * k * np.sign(_np(x)) * rng.random(x.shape) for k in range(size)], 0)
        xs.append(T.tensor(np.moveaxis(arr, 0, d % (x.ndim + 1)), dtype=x.dtype))
    return size, dims, xs


@pytest.mark.parametrize("op, label, fn, shapes, kinds", SAMPLES, ids=IDS)
def test_vmap_against_slice_loop_stack(op, label, fn, shapes, kinds):
    fn = _fresh_leaves(fn) if op in DIFFERENTIATE_INSIDE else fn
    allow = op in WITHOUT_BATCH_RULE

    @settings(deadline=None)
    @given(batched_inputs(shapes, kinds, op in NEEDS_FIRST_BATCHED))
    def check(case):
        size, dims, xs = case
        expected = slice_loop_stack(fn, xs, dims, size)
        got = vmap(fn, in_dims=tuple(dims), allow_fallback=allow)(*xs)
        assert got.shape == expected.shape, f"{op}[{label}] in_dims={dims}"
        np.testing.assert_allclose(
            _np(got), expected, rtol=1e-12, atol=1e-12, err_msg=f"{op}[{label}] in_dims={dims}"
        )

    check()


def test_every_rule_has_a_batch_rule():
    """Fails when a primitive is added to the table without a batch rule."""
    missing = {name for name, rule in RULES.items() if rule.batch is None}
    assert missing == WITHOUT_BATCH_RULE


def test_fallback_counts_and_allow_fallback_false(monkeypatch):
    """A primitive without a batch rule runs per sample and is counted; allow_fallback=False names it."""
    monkeypatch.setattr(RULES["sigmoid"], "batch", None)
    x = T.tensor(np.random.default_rng(0).standard_normal((3, 4)), dtype=T.float64)
    f = lambda a: a.sigmoid() * a.tanh()  # noqa: E731
    reset_fallback_counts()
    out = vmap(f)(x)
    np.testing.assert_allclose(_np(out), slice_loop_stack(f, [x], [0], 3), rtol=1e-14)
    assert fallback_counts() == {"sigmoid": 1}
    vmap(f, in_dims=1)(x)
    assert fallback_counts() == {"sigmoid": 2}
    with pytest.raises(BatchRuleError, match="'sigmoid'.*'batch'"):
        vmap(f, allow_fallback=False)(x)
    reset_fallback_counts()
    vmap(lambda a: a.tanh().sum(), allow_fallback=False)(x)
    assert fallback_counts() == {}


def test_as_strided_of_views_and_with_offsets():
    """Strides and offsets count in each sample's own storage, for views of views too."""
    x = T.tensor(np.random.default_rng(1).standard_normal((4, 3, 5)), dtype=T.float64)
    for f in (
        lambda a: a.as_strided((2, 2), (1, 5), 3),
        lambda a: a[1:].t().as_strided((3, 2), (2, 1), 4),
        lambda a: a.t()[2].as_strided((4,), (3,), 1),
    ):
        for d in (0, 1, -1):
            expected = slice_loop_stack(lambda a, f=f: f(a.clone()), [x], [d], x.shape[d])
            got = vmap(f, in_dims=d, allow_fallback=False)(x)
            np.testing.assert_allclose(_np(got), expected, rtol=0, atol=0)


def test_a_planted_batch_rule_bug_is_caught(monkeypatch):
    """A batch rule that forgets to shift a dim disagrees with slice-loop-stack."""
    from reference.autograd.batching import view_rule

    monkeypatch.setattr(RULES["select"], "batch", view_rule(lambda p, shape, n: dict(p)))
    x = T.tensor(np.random.default_rng(0).standard_normal((3, 2, 4)), dtype=T.float64)
    f = lambda a: a[1] * 2  # noqa: E731
    expected = slice_loop_stack(f, [x], [0], 3)
    got = vmap(f)(x)
    assert got.shape != expected.shape or not np.allclose(_np(got), expected)


def test_views_that_must_copy_refuse_writes():
    """With the batch dim in the middle, a.view(6) of a logical (2, 3) sample cannot alias the
    physical value: vmap copies it, and a write through that copy is refused, not lost."""
    x = T.tensor(np.arange(12.0).reshape(2, 2, 3), dtype=T.float64)
    got = vmap(lambda a: a.view(6) * 2, in_dims=1)(x)
    np.testing.assert_array_equal(_np(got), slice_loop_stack(lambda a: a.view(6) * 2, [x], [1], 2))

    def write(a):
        a = a * 1.0  # (a batched tensor of our own)
        a.t().t().view(6).mul_(2)
        return a

    np.testing.assert_array_equal(_np(vmap(write)(x)), slice_loop_stack(write, [x], [0], 2))
    with pytest.raises(VmapError, match="had to be copied"):
        vmap(lambda a: a.view(6).mul_(2), in_dims=1)(x)


def test_max_pool_gradient_under_vmap():
    x = T.tensor(np.random.default_rng(3).standard_normal((2, 3, 1, 4, 4)), dtype=T.float64)
    f = lambda a: (F.max_pool2d(a, 2, 1) ** 2).sum()  # noqa: E731
    got = vmap(grad(f), allow_fallback=False)(x[0])
    np.testing.assert_allclose(_np(got), slice_loop_stack(grad(f), [x[0]], [0], 3), rtol=1e-14)
    with pytest.raises(VmapError, match="max_pool2d under two nested vmaps"):
        vmap(vmap(grad(f)))(x)


def test_in_and_out_dims_structures():
    rng = np.random.default_rng(1)
    x = T.tensor(rng.standard_normal((2, 5)), dtype=T.float64)
    w = T.tensor(rng.standard_normal((3,)), dtype=T.float64)
    d = {"a": T.tensor(rng.standard_normal((5, 3)), dtype=T.float64), "b": w}

    def f(x, d):
        return {"y": x * d["a"].sum(), "z": (d["b"], d["a"] * 2)}

    out = vmap(f, in_dims=(-1, {"a": 0, "b": None}), out_dims={"y": 1, "z": (0, -1)})(x, d)
    for k in range(5):
        ref = f(x[:, k], {"a": d["a"][k], "b": w})
        np.testing.assert_allclose(_np(out["y"][:, k]), _np(ref["y"]), rtol=1e-14)
        np.testing.assert_allclose(_np(out["z"][0][k]), _np(ref["z"][0]))
        np.testing.assert_allclose(_np(out["z"][1][..., k]), _np(ref["z"][1]), rtol=1e-14)


def test_vmap_errors():
    x = T.tensor(np.zeros((2, 3)), dtype=T.float64)
    with pytest.raises(TransformError, match="in_dims gives 2"):
        vmap(lambda a: a, in_dims=2)(x)
    with pytest.raises(TransformError, match="same batch size"):
        vmap(lambda a, b: a + b, in_dims=(0, 1))(x, x)
    with pytest.raises(TransformError, match="batches no Tensor"):
        vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(VmapError, match="unbatched tensor"):
        vmap(lambda a: T.zeros(3, dtype=T.float64).add_(a))(x)
    with pytest.raises(VmapError, match="data-dependent"):
        vmap(lambda a: a * float(a.sum()))(x)


# ---- compositions ---------------------------------------------------------------------------------


def _small_net(w, b, x):
    h = F.conv2d(x.unsqueeze(0), w, b, padding=1).relu()
    return (F.avg_pool2d(h, 2).reshape(-1) ** 2).sum()


def _net_args(seed=0, n=3):
    rng = np.random.default_rng(seed)
    w = T.tensor(rng.standard_normal((2, 1, 3, 3)) * 0.5, dtype=T.float64)
    b = T.tensor(rng.standard_normal(2) * 0.1, dtype=T.float64)
    xs = T.tensor(rng.standard_normal((n, 1, 4, 4)), dtype=T.float64)
    return w, b, xs


def test_vmap_of_grad_per_sample_gradients():
    w, b, xs = _net_args()
    got = vmap(grad(_small_net, argnums=(0, 1)), in_dims=(None, None, 0))(w, b, xs)
    for k in range(xs.shape[0]):
        ref = grad(_small_net, argnums=(0, 1))(w, b, xs[k])
        for g, r in zip(got, ref):
            np.testing.assert_allclose(_np(g[k]), _np(r), rtol=1e-12, atol=1e-14)


def test_grad_of_vmap_and_vmap_of_vmap():
    w, b, xs = _net_args(1, 4)
    total = grad(lambda w: vmap(_small_net, in_dims=(None, None, 0))(w, b, xs).sum())(w)
    ref = sum(_np(grad(_small_net)(w, b, xs[k])) for k in range(4))
    np.testing.assert_allclose(_np(total), ref, rtol=1e-12)
    grid = T.tensor(np.random.default_rng(2).standard_normal((2, 3, 4)), dtype=T.float64)
    f = lambda a, c: (a.tanh() * c).sum()  # noqa: E731
    out = vmap(vmap(f, in_dims=(0, None)), in_dims=(0, 0))(grid, grid[:, 0])
    ref = np.array([[float(f(grid[i, j], grid[i, 0])) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12)


def test_vmap_of_jvp_and_of_vjp():
    w, b, xs = _net_args(3)
    ts = T.tensor(np.random.default_rng(4).standard_normal(tuple(xs.shape)), dtype=T.float64)
    f = lambda x: _small_net(w, b, x)  # noqa: E731
    out = vmap(lambda x, t: jvp(f, (x,), (t,))[1])(xs, ts)
    ref = [float(jvp(f, (xs[k],), (ts[k],))[1]) for k in range(3)]
    np.testing.assert_allclose(_np(out), ref, rtol=1e-12)
    cts = T.tensor([1.0, -2.0, 0.5], dtype=T.float64)
    out = vmap(lambda x, c: vjp(f, x)[1](c)[0])(xs, cts)
    for k in range(3):
        np.testing.assert_allclose(_np(out[k]), _np(vjp(f, xs[k])[1](cts[k])[0]), rtol=1e-12, atol=1e-14)


def test_grad_of_grad_under_vmap_and_jacrev():
    x = T.tensor(np.random.default_rng(5).standard_normal((3, 4)), dtype=T.float64)
    f = lambda a: (a.exp() * a.tanh()).sum()  # noqa: E731
    out = vmap(jacrev(grad(f)))(x)
    for k in range(3):
        np.testing.assert_allclose(_np(out[k]), _np(jacrev(grad(f))(x[k])), rtol=1e-12, atol=1e-14)
