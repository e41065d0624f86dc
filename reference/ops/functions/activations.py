"""Activation functions with PyTorch's ``torch.nn.functional`` names, signatures and errors (and
the ``torch.*`` / ``Tensor`` names PyTorch also has: ``selu``, ``celu``, ``rrelu``, ``prelu``,
``hardshrink``, ``threshold``).

Deliberate difference, the reference's rule that randomness is explicit: ``rrelu`` with
``training=True`` draws no random slopes; it takes them as ``noise=`` (a tensor shaped like
``input`` of slopes drawn from U(lower, upper); only the entries where ``input <= 0`` are read,
as PyTorch sets the others to 1) and raises without it.

``inplace=True`` is supported where PyTorch's in-place kernel and out-of-place kernel have the
same derivative node (``threshold``, ``hardtanh``/``relu6``, ``leaky_relu``, ``elu``/``selu``/
``celu``, ``rrelu``): it writes the result into ``input`` (see :func:`_inplace`).
"""

from __future__ import annotations

from reference.autograd.dispatch import apply
from reference.autograd.tensor import Tensor, default_dtype
from reference.backend import is_floating, is_inexact
from reference.ops import api as A
from reference.ops.api import R
from reference.scalar_types import scalar_type_name


def _floating_only(input, kernel):
    if not is_floating(input.dtype):
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")


def _inplace(rule, input, params):
    """PyTorch's in-place activation kernels save their result (the input's old value is gone);
    the reference's rules read ``self``, so the in-place form runs the out-of-place rule on a
    clone of the input and copies the result into ``input``: the same values and gradients, with
    CloneBackward0 / CopyBackwards nodes in the graph where PyTorch has one node."""
    out = apply(rule, (A.clone(input),), params)
    return A.copy_(input, out)


def _run(rule, input, params, inplace=False, kernel=None):
    _floating_only(input, kernel or rule.name)
    if inplace:
        return _inplace(rule, input, params)
    return apply(rule, (input,), params)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _run(R.gelu, input, {"approximate": approximate}, kernel="GeluKernelImpl")


def silu(input, inplace=False):
    return _run(R.silu, input, {}, inplace, "silu")


def mish(input, inplace=False):
    return _run(R.mish, input, {}, inplace, "mish")


def elu(input, alpha=1.0, inplace=False):
    return _run(R.elu, input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0}, inplace, "elu")


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _run(
        R.elu, input, {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0}, inplace, "elu"
    )


def celu(input, alpha=1.0, inplace=False):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _run(R.celu, input, {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha}, inplace, "elu")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _run(R.leaky_relu, input, {"negative_slope": negative_slope}, inplace)


def prelu(input, weight):
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu(): argument 'weight' must be Tensor, not {type(weight).__name__}")
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{n} and channel size = {channels}."
        )
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    if input.ndim >= 2 and n > 1:  # PyTorch reshapes the weight to (C, 1, ..., 1) to broadcast over dim 1
        weight = A.reshape(weight, (n,) + (1,) * (input.ndim - 2))
    if input.ndim == 0 and weight.ndim == 1:  # the output keeps the 0-d input's shape
        weight = A.reshape(weight, ())
    dt = A.result_type(input, weight)
    return apply(R.prelu, (input, weight), {}, cast=None if input.dtype == weight.dtype == dt else dt)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, *, noise=None):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        if noise is None:
            raise RuntimeError(
                "rrelu(training=True) draws a random slope for every element; the reference takes them "
                "explicitly: pass noise= (a tensor shaped like input, slopes drawn from U(lower, upper); "
                "entries where input > 0 are not read)"
            )
        if tuple(noise.shape) != tuple(input.shape):
            raise RuntimeError(
                f"rrelu: noise of shape {list(noise.shape)} must have the input's shape {list(input.shape)}"
            )
    else:
        noise = A.zeros_like(input) if noise is None else noise  # not read in evaluation mode
    _floating_only(input, "rrelu_with_noise")
    params = {"lower": lower, "upper": upper, "training": bool(training)}
    out = apply(R.rrelu_with_noise, (A.clone(input) if inplace else input, noise), params)
    return A.copy_(input, out) if inplace else out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, *, noise=None):
    return rrelu(input, lower, upper, training, True, noise=noise)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if not is_floating(input.dtype):  # PyTorch's integer hardtanh: a clamp with the bounds as integers
        return A.clamp(input, int(min_val), int(max_val))
    return _run(R.hardtanh, input, {"min_val": min_val, "max_val": max_val}, inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def hardsigmoid(input, inplace=False):
    return _run(R.hardsigmoid, input, {}, inplace)


def hardswish(input, inplace=False):
    return _run(R.hardswish, input, {}, inplace)


def softplus(input, beta=1.0, threshold=20.0):
    return _run(R.softplus, input, {"beta": beta, "threshold": threshold})


def softsign(input):
    """input / (1 + |input|): a composite in PyTorch (DivBackward0 over AbsBackward0)."""
    return input / (A.abs(input) + 1)


def sparse_plus(input):
    """jax.nn.sparse_plus: 0 for x <= -1, (x + 1)²/4 for -1 < x < 1, x for x >= 1, as JAX's where
    over the three pieces (PyTorch has none). The first derivative is continuous; the second jumps
    at ±1, where this (as JAX) takes the outer piece's 0. The inner piece reads x only inside (-1,
    1) (0 elsewhere), so that its derivative is finite where it is not selected: the limits 0 and
    1 at ∓inf, not 0·inf = nan."""
    zero = A.zeros_like(input)
    inside = A.where(A.logical_or(input <= -1, input >= 1), zero, input)  # (a nan stays nan)
    inner = (inside + 1) * (inside + 1) / 4
    return A.where(input <= -1, zero, A.where(input >= 1, input, inner))


def sparse_sigmoid(input):
    """jax.nn.sparse_sigmoid, sparse_plus' derivative: (x + 1)/2 clamped to [0, 1], as JAX's 0.5 *
    clip(x + 1, 0, 2) (PyTorch has none). At the knots ±1 the derivative has no value: this takes
    clamp's, 1/2 (PyTorch's clamp passes the gradient at its bounds); JAX's clip splits the tie, 1/4
    (a declared convention of the record)."""
    return A.clamp(input + 1, 0, 2) * 0.5


def log1mexp(input):
    """jax.nn.log1mexp: log(1 - e^-x), defined for x >= 0 (-inf at 0, nan below; PyTorch has none),
    over the exact primitive reference/ops/rules/special_log1mexp.py (every derivative order exact;
    integer inputs promote to the default dtype, as JAX's)."""
    cast = None if is_inexact(input.dtype) else default_dtype.value
    return apply(R.log1mexp, (input,), {}, cast=cast)


def tanhshrink(input):
    """input - tanh(input): a composite in PyTorch (SubBackward0)."""
    return input - A.tanh(input)


def hardshrink(input, lambd=0.5):
    return _run(R.hardshrink, input, {"lambd": lambd})


def softshrink(input, lambd=0.5):
    if lambd < 0:
        finfo = {"float32": "3.40282e+38", "float64": "1.79769e+308"}.get(input.dtype.name, "inf")
        raise RuntimeError(
            f"lambda must be in range [0, {finfo}] for input dtype {scalar_type_name(input.dtype)}, but found {lambd}"
        )
    return _run(R.softshrink, input, {"lambd": lambd})


def logsigmoid(input):
    return _run(R.log_sigmoid, input, {}, kernel="log_sigmoid")


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = A._dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    _floating_only(input, "glu")
    return apply(R.glu, (input,), {"dim": d})


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input): a composite in PyTorch (SoftmaxBackward0 over NegBackward0)."""
    x = input if dtype is None else A.to(input, dtype)
    return A.softmax(-x, dim)


def threshold(input, threshold, value, inplace=False):
    if not is_floating(input.dtype):  # no gradient for integers: the same values, computed directly
        return A.where(A.le(input, threshold), A._wrap(value, input.dtype), input)
    if inplace:
        return _inplace(R.threshold, input, {"threshold": threshold, "value": value})
    return apply(R.threshold, (input,), {"threshold": threshold, "value": value})


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, True)


def _inplace_variant(fn):
    def op_(input, *args, **kwargs):
        return fn(input, *args, inplace=True, **kwargs)

    op_.__name__ = fn.__name__ + "_"
    return op_


elu_, selu_, celu_, leaky_relu_, hardtanh_ = (
    _inplace_variant(f) for f in (elu, selu, celu, leaky_relu, hardtanh)
)

NN_FUNCTIONAL = [
    "gelu",
    "silu",
    "mish",
    "elu",
    "selu",
    "celu",
    "leaky_relu",
    "prelu",
    "rrelu",
    "hardtanh",
    "relu6",
    "hardsigmoid",
    "hardswish",
    "softplus",
    "softsign",
    "sparse_plus",
    "log1mexp",
    "sparse_sigmoid",
    "tanhshrink",
    "hardshrink",
    "softshrink",
    "logsigmoid",
    "glu",
    "softmin",
    "threshold",
    "elu_",
    "selu_",
    "celu_",
    "leaky_relu_",
    "hardtanh_",
    "rrelu_",
    "threshold_",
]
__all__ = [
    "selu",
    "celu",
    "rrelu",
    "prelu",
    "hardshrink",
    "threshold",
    "selu_",
    "celu_",
    "rrelu_",
    "threshold_",
]
METHODS = {"prelu": prelu, "hardshrink": hardshrink}
