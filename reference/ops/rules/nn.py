"""Neural-network primitives: softmax, pooling, batch norm, dropout.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

from reference import errors
from reference.autograd.dispatch import apply
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
from reference.ops.rules._sums import softmax_centred as softmax_centred_kernel
from reference.ops.rules._sums import softmax_centred_t as softmax_centred_t_kernel
from reference.ops.rules._sums import softmax_over
from reference.ops.rules.registry import RULES, rule

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

# ---- softmax ----------------------------------------------------------------------------------------
#
# PyTorch's softmax VJP y·(g - Σg·y) and log_softmax's g - exp(y)·Σg lose 1 - y_j where y_j rounds to
# 1 (softmax([0, -40])'s Jacobian diagonal: 0, exact 4.2e-18), and exp of log_softmax's rounded result
# is off by u·|y| relatively. In float64 on the host (issue 38: kernels.on_host_float64) the VJPs and
# JVPs are written with two primitives, g - Σ(g·y) and its transpose g - y·Σg, whose kernels
# (_sums.softmax_centred, _centred_t) take 1 - y_j as the sum of the other y_i; log_softmax's exp(y)
# is a primitive whose value is softmax(x) from x, read unsaved (Rule.reads, as tanh's). Their
# derivatives are the formulas' own, so the double backward is again these primitives times accurate
# factors, and each is judged by the composite of PyTorch's formula (the bound it had). Other dtypes
# and backends keep PyTorch's Tensor formulas as they were.


def _exact_mode(y):
    """Whether softmax's family takes the exact float64 formulas for the (saved) tensor ``y``."""
    return y is not None and y.ndim >= 1 and K.on_host_float64(y._data)


def _dims(dim, ndim):
    """``dim`` (an int, a tuple or None: every dim) as a tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    return tuple(sorted({d % ndim for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}))


def softmax_centred(g, y, dim):
    """g - Σ(g·y) over ``dim`` (kept), y a softmax along it: a primitive (exact in float64)."""
    return apply(RULES["softmax_centred"], (g, y), {"dim": _dims(dim, y.ndim)})


def softmax_centred_t(g, y, dim):
    """g - y·Σg over ``dim`` (kept), y a softmax along it: the transpose of :func:`softmax_centred`."""
    return apply(RULES["softmax_centred_t"], (g, y), {"dim": _dims(dim, y.ndim)})


def _batch_dims(b, params):
    """Batch rule of the softmax primitives: every input batched at dim 0, the dims shifted by one."""
    args = tuple(None if t is None else b.expanded(i) for i, t in enumerate(b.inputs))
    return apply(b.rule, args, {**params, "dim": tuple(d + 1 for d in params["dim"])}, cast=b.cast), 0


def _softmax_grad(c, g):
    if _exact_mode(c.result):
        return c.result * softmax_centred(g, c.result, c.dim)
    return c.result * (g - A.sum(g * c.result, c.dim, keepdim=True))


def _log_softmax_probabilities(c):
    """exp(result): PyTorch's probabilities in log_softmax's backward; in the exact mode the
    primitive whose value is softmax(self) from self (read unsaved) and whose derivative is exp's."""
    return apply(RULES["log_softmax_exp"], (c.result, c.self), {"dim": _dims(c.dim, c.result.ndim)})


def _log_softmax_grad(c, g):
    if _exact_mode(c.result):
        return softmax_centred_t(g, _log_softmax_probabilities(c), c.dim)
    return g - A.exp(c.result) * A.sum(g, c.dim, keepdim=True)


def _log_softmax_jvp(c, t):
    if _exact_mode(c.result):
        return softmax_centred(t, _log_softmax_probabilities(c), c.dim)
    return t - A.sum(A.exp(c.result) * t, c.dim, keepdim=True)


rule(
    "softmax",
    "SoftmaxBackward0",
    ("self",),
    forward=K.softmax,
    grads=(_softmax_grad,),
    saves={"result": (0,)},
    jvp=(_softmax_grad,),  # the Jacobian is symmetric: PyTorch's result·(t - Σ(t·result))
    batch=BATCH_DIM,
    error=_SOFTMAX_ERROR,
)
rule(
    "log_softmax",
    "LogSoftmaxBackward0",
    ("self",),
    forward=K.log_softmax,
    grads=(_log_softmax_grad,),
    saves={"result": (0,)},
    reads=("self",),
    jvp=(_log_softmax_jvp,),
    batch=BATCH_DIM,
    error=_LOG_SOFTMAX_ERROR,
)
rule(
    "softmax_centred",
    "SubBackward0",  # the outermost op of PyTorch's g - Σ(g·y)
    ("grad_output", "output"),
    forward=lambda g, y, dim: softmax_centred_kernel(g, y, dim),
    grads=(
        lambda c, gg: softmax_centred_t(gg, c.output, c.dim),
        lambda c, gg: -c.grad_output * A.sum(gg, c.dim, keepdim=True),
    ),
    saves={"output": (0,), "grad_output": (1,)},
    jvp=(
        lambda c, t: softmax_centred(t, c.output, c.dim),
        lambda c, t: -A.sum(c.grad_output * t, c.dim, keepdim=True),
    ),
    batch=_batch_dims,
    error=errors.composite(lambda g, y, dim: g - A.sum(g * y, dim, keepdim=True), "PyTorch's g - Σ(g·y)"),
)
rule(
    "softmax_centred_t",
    "SubBackward0",  # the outermost op of PyTorch's g - y·Σg
    ("grad_output", "output"),
    forward=lambda g, y, dim: softmax_centred_t_kernel(g, y, dim),
    grads=(
        lambda c, gg: softmax_centred(gg, c.output, c.dim),
        lambda c, gg: -gg * A.sum(c.grad_output, c.dim, keepdim=True),
    ),
    saves={"output": (0,), "grad_output": (1,)},
    jvp=(
        lambda c, t: softmax_centred_t(t, c.output, c.dim),
        lambda c, t: -t * A.sum(c.grad_output, c.dim, keepdim=True),
    ),
    batch=_batch_dims,
    error=errors.composite(lambda g, y, dim: g - y * A.sum(g, dim, keepdim=True), "PyTorch's g - y·Σg"),
)


def _log_softmax_exp_kernel(y, x, dim):
    """exp(y) of y = log_softmax(x); softmax(x) from x where x is known in float64 (exp of the
    rounded y is off by u·|y| relatively)."""
    if x is not None and K.on_host_float64(x) and K.on_host_float64(y):
        return softmax_over(x, dim)
    return namespace_of(y).exp(y)


rule(
    "log_softmax_exp",
    "ExpBackward0",
    ("output", "self"),  # self: log_softmax's input, hidden (None: PyTorch's exp(output))
    forward=_log_softmax_exp_kernel,
    grads=(lambda c, gg: gg * c.result, None),
    saves={"result": (0,)},
    reads=("self",),
    hidden=("self",),
    jvp=(lambda c, t: t * c.result, None),
    batch=_batch_dims,
    error=errors.composite(lambda y, x=None, dim=None: A.exp(y), "PyTorch's exp(result)"),
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
