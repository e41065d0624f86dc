"""One program text, two autodiff systems: the reference must match PyTorch's outcome exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import reference
from tests.autograd.programs import assert_same_outcome, programs, run
from tests.autograd.torch_programs import PROGRAMS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _inputs(shapes, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("name, prog, shapes", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_program_matches_torch(name, prog, shapes):
    arrays = _inputs(shapes, seed=len(name))
    expected = run(prog, torch, arrays)
    got = run(prog, reference, arrays)
    assert_same_outcome(got, expected, label=name, rtol=1e-8, atol=1e-10)


@given(programs())
def test_random_view_inplace_program_matches_torch(program):
    prog = program.function()
    arrays = program.inputs()
    expected = run(prog, torch, arrays)
    got = run(prog, reference, arrays)
    assert_same_outcome(got, expected, label="\n" + program.source())


def test_comparison_catches_a_planted_gradient_bug(monkeypatch):
    """The comparison can fail: a wrong VJP for exp in the table is caught by a program using exp."""
    from reference.ops.rules import RULES

    monkeypatch.setattr(RULES["exp"], "grads", (lambda c, g: g * c.result * 1.001,))
    prog = dict((p[0], p[1]) for p in PROGRAMS)["second_backward_with_retain"]
    arrays = _inputs([(3,)], 0)
    with pytest.raises(AssertionError, match="input.grad"):
        assert_same_outcome(run(prog, reference, arrays), run(prog, torch, arrays))


def test_comparison_catches_a_missing_version_check(monkeypatch):
    """Saving without a version check would let a stale value through; the comparison sees it."""
    from reference.autograd import graph

    monkeypatch.setattr(graph.SavedTensor, "unpack", lambda self: self.tensor)
    prog = dict((p[0], p[1]) for p in PROGRAMS)["saved_output_modified_raises"]
    arrays = _inputs([(3,)], 0)
    with pytest.raises(AssertionError, match="PyTorch raised"):
        assert_same_outcome(run(prog, reference, arrays), run(prog, torch, arrays))


_OPERANDS = {
    "f32": lambda M: M.tensor([1.5, 2.0], dtype=M.float32),
    "f64": lambda M: M.tensor([1.5, 2.0], dtype=M.float64),
    "i64": lambda M: M.tensor([1, 2]),
    "bool": lambda M: M.tensor([True, False]),
    "f64_0d": lambda M: M.tensor(2.5, dtype=M.float64),
    "i64_0d": lambda M: M.tensor(3),
    "float": lambda M: 2.5,
    "int": lambda M: 3,
    "pybool": lambda M: True,
}
_BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a**b,
}
_SCALARS = ("float", "int", "pybool")
_PAIRS = [
    (op, a, b)
    for op in _BINARY
    for a in _OPERANDS
    for b in _OPERANDS
    if not (a in _SCALARS and b in _SCALARS)
]


@pytest.mark.parametrize("op, a, b", _PAIRS, ids=[f"{o}-{a}-{b}" for o, a, b in _PAIRS])
def test_type_promotion_matches_torch(op, a, b):
    """PyTorch's result_type (dim tensors > 0-d tensors > Python numbers) and its bool-operand errors."""
    outcomes = []
    for M in (torch, reference):
        try:
            r = _BINARY[op](_OPERANDS[a](M), _OPERANDS[b](M))
            outcomes.append((str(r.dtype).replace("torch.", ""), np.asarray(r.numpy(), dtype=np.float64)))
        except (RuntimeError, NotImplementedError) as exc:
            outcomes.append((type(exc).__name__, None))
    (dt_t, v_t), (dt_r, v_r) = outcomes
    assert dt_r == dt_t
    if v_t is not None:
        np.testing.assert_allclose(v_r, v_t, rtol=1e-6, equal_nan=True)


# PyTorch names two of matmul's view nodes after their in-place/alias variants; same semantics.
_NODE_ALIASES = {
    "SqueezeBackward4": "SqueezeBackward0",
    "SqueezeBackward1": "SqueezeBackward0",
    "ReshapeAliasBackward0": "ViewBackward0",
}


def _graph(fn, depth=0):
    if fn is None or depth > 6:
        return None
    kids = tuple(
        _graph(f, depth + 1)
        for f, _ in fn.next_functions
        if f is not None and "AccumulateGrad" not in f.name()
    )
    return (_NODE_ALIASES.get(fn.name(), fn.name()), kids)


_MATMUL_CASES = [
    (sa, sb, flip, rga, rgb)
    for sa in [(3,), (2, 3), (2, 2, 3), (1, 2, 4, 3), (3, 2, 4, 3)]
    for sb in [(3,), (3, 5), (2, 3, 5), (1, 3, 5), (2, 1, 3, 5)]
    for flip in (False, True)
    for rga, rgb in ((True, True), (True, False), (False, True))
]


@pytest.mark.parametrize("sa, sb, flip, rga, rgb", _MATMUL_CASES)
def test_matmul_decomposes_and_saves_like_torch(sa, sb, flip, rga, rgb):
    """matmul's graph (dot/mv/mm/folded mm/bmm and the reshapes around them) and which inputs it saves
    (shown by an in-place write to both operands afterwards) are PyTorch's."""
    outcomes = []
    for M in (torch, reference):
        rng = np.random.default_rng(0)
        shape_a = sa[:-2] + (sa[-1], sa[-2]) if flip and len(sa) >= 2 else sa
        x = M.tensor(rng.standard_normal(shape_a), dtype=M.float64, requires_grad=rga)
        w = M.tensor(rng.standard_normal(sb), dtype=M.float64, requires_grad=rgb)
        a, b = x * 1.0, w * 1.0
        if flip and len(sa) >= 2:
            a = a.transpose(-1, -2)
        try:
            c = a @ b
        except RuntimeError:
            outcomes.append("shape error")
            continue
        graph = _graph(c.grad_fn)
        value = np.array(c.detach().numpy(), copy=True)
        (a._base if a._base is not None else a).add_(1)
        b.add_(1)
        try:
            c.sum().backward()
            raised = False
        except RuntimeError:
            raised = True
        outcomes.append((graph, value.shape, raised, value.round(9).tolist()))
    assert outcomes[0] == outcomes[1]


_POOL_CASES = [
    (kind, hw, k, s, p, d, ceil, cip, div)
    for kind in ("max", "avg")
    for hw in ((5, 6), (7, 5))
    for k in (2, 3)
    for s in (1, 2)
    for p in (0, 1)
    for d in ((1, 2) if kind == "max" else (1,))
    for ceil in (False, True)
    for cip in ((True,) if kind == "max" else (True, False))
    for div in ((None,) if kind == "max" else (None, 5))
]


@pytest.mark.parametrize("kind, hw, k, s, p, d, ceil, cip, div", _POOL_CASES)
def test_pooling_matches_torch(kind, hw, k, s, p, d, ceil, cip, div):
    """Window geometry (padding, dilation, ceil mode), divisors and tie-free gradients of 2-d pooling."""
    data = np.random.default_rng(k * 10 + s).standard_normal((2, 2) + hw)
    results = []
    for M in (torch, reference):
        x = M.tensor(data, dtype=M.float64, requires_grad=True)
        F = M.nn.functional
        if kind == "max":
            y, idx = F.max_pool2d(x, k, s, p, d, ceil_mode=ceil, return_indices=True)
            results.append(np.asarray(idx.numpy()).tolist())  # flat argmax per plane, int64
        else:
            y = F.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=cip, divisor_override=div)
        (y * y).sum().backward()
        results.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    if kind == "max":
        assert results.pop(2) == results.pop(0)  # the reference's indices equal PyTorch's
    (yt, gt), (yr, gr) = results
    assert yr.shape == yt.shape
    np.testing.assert_allclose(yr, yt, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gr, gt, rtol=1e-12, atol=1e-14)


_NAMED = {
    "x+2": lambda T, x, y: x + 2,
    "x*2": lambda T, x, y: x * 2,
    "x-2": lambda T, x, y: x - 2,
    "x/2": lambda T, x, y: x / 2,
    "2-x": lambda T, x, y: 2 - x,
    "2/x": lambda T, x, y: 2 / x,
    "x**2": lambda T, x, y: x**2,
    "2**x": lambda T, x, y: 2**x,
    "x**y": lambda T, x, y: x**y,
    "sum": lambda T, x, y: x.sum(),
    "sum_dim": lambda T, x, y: x.sum(0),
    "mean": lambda T, x, y: x.mean(),
    "mean_dim": lambda T, x, y: x.mean(0),
    "squeeze": lambda T, x, y: x[None].squeeze(),
    "squeeze_dim": lambda T, x, y: x[None].squeeze(0),
    "squeeze_dims": lambda T, x, y: x[None].squeeze((0,)),
    "clamp": lambda T, x, y: x.clamp(0, 1),
    "where": lambda T, x, y: T.where(x > 0, x, y),
    "add_alpha": lambda T, x, y: T.add(x, y, alpha=2),
    "amax": lambda T, x, y: x.amax(),
    "expand": lambda T, x, y: x.expand(2, 3),
    "view": lambda T, x, y: x.view(3, 1),
    "neg": lambda T, x, y: -x,
    "abs": lambda T, x, y: x.abs(),
    "relu": lambda T, x, y: x.relu(),
    "softmax": lambda T, x, y: x.softmax(0),
    "log_softmax": lambda T, x, y: x.log_softmax(0),
    "cat": lambda T, x, y: T.cat([x, y]),
    "stack": lambda T, x, y: T.stack([x, y]),
    "unbind": lambda T, x, y: x.unbind()[0],
    "chunk": lambda T, x, y: x.chunk(3)[0],
    "split_sizes": lambda T, x, y: x.split([1, 2])[0],
    "narrow": lambda T, x, y: x.narrow(0, 0, 2),
    "as_strided": lambda T, x, y: x.as_strided((2,), (1,)),
    "t": lambda T, x, y: x.t(),
    "float": lambda T, x, y: x.float(),
    "clone": lambda T, x, y: x.clone(),
    "sign": lambda T, x, y: x.sign(),
    "maximum": lambda T, x, y: T.maximum(x, y),
    "masked_fill": lambda T, x, y: x.masked_fill(x > 0, 1.0),
    "select": lambda T, x, y: x[0],
    "slice": lambda T, x, y: x[1:],
    "unsqueeze": lambda T, x, y: x[None],
    "alias": lambda T, x, y: x[...],
    "diagonal": lambda T, x, y: x[None].diagonal(),
    "permute": lambda T, x, y: x[None].permute(1, 0),
    "mul_": lambda T, x, y: (x * 1).mul_(y),
    "fill_": lambda T, x, y: (x * 1).fill_(2.0),
    "setitem": lambda T, x, y: _set(x * 1),
    "copy_": lambda T, x, y: (x * 1).copy_(y),
    "copyslices": lambda T, x, y: _set_part(x * 1, y),
    "view_after_inplace": lambda T, x, y: _view_after(x * 1),
    "accumulate_grad": lambda T, x, y: _first_child(x * 1),
}


def _set_part(a, y):
    a[1:] = y[1:]
    return a


def _view_after(a):
    v = a[1:]
    a.mul_(2)
    return v


class _Named:
    def __init__(self, fn):
        self.grad_fn = fn


def _first_child(t):
    return _Named(t.grad_fn.next_functions[0][0])


def _set(a):
    a[:] = 3.0
    return a


@pytest.mark.parametrize("name", sorted(_NAMED))
def test_grad_fn_names_match_torch(name):
    """Node names appear in PyTorch's error messages ("output 0 of Exp"), so they must match."""
    names = []
    for M in (torch, reference):
        x = M.tensor([1.0, -2.0, 3.0], dtype=M.float64, requires_grad=True)
        y = M.tensor([0.5, 2.0, 1.0], dtype=M.float64, requires_grad=True)
        names.append(_NAMED[name](M, x, y).grad_fn.name())
    assert names[1] == names[0]


def test_torch_register_hook_crash_is_still_there_and_the_reference_runs_it():
    """Documents a PyTorch 2.13 segfault the generator steers around (checked in a subprocess)."""
    import subprocess
    import sys

    from tests.autograd.programs import TORCH_REGISTER_HOOK_CRASH

    script = (
        "import torch\n"
        + TORCH_REGISTER_HOOK_CRASH
        + "\nprog(torch, torch.ones(3, dtype=torch.float64, requires_grad=True))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    scope = {}
    exec(TORCH_REGISTER_HOOK_CRASH, scope)
    scope["prog"](reference, reference.ones(3, dtype=reference.float64, requires_grad=True))
    if done.returncode == 0:
        pytest.skip("this PyTorch no longer crashes here: let the generator register hooks on views again")
    assert done.returncode < 0 or done.returncode == 139


_BN_CASES = [
    (shape, training, affine, momentum)
    for shape in ((4, 3), (2, 3, 5), (2, 3, 2, 3), (2, 2, 2, 1, 3))
    for training in (True, False)
    for affine in (True, False)
    for momentum in (0.1, 0.7)
]


@pytest.mark.parametrize("shape, training, affine, momentum", _BN_CASES)
def test_batch_norm_and_its_double_backward_match_torch(shape, training, affine, momentum):
    rng = np.random.default_rng(len(shape) * 7 + training)
    arrays = [rng.standard_normal(shape), rng.standard_normal(shape[1]), rng.standard_normal(shape[1])]
    v = rng.standard_normal(shape)
    outs = []
    for M in (torch, reference):
        x, w, b = (M.tensor(a, dtype=M.float64, requires_grad=True) for a in arrays)
        rm = M.tensor(np.linspace(-0.5, 0.5, shape[1]), dtype=M.float64)
        rv = M.tensor(np.linspace(0.5, 1.5, shape[1]), dtype=M.float64)
        weight, bias = (w, b) if affine else (None, None)
        y = M.nn.functional.batch_norm(
            x, rm, rv, weight, bias, training=training, momentum=momentum, eps=1e-3
        )
        gx, *gwb = M.autograd.grad(
            y, (x, w, b) if affine else (x,), M.tensor(v, dtype=M.float64), create_graph=True
        )
        try:  # eval mode without weight: x does not reach the first gradient, "unused" in both
            second = M.autograd.grad(
                (gx * gx).sum() + sum((g * g).sum() for g in gwb), (x, w) if affine else (x,)
            )
        except RuntimeError as exc:
            second = [str(exc)]
        outs.append(
            [
                t if isinstance(t, str) else np.array(t.detach().numpy(), copy=True)
                for t in (y, rm, rv, gx, *gwb, *second)
            ]
        )
    for k, (r, t) in enumerate(zip(outs[1], outs[0])):
        if isinstance(t, str) or isinstance(r, str):
            assert r == t, f"output {k}"
        else:
            np.testing.assert_allclose(r, t, rtol=1e-9, atol=1e-11, err_msg=f"output {k}")
