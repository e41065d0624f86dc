"""Result layouts against PyTorch: the strides of elementwise results, clones, conversions, ``*_like``
and ``.grad`` (reference.autograd.layout), and what programs observe of them: ``stride()``,
``is_contiguous()`` (row-major and channels-last), whether ``view`` succeeds, whether ``reshape``
returns a view (an in-place write through it reaching the tensor)."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import reference

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]

# ---- layouts: (base shape, steps applied to it), built the same way in both frameworks ----------------

LAYOUTS = {
    "contig_2d": ((3, 4), []),
    "t": ((4, 3), [("t",)]),
    "slice_cols": ((3, 8), [("slice", 1, 2)]),
    "slice_rows_t": ((6, 4), [("slice", 0, 2), ("t",)]),
    "expand_row": ((1, 4), [("expand", (3, 4))]),
    "expand_col": ((3, 1), [("expand", (3, 4))]),
    "perm_201": ((4, 2, 3), [("permute", (1, 2, 0))]),
    "perm_120": ((3, 4, 2), [("permute", (2, 0, 1))]),
    "perm_021": ((2, 4, 3), [("permute", (0, 2, 1))]),
    "contig_3d": ((2, 3, 4), []),
    "perm_slice": ((4, 2, 6), [("slice", 2, 2), ("permute", (1, 2, 0))]),
    "size1_perm": ((1, 3, 4), [("permute", (1, 0, 2))]),
    "size1_mid": ((2, 4, 1), [("permute", (0, 2, 1))]),
    "cl": ((2, 4, 5, 3), [("permute", (0, 3, 1, 2))]),
    "cl_c1": ((2, 4, 5, 1), [("permute", (0, 3, 1, 2))]),
    "cl_hw1": ((2, 1, 1, 3), [("permute", (0, 3, 1, 2))]),
    "contig_4d": ((2, 3, 4, 5), []),
    "perm_4d": ((4, 2, 5, 3), [("permute", (1, 3, 0, 2))]),
    "cl_sliced": ((2, 8, 5, 3), [("slice", 1, 2), ("permute", (0, 3, 1, 2))]),
    "zero_d": ((), []),
    "vec_step": ((8,), [("slice", 0, 2)]),
}


def build(T, name, dtype="float64", offset=0.0):
    base, steps = LAYOUTS[name]
    n = int(np.prod(base))
    x = T.tensor(
        np.asarray(np.arange(n, dtype=np.float64).reshape(base) / 7.0 + 0.25 + offset), dtype=T.float64
    )
    for step in steps:
        if step[0] == "t":
            x = x.t()
        elif step[0] == "permute":
            x = x.permute(*step[1])
        elif step[0] == "slice":
            index = [slice(None)] * x.dim()
            index[step[1]] = slice(None, None, step[2])
            x = x[tuple(index)]
        elif step[0] == "expand":
            x = x.expand(*step[1])
    if dtype == "int64":
        x = (x * 7).to(T.int64)  # (an elementwise result: its layout follows x's)
        x = _relayout(T, x, name)
    elif dtype == "bool":
        x = _relayout(T, x > 1.0, name)
    return x


def _relayout(T, x, name):
    """Make an int/bool tensor with the geometry of layout ``name`` (strides, not only the order)."""
    base, steps = LAYOUTS[name]
    y = T.zeros(base, dtype=x.dtype)
    for step in steps:
        if step[0] == "t":
            y = y.t()
        elif step[0] == "permute":
            y = y.permute(*step[1])
        elif step[0] == "slice":
            index = [slice(None)] * y.dim()
            index[step[1]] = slice(None, None, step[2])
            y = y[tuple(index)]
        elif step[0] == "expand":
            return x  # an expanded tensor cannot be written: keep the value's own layout
    y.copy_(x)
    return y


def observe(T, r):
    """Everything a program can see of ``r``'s layout."""
    out = {"shape": tuple(r.shape), "stride": tuple(r.stride()), "contiguous": r.is_contiguous()}
    if r.dim() == 4:
        out["channels_last"] = r.is_contiguous(memory_format=T.channels_last)
    if r.dim() >= 1 and r.numel() > 0:
        try:
            r.view(-1)
            out["view"] = "ok"
        except RuntimeError as e:
            out["view"] = str(e)
        with T.no_grad():
            c = r.detach().clone()  # (clone keeps the layout)
            before = c.clone()
            c.reshape(-1)[:1].fill_(-99)  # a view of c, or a copy
            out["reshape_aliases"] = bool((c != before).any())
    return out


def both(fn, *names, dtypes=None):
    dtypes = dtypes or ["float64"] * len(names)
    got = fn(reference, *[build(reference, n, d, i / 3) for i, (n, d) in enumerate(zip(names, dtypes))])
    want = fn(torch, *[build(torch, n, d, i / 3) for i, (n, d) in enumerate(zip(names, dtypes))])
    return observe(reference, got), observe(torch, want)


def _inputs_agree():
    """The layouts themselves are the same in both frameworks (views: tested elsewhere; checked here too)."""
    for name in LAYOUTS:
        for dt in ("float64", "int64", "bool"):
            assert observe(reference, build(reference, name, dt)) == observe(torch, build(torch, name, dt)), (
                name,
                dt,
            )


def test_layouts_agree():
    _inputs_agree()


F = "nn.functional"

UNARY = {
    "exp": lambda T, x: x.exp(),
    "neg": lambda T, x: -x,
    "abs": lambda T, x: x.abs(),
    "sin": lambda T, x: T.sin(x),
    "sigmoid": lambda T, x: x.sigmoid(),
    "relu": lambda T, x: x.relu(),
    "gelu": lambda T, x: T.nn.functional.gelu(x),
    "silu": lambda T, x: T.nn.functional.silu(x),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x, 0.1),
    "hardtanh": lambda T, x: T.nn.functional.hardtanh(x),
    "softplus": lambda T, x: T.nn.functional.softplus(x),
    "log_sigmoid": lambda T, x: T.nn.functional.logsigmoid(x),
    "clamp": lambda T, x: x.clamp(0.3, 2.0),
    "clamp_min": lambda T, x: x.clamp_min(0.3),
    "pow2": lambda T, x: x.pow(2),
    "mul_scalar": lambda T, x: x * 2.0,
    "add_scalar": lambda T, x: x + 1,
    "rsub_scalar": lambda T, x: 1.0 - x,
    "rdiv_scalar": lambda T, x: 1.0 / x,
    "rpow_scalar": lambda T, x: 2.0**x,
    "fmod_scalar": lambda T, x: T.fmod(x, 0.7),
    "remainder_scalar": lambda T, x: T.remainder(x, 0.7),
    "rremainder_scalar": lambda T, x: T.remainder(2.0, x),
    "copysign_scalar": lambda T, x: T.copysign(x, -1.0),
    "xlogy_scalar_other": lambda T, x: T.xlogy(x, 2.0),
    "xlogy_scalar_self": lambda T, x: T.xlogy(2.0, x),
    "div_floor_scalar": lambda T, x: T.div(x, 0.3, rounding_mode="floor"),
    "where_scalar": lambda T, x: T.where(x > 1.0, x, 0.0),
    "where_scalars": lambda T, x: T.where(x > 1.0, 1.0, 0.0),
    "pow_float": lambda T, x: x**1.5,
    "relu6": lambda T, x: T.nn.functional.relu6(x),
    "hardshrink": lambda T, x: T.nn.functional.hardshrink(x, 0.5),
    "threshold": lambda T, x: T.nn.functional.threshold(x, 0.5, -1.0),
    "elu": lambda T, x: T.nn.functional.elu(x),
    "hardswish": lambda T, x: T.nn.functional.hardswish(x),
    "nan_to_num": lambda T, x: T.nan_to_num(x),
    "round_decimals": lambda T, x: T.round(x, decimals=1),
    "lerp_scalar": lambda T, x: T.lerp(x, x * 0.0, 0.5),
    "polygamma": lambda T, x: T.polygamma(1, x),
    "mvlgamma": lambda T, x: T.mvlgamma(x + 1.0, 2),
    "sgn": lambda T, x: T.sgn(x),
    "reciprocal": lambda T, x: x.reciprocal(),
    "heaviside_self": lambda T, x: T.heaviside(x, x),
    "gt_scalar": lambda T, x: x > 1.0,
    "eq_scalar": lambda T, x: x == 1.0,
    "logical_not": lambda T, x: T.logical_not(x),
    "masked_fill": lambda T, x: x.masked_fill(x > 1.0, 0.0),
    "to_float32": lambda T, x: x.to(T.float32),
    "float": lambda T, x: x.float(),
    "type_as": lambda T, x: x.type_as(T.zeros(1, dtype=T.float32)),
    "clone": lambda T, x: x.clone(),
    "clone_contiguous": lambda T, x: x.clone(memory_format=T.contiguous_format),
    "contiguous": lambda T, x: x.contiguous(),
    "zeros_like": lambda T, x: T.zeros_like(x),
    "ones_like": lambda T, x: T.ones_like(x),
    "full_like": lambda T, x: T.full_like(x, 3.0),
    "zeros_like_int": lambda T, x: T.zeros_like(x, dtype=T.int64),
    "inplace_mul": lambda T, x: x.clone().mul_(2.0),
    "exp_then_t_mul": lambda T, x: (x.exp() * 1.0).mT * 2.0 if x.dim() >= 2 else x.exp() * 2.0,
}

INT_UNARY = {
    "add_scalar": lambda T, x: x + 1,
    "mul_float": lambda T, x: x * 0.5,
    "neg": lambda T, x: -x,
    "to_float64": lambda T, x: x.to(T.float64),
    "gt_scalar": lambda T, x: x > 3,
    "clone": lambda T, x: x.clone(),
    "abs": lambda T, x: x.abs(),
}

BOOL_UNARY = {
    "logical_not": lambda T, x: T.logical_not(x),
    "to_float": lambda T, x: x.to(T.float64),
    "logical_and_self": lambda T, x: T.logical_and(x, x),
    "clone": lambda T, x: x.clone(),
}

ALL = list(LAYOUTS)


@pytest.mark.parametrize("layout", ALL)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary_result_layout(op, layout):
    got, want = both(lambda T, x: UNARY[op](T, x), layout)
    assert got == want


@pytest.mark.parametrize("layout", ALL)
@pytest.mark.parametrize("op", list(INT_UNARY))
def test_int_result_layout(op, layout):
    got, want = both(lambda T, x: INT_UNARY[op](T, x), layout, dtypes=["int64"])
    assert got == want


@pytest.mark.parametrize("layout", ALL)
@pytest.mark.parametrize("op", list(BOOL_UNARY))
def test_bool_result_layout(op, layout):
    got, want = both(lambda T, x: BOOL_UNARY[op](T, x), layout, dtypes=["bool"])
    assert got == want


BINARY = {
    "add": lambda T, a, b: a + b,
    "mul": lambda T, a, b: a * b,
    "sub": lambda T, a, b: T.sub(a, b, alpha=2),
    "div": lambda T, a, b: a / b,
    "maximum": lambda T, a, b: T.maximum(a, b),
    "atan2": lambda T, a, b: T.atan2(a, b),
    "lt": lambda T, a, b: a < b,
    "eq": lambda T, a, b: T.eq(a, b),
    "logical_and": lambda T, a, b: T.logical_and(a, b),
    "where": lambda T, a, b: T.where(a > 1.0, a, b),
    "where_cond_b": lambda T, a, b: T.where(b > 1.0, a, b),
    "clamp_tensor": lambda T, a, b: T.clamp(a, min=b),
    "lerp": lambda T, a, b: T.lerp(a, b, 0.3),
    "addcmul": lambda T, a, b: T.addcmul(a, b, a),
    "pow_tensor": lambda T, a, b: a**b,
    "copysign": lambda T, a, b: T.copysign(a, b),
}

# pairs of layouts whose shapes broadcast
PAIRS = [
    ("contig_2d", "t"),
    ("t", "contig_2d"),
    ("t", "slice_cols"),
    ("slice_rows_t", "t"),
    ("expand_row", "t"),
    ("t", "expand_col"),
    ("expand_row", "expand_col"),
    ("perm_201", "contig_3d"),
    ("contig_3d", "perm_201"),
    ("perm_201", "perm_120"),
    ("perm_120", "perm_021"),
    ("perm_slice", "perm_201"),
    ("size1_perm", "perm_120"),
    ("size1_mid", "contig_3d"),
    ("cl", "contig_4d"),
    ("contig_4d", "cl"),
    ("cl", "cl_sliced"),
    ("cl_c1", "cl"),
    ("cl_hw1", "cl"),
    ("perm_4d", "cl"),
    ("zero_d", "t"),
    ("t", "zero_d"),
    ("zero_d", "perm_201"),
    ("vec_step", "t"),
    ("t", "vec_step"),
    ("vec_step", "perm_4d"),
    ("t", "t"),
    ("cl", "cl"),
]


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_result_layout(op, pair):
    a, b = pair
    if not _broadcast(a, b):
        pytest.skip("shapes do not broadcast")
    got, want = both(lambda T, x, y: BINARY[op](T, x, y), a, b)
    assert got == want


INPLACE = {
    "add_": lambda T, a, b: a.clone().add_(b),
    "mul_": lambda T, a, b: a.clone().mul_(b),
    "clamp_": lambda T, a, b: a.clone().clamp_(min=b),
    "copy_": lambda T, a, b: a.clone().copy_(b),
    "where_out_of_place_of_inplace": lambda T, a, b: T.where(a > 1.0, a.clone().mul_(2.0), b),
}


@pytest.mark.parametrize("pair", PAIRS, ids="-".join)
@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_keeps_layout(op, pair):
    results = []  # where of shapes that do not broadcast: PyTorch's RuntimeError and message
    for T in (reference, torch):
        x, y = build(T, pair[0]), build(T, pair[1], offset=1 / 3)
        try:
            results.append(observe(T, INPLACE[op](T, x, y)))
        except RuntimeError as e:
            results.append(("raises", str(e)))
    assert results[0] == results[1]


def _broadcast(a, b):
    sa, sb = tuple(build(torch, a).shape), tuple(build(torch, b).shape)
    try:
        torch.broadcast_shapes(sa, sb)
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize(
    "pair", [("t", "contig_2d"), ("perm_201", "contig_3d"), ("cl", "contig_4d")], ids="-".join
)
@pytest.mark.parametrize(
    "dtypes", [("int64", "float64"), ("float64", "int64"), ("bool", "int64"), ("int64", "int64")]
)
def test_mixed_dtype_result_layout(pair, dtypes):
    for op in ("add", "mul", "lt", "maximum"):
        got, want = both(BINARY[op], *pair, dtypes=list(dtypes))
        assert got == want, op


def test_ternary_where_with_three_layouts():
    for names in itertools.permutations(["t", "contig_2d", "slice_cols"]):
        got, want = both(lambda T, c, a, b: T.where(c > 1.0, a, b), *names)
        assert got == want, names
        got, want = both(lambda T, c, a, b: T.clamp(a, min=c, max=b + 5), *names)
        assert got == want, names


@pytest.mark.parametrize("layout", ALL)
@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last", "preserve_format"])
def test_memory_format_arguments(layout, fmt):
    for fn in (
        lambda T, x: x.clone(memory_format=getattr(T, fmt)),
        lambda T, x: T.zeros_like(x, memory_format=getattr(T, fmt)),
        lambda T, x: x.to(T.float32, memory_format=getattr(T, fmt)),
        lambda T, x: x.contiguous(memory_format=getattr(T, fmt)),
    ):
        results = []
        for T in (reference, torch):
            try:
                results.append(observe(T, fn(T, build(T, layout))))
            except RuntimeError as e:
                results.append(("raises", str(e)))
        assert results[0] == results[1]


# ---- gradients: .grad follows AccumulateGrad's layout contract, and the values flowing back --------------

GRAD_OPS = {
    "mul_scalar": lambda T, x: x * 2.0,
    "exp": lambda T, x: x.exp(),
    "t_mul": lambda T, x: (x * 1.0).mT * 2.0 if x.dim() >= 2 else x * 2.0,
    "mul_self": lambda T, x: x * x,
    "where": lambda T, x: T.where(x > 1.0, x, 0.0),
    "to": lambda T, x: x.to(T.float32).to(T.float64),
    "clone": lambda T, x: x.clone(),
    "add_self": lambda T, x: x + x,  # (the same gradient twice: summed out of place)
    "two_layouts": lambda T, x: x * 2.0 + (x.mT.contiguous().mT if x.dim() >= 2 else x) * 3.0,
    "sum_dims": lambda T, x: x.sum(0) if x.dim() else x,
    "mean_keepdim": lambda T, x: x.mean(-1, keepdim=True) * x if x.dim() else x,
}


def _grad_layouts(T, layout, op, create_graph):
    x = build(T, layout).detach().requires_grad_()
    y = GRAD_OPS[op](T, x)
    (g,) = T.autograd.grad((y * y).sum(), x, create_graph=create_graph)
    y2 = GRAD_OPS[op](T, x)
    y2.sum().backward(create_graph=create_graph)
    return observe(T, x.grad), tuple(g.shape)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("layout", [n for n in ALL if not n.startswith("expand")])
@pytest.mark.parametrize("op", list(GRAD_OPS))
def test_grad_layout(op, layout, create_graph):
    assert _grad_layouts(reference, layout, op, create_graph) == _grad_layouts(
        torch, layout, op, create_graph
    )


# The gradients autograd.grad returns (no layout contract): the backward formulas' own layouts.
RAW_GRAD_OPS = {
    "relu": lambda T, x: x.relu(),
    "sigmoid": lambda T, x: x.sigmoid(),
    "tanh": lambda T, x: x.tanh(),
    "gelu": lambda T, x: T.nn.functional.gelu(x),
    "abs": lambda T, x: x.abs(),
    "pow3": lambda T, x: x.pow(3),
    "rdiv": lambda T, x: 1.0 / x,
    "rsub": lambda T, x: 1.0 - x,
    "lerp": lambda T, x: T.lerp(x, x * 2.0, 0.3),
    "log_sigmoid": lambda T, x: T.nn.functional.logsigmoid(x),
    "exp_t": lambda T, x: x.exp().mT if x.dim() >= 2 else x.exp(),
    "mean_all": lambda T, x: x.mean() * x,
    "sum_keepdim": lambda T, x: x.sum(-1, keepdim=True) if x.dim() else x,
    "softmax": lambda T, x: x.softmax(-1) if x.dim() else x,
}


@pytest.mark.parametrize("layout", [n for n in ALL if not n.startswith("expand")])
@pytest.mark.parametrize("op", list(RAW_GRAD_OPS))
def test_raw_gradient_layout(op, layout):
    results = []
    for T in (reference, torch):
        x = build(T, layout).detach().requires_grad_()
        (g,) = T.autograd.grad((RAW_GRAD_OPS[op](T, x) * 1.5).sum(), x)
        results.append(observe(T, g))
    assert results[0] == results[1]


# ---- random layouts ----------------------------------------------------------------------------------------


@st.composite
def random_layouts(draw):
    ndim = draw(st.integers(1, 4))
    shape = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    steps = draw(st.lists(st.integers(1, 2), min_size=ndim, max_size=ndim))
    perm = draw(st.permutations(range(ndim)))
    expand = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
    return shape, steps, perm, expand


def _random_build(T, spec, offset):
    shape, steps, perm, expand = spec
    base = [n * s for n, s in zip(shape, steps)]
    x = T.tensor(np.arange(int(np.prod(base)), dtype=np.float64).reshape(base) / 5.0 + offset)
    x = x[tuple(slice(None, None, s) for s in steps)].permute(*perm)
    size = list(x.shape)
    if any(e and n == 1 for e, n in zip(expand, size)):
        x = x.expand(*[3 if e and n == 1 else n for e, n in zip(expand, size)])
    return x


RANDOM_OPS = {
    "exp": lambda T, a, b: a.exp(),
    "mul_scalar": lambda T, a, b: a * 3.0,
    "add": lambda T, a, b: a + b,
    "mul_swapped": lambda T, a, b: b * a,
    "where": lambda T, a, b: T.where(b > 1.0, a, b),
    "ge": lambda T, a, b: a >= b,
    "clone": lambda T, a, b: a.clone(),
    "to": lambda T, a, b: a.to(T.float32),
    "zeros_like": lambda T, a, b: T.zeros_like(a),
}


@settings(max_examples=150, deadline=None)
@given(random_layouts(), random_layouts(), st.sampled_from(sorted(RANDOM_OPS)), st.booleans())
def test_random_layouts_match_torch(spec_a, spec_b, op, same_shape):
    if same_shape:  # b: a's shape in another layout
        spec_b = _same_shape(spec_a, spec_b)
    try:
        torch.broadcast_shapes(_random_build(torch, spec_a, 0).shape, _random_build(torch, spec_b, 0).shape)
    except RuntimeError:
        assume(False)
    results = []
    for T in (reference, torch):
        a, b = _random_build(T, spec_a, 0.5), _random_build(T, spec_b, 0.25)
        try:
            results.append(observe(T, RANDOM_OPS[op](T, a, b)))
        except RuntimeError as e:
            results.append(("raises", str(e).split(" at ")[0][:40]))
    assert results[0] == results[1]


def _same_shape(spec_a, spec_b):
    shape, steps, perm, expand = spec_a
    ndim = len(shape)
    sizes_out = [shape[p] for p in perm]  # a's shape (before expanding)
    perm_b = spec_b[2] if len(spec_b[2]) == ndim else list(range(ndim))
    base_b = [0] * ndim
    for out_dim, p in enumerate(perm_b):
        base_b[p] = sizes_out[out_dim]
    steps_b = (list(spec_b[1]) + [1] * ndim)[:ndim]
    return base_b, steps_b, perm_b, expand


# ---- the program that found it ----------------------------------------------------------------------------


def test_program_case_elementwise_result_strides_agrees():
    from conformance.case import load_cases
    from conformance.programs import execute, program_inputs

    (case,) = load_cases(ROOT / "refgrad" / "cases" / "programs" / "elementwise_result_strides.json")
    got = execute(case.source, reference, program_inputs(case))
    want = execute(case.source, torch, program_inputs(case))
    assert got.keys() == want.keys()
    for k in got:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_issue_example():
    """``v3 = (v0 * 1.0).t() * 2.0`` is column-major, so ``reshape(6)`` copies and the write is lost."""
    for T in (reference, torch):
        v0 = T.tensor(np.arange(6.0).reshape(2, 3))
        v3 = (v0 * 1.0).t() * 2.0
        assert v3.stride() == (1, 3) and not v3.is_contiguous()
        v3.reshape(6)[:1].add_(1.0)
        assert v3[0, 0].item() == 0.0
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            v3.view(6)
