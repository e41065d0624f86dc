"""float16 and bfloat16 are differentiable, as in PyTorch: leaves require grad, backward and
``autograd.grad`` run, gradients keep the dtype, and values agree with torch's own float16 /
bfloat16 results (bfloat16 is ml_dtypes' dtype, whose NumPy kind is "V": every floating-dtype
test goes through ``reference.backend.is_floating``).

The bound: both sides round each op's result to the format once (PyTorch's CPU kernels compute
half types in float32 and round; the reference's kernels do the same: NumPy's float16 loops,
ml_dtypes' bfloat16 loops and the float32-and-round paths of the rules), so a forward value and
its first-order gradient carry a few unit roundoffs of the result's scale each; they are
compared normwise, ``|ref - torch| <= 8 u max|torch|`` (u = 2^-11 for float16, 2^-8 for
bfloat16)."""

from __future__ import annotations

import numpy as np
import pytest

import reference as T
from reference.backend import is_floating, is_inexact

torch = pytest.importorskip("torch")

U = {"float16": 2.0**-11, "bfloat16": 2.0**-8}


def _np(t):
    if isinstance(t, torch.Tensor):
        return (t.detach().float() if t.dtype == torch.bfloat16 else t.detach()).numpy().astype(np.float64)
    return t.detach().numpy().astype(np.float64)


OPS = {
    "add": lambda M, x, y: x + y,
    "mul": lambda M, x, y: x * y,
    "div": lambda M, x, y: x / (y.abs() + 1),
    "exp": lambda M, x, y: x.exp(),
    "sin": lambda M, x, y: M.sin(x),
    "tanh": lambda M, x, y: x.tanh(),
    "sigmoid": lambda M, x, y: M.sigmoid(x),
    "log": lambda M, x, y: (x.abs() + 1).log(),
    "pow": lambda M, x, y: (x.abs() + 1) ** y,
    "erf": lambda M, x, y: M.erf(x),
    "gelu": lambda M, x, y: M.nn.functional.gelu(x),
    "softmax": lambda M, x, y: M.softmax(x, -1),
    "log_softmax": lambda M, x, y: M.log_softmax(x, -1),
    "sum": lambda M, x, y: x.sum(0),
    "mean": lambda M, x, y: x.mean(),
    "amax": lambda M, x, y: x.amax(1),
    "matmul": lambda M, x, y: x @ y.t(),
    "layer_norm": lambda M, x, y: M.nn.functional.layer_norm(x, (4,)),
    "where": lambda M, x, y: M.where(x > 0, x, y),
    "cumsum": lambda M, x, y: x.cumsum(1),
    "var": lambda M, x, y: x.var(1),
    "vector_norm": lambda M, x, y: M.linalg.vector_norm(x, dim=1),
    "mse_loss": lambda M, x, y: M.nn.functional.mse_loss(x, y),
    "cross_entropy": lambda M, x, y: M.nn.functional.cross_entropy(x, M.tensor([0, 1, 3])),
    "conv1d": lambda M, x, y: M.nn.functional.conv1d(x[None], y[:, :3, None].reshape(3, 3, 1)),
    "max_pool1d": lambda M, x, y: M.nn.functional.max_pool1d(x[None], 2),
    "interpolate": lambda M, x, y: M.nn.functional.interpolate(x[None], size=6, mode="linear"),
    "gather": lambda M, x, y: x.gather(1, M.tensor([[0], [2], [1]])),
    "index": lambda M, x, y: x[M.tensor([2, 0])],
    "round": lambda M, x, y: M.round(x * 4) + x,
    "grid_sample": lambda M, x, y: M.nn.functional.grid_sample(
        x[None, None], y.reshape(1, 3, 2, 2) / 2, mode="bicubic", align_corners=False
    ),
}


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_gradients_agree_with_torch(dtype, name):
    if name == "grid_sample" and dtype == "bfloat16":
        pytest.skip(
            "torch's bfloat16 grid sampler rounds every scalar op to bfloat16 in its own order (it departs "
            "from float32-then-round by 0.4 on this grid gradient); no few-u bound holds between two orders"
        )
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    got = []
    for M in (torch, T):
        x = M.tensor(a, dtype=getattr(M, dtype), requires_grad=True)
        y = M.tensor(b, dtype=getattr(M, dtype), requires_grad=True)
        out = OPS[name](M, x, y)
        w = M.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=getattr(M, dtype))
        grads = M.autograd.grad((out * w).sum(), (x, y), allow_unused=True)
        got.append((out, *grads))
    for t, r in zip(*got):
        assert (t is None) == (r is None)
        if t is None:
            continue
        assert str(r.dtype) == dtype and str(t.dtype) == f"torch.{dtype}"
        want, have = _np(t), _np(r)
        assert want.shape == have.shape
        scale = np.abs(want).max() if want.size else 0.0
        np.testing.assert_array_less(np.abs(have - want), 8 * U[dtype] * scale + 1e-30)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_leaves_backward(dtype):
    """requires_grad on factories and requires_grad_(), ``.backward()`` accumulating ``.grad`` in
    the leaf's dtype, forward-mode dual numbers, as torch."""
    for M in (torch, T):
        x = M.ones(3, dtype=getattr(M, dtype), requires_grad=True)
        z = M.tensor([0.5, 1.5, -2.0], dtype=getattr(M, dtype)).requires_grad_()
        assert x.requires_grad and z.requires_grad and z.is_leaf
        ((x * z).sum() * 2).backward()
        assert str(x.grad.dtype).endswith(dtype) and str(z.grad.dtype).endswith(dtype)
        np.testing.assert_array_equal(_np(x.grad), [1.0, 3.0, -4.0])
        np.testing.assert_array_equal(_np(z.grad), [2.0, 2.0, 2.0])
        out, tangent = M.func.jvp(M.sin, (z.detach(),), (M.ones(3, dtype=getattr(M, dtype)),))
        assert str(tangent.dtype).endswith(dtype)


def test_is_floating_knows_bfloat16():
    for name in ("float16", "bfloat16", "float32", "float64"):
        dt = getattr(T, name)
        assert is_floating(dt) and is_inexact(dt) and T.ones(1, dtype=dt).is_floating_point()
    for name in ("int64", "int32", "uint8", "bool"):
        assert not is_floating(getattr(T, name)) and not is_inexact(getattr(T, name))
    assert is_inexact(T.complex64) and not is_floating(T.complex64)
    with pytest.raises(RuntimeError, match="floating point"):
        T.ones(2, dtype=T.int64, requires_grad=True)
