"""Neural-network primitives: softmax, pooling, batch norm, dropout.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

from reference import errors
from reference.autograd.engine import grad
from reference.autograd.forward_ad import forward_through
from reference.autograd.grad_mode import enable_grad, grad_state, no_grad
from reference.autograd.tensor import _make
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.batch_rules import (
    batch_norm_backward_batch,
    batch_norm_batch,
)
from reference.ops.rule import (
    AUTO_ELEMENT_WISE,
    BATCH_DIM,
    BATCH_ELEMENTWISE,
)
from reference.ops.rules.registry import rule

# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _softmax_steps(x, dim):
    """softmax as the frameworks compute it: exp(x - max), then one reciprocal of the sum times each
    (PyTorch's CPU kernel multiplies by 1/sum: two roundings, which also bound one division)."""
    e = A.exp(x - A.amax(x, dim, keepdim=True))
    return e * A.reciprocal(A.sum(e, dim, keepdim=True))


def _log_softmax_steps(x, dim):
    shifted = x - A.amax(x, dim, keepdim=True)
    return shifted - A.log(A.sum(A.exp(shifted), dim, keepdim=True))


_SOFTMAX_ERROR = errors.composite(_softmax_steps, "max-subtracted exp, sum, reciprocal, product")
_LOG_SOFTMAX_ERROR = errors.composite(_log_softmax_steps, "x - max - log(sum(exp(x - max)))")


def _batch_norm_steps(x, w, b, rm, rv, training, momentum, eps):
    """(x - mean) / sqrt(var + eps) * w + b with the batch statistics (or the running ones)."""
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        xc = x - A.mean(x, dims, keepdim=True)
        var = A.mean(xc * xc, dims, keepdim=True)
    else:
        xc = x - A.reshape(rm, bshape)
        var = A.reshape(rv, bshape)
    y = xc / A.sqrt(var + eps)
    if w is not None:
        y = y * A.reshape(w, bshape)
    return y + A.reshape(b, bshape) if b is not None else y


_BATCH_NORM_ERROR = errors.composite(_batch_norm_steps, "batch statistics, centring, sqrt, scale, shift")
_BATCH_NORM_BACKWARD_ERROR = errors.composite(
    lambda g, x, w, rm, rv, training, eps, mask: batch_norm_backward_formulas(
        g, x, w, rm, rv, training, eps, mask
    ),
    "its own Tensor formulas (batch_norm_backward_formulas)",
)

# ---- softmax -------------------------------------------------------------------------------------

rule(
    "softmax",
    "SoftmaxBackward0",
    ("self",),
    forward=K.softmax,
    grads=(lambda c, g: c.result * (g - A.sum(g * c.result, c.dim, keepdim=True)),),
    saves={"result": (0,)},
    jvp=(lambda c, t: c.result * (t - A.sum(t * c.result, c.dim, keepdim=True)),),
    batch=BATCH_DIM,
    error=_SOFTMAX_ERROR,
)
rule(
    "log_softmax",
    "LogSoftmaxBackward0",
    ("self",),
    forward=K.log_softmax,
    grads=(lambda c, g: g - A.exp(c.result) * A.sum(g, c.dim, keepdim=True),),
    saves={"result": (0,)},
    jvp=(lambda c, t: t - A.sum(A.exp(c.result) * t, c.dim, keepdim=True),),
    batch=BATCH_DIM,
    error=_LOG_SOFTMAX_ERROR,
)

# ---- neural-network primitives -------------------------------------------------------------------


def batch_norm_backward_formulas(g, x, w, running_mean, running_var, training, eps, mask):
    """Batch norm's first-order gradients (grad_input, grad_weight, grad_bias) in Tensor ops;
    ``mask`` says which to compute (None for the others)."""
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if training:
        xc = x - A.mean(x, dims, keepdim=True)
        invstd = A.pow(A.mean(xc * xc, dims, keepdim=True) + eps, -0.5)
    else:
        xc = x - A.reshape(running_mean, bshape)
        invstd = A.pow(A.reshape(running_var, bshape) + eps, -0.5)
    xhat = xc * invstd
    gw = g * A.reshape(w, bshape) if w is not None else g
    gx = gweight = gbias = None
    if mask[0]:
        if training:
            gx = invstd * (gw - A.mean(gw, dims, keepdim=True) - xhat * A.mean(gw * xhat, dims, keepdim=True))
        else:
            gx = gw * invstd
    if mask[1]:
        gweight = A.sum(g * xhat, dims)
    if mask[2]:
        gbias = A.sum(g, dims)
    return gx, gweight, gbias


def batch_norm_backward_arrays(g, x, w, rm, rv, training, eps, mask):
    """The forward of batch_norm_backward: the Tensor formulas evaluated without recording."""
    wrap = [None if a is None else _make(a) for a in (g, x, w, rm, rv)]
    with no_grad():
        outs = batch_norm_backward_formulas(*wrap, training, eps, mask)
    xp = namespace_of(x)
    fill = (x, xp.zeros(x.shape[1], dtype=x.dtype), xp.zeros(x.shape[1], dtype=x.dtype))
    return tuple(xp.zeros_like(f) if o is None else o._data for o, f in zip(outs, fill))


def _batch_norm_grads(c, g):
    mask = c.needs[:3]
    grads = A.batch_norm_backward(
        g, c.input, c.weight, c.running_mean, c.running_var, c.training, c.eps, mask
    )
    return (*grads, None, None)


def _batch_norm_double_grads(c, ggs):
    """VJP of batch_norm_backward: differentiate the first-order formulas, re-traced from the saved
    tensors (so every order is exact); an input they do not reach gets no gradient ("unused").

    The formulas are re-traced from fresh aliases of the saved tensors, and the inner gradient is
    taken with respect to those aliases: the inner engine run then stops at them and never enters
    the outer graph behind them (taking it with respect to the saved tensors themselves executed
    and released the outer nodes between a ``grad_out`` that depends on ``input`` and ``input``,
    so the outer backward failed with "backward through the graph a second time", and counted that
    path twice). Through the aliases the result stays differentiable in the saved tensors."""
    create_graph = grad_state.enabled
    wanted = [i for i in range(3) if c.needs[i]]
    result = [None] * 5
    if not wanted:
        return result
    with enable_grad():
        saved = (c.grad_out, c.input, c.weight)
        inputs = tuple(None if t is None else A.alias(t) if t.requires_grad else t for t in saved)
        outs = batch_norm_backward_formulas(*inputs, c.running_mean, c.running_var, c.training, c.eps, c.mask)
    pairs = [(o, gg) for o, gg in zip(outs, ggs) if o is not None and gg is not None and o.requires_grad]
    targets = [i for i in wanted if inputs[i] is not None and inputs[i].requires_grad]
    if pairs and targets:
        found = grad(
            [o for o, _ in pairs],
            [inputs[i] for i in targets],
            [gg for _, gg in pairs],
            create_graph=create_graph,
            allow_unused=True,
        )
        for i, gi in zip(targets, found):
            result[i] = gi
    return result


def _batch_norm_jvp(c, ts):
    """d y = d xhat * w + xhat * t_w + t_b; in training d xhat = invstd (t_xc - xhat mean(xhat t_xc)),
    with t_xc the centred tangent (the batch statistics move with x). Running stats: not differentiable."""
    x, tx, tw, tb = c.input, ts[0], ts[1], ts[2]
    dims = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if c.training:
        xc = x - A.mean(x, dims, keepdim=True)
        invstd = A.pow(A.mean(xc * xc, dims, keepdim=True) + c.eps, -0.5)
    else:
        xc = x - A.reshape(c.running_mean, bshape)
        invstd = A.pow(A.reshape(c.running_var, bshape) + c.eps, -0.5)
    xhat = xc * invstd
    out = None
    if tx is not None:
        if c.training:
            txc = tx - A.mean(tx, dims, keepdim=True)
            dxhat = invstd * (txc - xhat * A.mean(xhat * txc, dims, keepdim=True))
        else:
            dxhat = tx * invstd
        out = dxhat * A.reshape(c.weight, bshape) if c.weight is not None else dxhat
    for term in (
        None if tw is None else xhat * A.reshape(tw, bshape),
        None if tb is None else A.reshape(tb, bshape),
    ):
        if term is not None:
            out = term if out is None else out + term
    return out


def _batch_norm_backward_jvp(c, ts):
    """Forward mode through batch_norm_backward's own Tensor formulas (each primitive's JVP rule)."""
    inputs = (c.grad_out, c.input, c.weight, c.running_mean, c.running_var)
    tans = (ts[0], ts[1], ts[2], None, None)  # running stats: not differentiable
    return forward_through(
        lambda g, x, w, rm, rv: batch_norm_backward_formulas(g, x, w, rm, rv, c.training, c.eps, c.mask),
        inputs,
        tans,
    )


_ALL3 = (0, 1, 2)
_ALL5 = (0, 1, 2, 3, 4)
rule(
    "batch_norm",
    "NativeBatchNormBackward0",
    ("input", "weight", "bias", "running_mean", "running_var"),
    forward=K.batch_norm,
    vjp=_batch_norm_grads,
    saves={"input": _ALL3, "weight": _ALL3, "running_mean": _ALL3, "running_var": _ALL3},
    jvp=_batch_norm_jvp,
    batch=batch_norm_batch,
    error=_BATCH_NORM_ERROR,
)
rule(
    "batch_norm_backward",
    "NativeBatchNormBackwardBackward0",
    ("grad_out", "input", "weight", "running_mean", "running_var"),
    forward=lambda g, x, w, rm, rv, training, eps, mask: batch_norm_backward_arrays(
        g, x, w, rm, rv, training, eps, mask
    ),
    outputs=3,
    vjp=_batch_norm_double_grads,
    saves={"grad_out": _ALL5, "input": _ALL5, "weight": _ALL5, "running_mean": _ALL5, "running_var": _ALL5},
    jvp=_batch_norm_backward_jvp,
    batch=batch_norm_backward_batch,
    error=_BATCH_NORM_BACKWARD_ERROR,
)
rule(
    "dropout",
    "NativeDropoutBackward0",
    ("self", "mask"),
    forward=lambda a, mask, scale: (a * mask * scale).astype(a.dtype, copy=False),
    grads=(lambda c, g: g * c.mask * c.scale, None),
    saves={"mask": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
