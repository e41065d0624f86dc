"""Loss primitives: ``nll_loss`` (and its backward, a linear pair as in PyTorch's
``derivatives.yaml``), ``binary_cross_entropy`` (with PyTorch's clamped logs and its own
backward), ``ctc_loss`` (the alpha-beta recursion and its gradient).

Every other loss of :mod:`reference.ops.functions.losses` is a composite of differentiable ops.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry. The kernels take a ``batch_dims`` parameter: that many leading dims of every input are
independent problems (each reduced on its own), which is what the batch rules use.
"""

from __future__ import annotations

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.functions import pointwise as P
from reference.ops.rules.registry import RULES, rule

# ---- nll_loss ------------------------------------------------------------------------------------


def _class_axis(x, k):
    """The class dim of an nll input with ``k`` leading batch dims: (..., C) or (..., N, C, d...)."""
    return k if x.ndim - k == 1 else k + 1


def _nll_pick(x, t, w, ignore_index, k):
    """(picked input value, weight of the target, class-last input) per target element."""
    xp = namespace_of(x)
    ca = _class_axis(x, k)
    xc = xp.moveaxis(x, ca, -1)
    valid = t != ignore_index
    ts = xp.where(valid, t, 0)
    picked = xp.take_along_axis(xc, ts[..., None], axis=-1)[..., 0]
    if w is None:
        wt = xp.ones(ts.shape, dtype=x.dtype)
    else:
        wb = w.reshape(w.shape[:-1] + (1,) * (ts.ndim - w.ndim + 1) + w.shape[-1:])
        wb = xp.broadcast_to(wb, ts.shape + w.shape[-1:])
        wt = xp.take_along_axis(wb, ts[..., None], axis=-1)[..., 0].astype(x.dtype)
    wt = xp.where(valid, wt, xp.zeros((), dtype=x.dtype))
    return picked, wt, xc, ts, valid


def _rest(ndim, k):
    return tuple(range(k, ndim))


def _nll_forward(x, t, w, reduction, ignore_index, batch_dims=0):
    picked, wt, _, _, _ = _nll_pick(x, t, w, ignore_index, batch_dims)
    per = -(picked * wt)
    if reduction == "none":
        return per.astype(x.dtype, copy=False)
    rest = _rest(per.ndim, batch_dims)
    total = per.sum(axis=rest)
    if reduction == "sum":
        return total.astype(x.dtype, copy=False)
    with np.errstate(invalid="ignore", divide="ignore"):  # (NumPy's flags; CuPy raises none)
        return (total / wt.sum(axis=rest)).astype(x.dtype, copy=False)


def _nll_backward(g, t, w, shape, reduction, ignore_index, batch_dims=0):
    """The gradient of nll_loss w.r.t. its input: -w[t] * g (scaled by 1/total weight for 'mean')
    at each target's class, zero elsewhere."""
    xp = namespace_of(g)
    k = batch_dims
    dummy = xp.zeros(shape, dtype=g.dtype)
    _, wt, xc, ts, valid = _nll_pick(dummy, t, w, ignore_index, k)
    if reduction == "none":
        gs = g
    else:
        gs = g.reshape(g.shape + (1,) * (wt.ndim - k))
        if reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                gs = gs / wt.sum(axis=_rest(wt.ndim, k)).reshape(gs.shape)
    with np.errstate(invalid="ignore"):
        val = xp.where(valid, -(wt * gs), xp.zeros((), dtype=g.dtype))  # ignored targets: nothing written
    out = xp.zeros(xc.shape, dtype=g.dtype)
    xp.put_along_axis(out, ts[..., None], val[..., None], axis=-1)
    return xp.moveaxis(out, -1, _class_axis(dummy, k))


def nll_loss_prim(input, target, weight, reduction, ignore_index, batch_dims=0):
    params = {"reduction": reduction, "ignore_index": ignore_index, "batch_dims": batch_dims}
    return apply(_RULES["nll_loss"], (input, target, weight), params)


def nll_loss_backward_prim(g, target, weight, shape, reduction, ignore_index, batch_dims=0):
    params = {
        "shape": tuple(shape),
        "reduction": reduction,
        "ignore_index": ignore_index,
        "batch_dims": batch_dims,
    }
    return apply(_RULES["nll_loss_backward"], (g, target, weight), params)


# ---- rounding-error declarations (reference.errors) ----------------------------------------------


def _nll_targets(t, ignore_index):
    import numpy as np

    ta = np.asarray(t._data)
    valid = ta != ignore_index
    return np.where(valid, ta, 0), valid


def _nll_weights(x_like, t_shape, ts, valid, w, ignore_index, k):
    """w[target] (tracked: its errors carry) where valid, else 0; ones without a weight."""
    import numpy as np

    if w is not None and w.ndim == 1:
        return A.where(_make(valid), w[_make(ts)], A.zeros((), dtype=x_like.dtype, device=x_like.device))
    dummy = np.zeros(tuple(x_like.shape), dtype=np.asarray(x_like._data).dtype)
    _, wt, _, _, _ = _nll_pick(
        dummy, np.where(valid, ts, ignore_index), None if w is None else np.asarray(w._data), ignore_index, k
    )
    return _make(wt)  # no weight (ones), or a batched weight taken as exact


def _nll_steps(x, t, w, reduction, ignore_index, batch_dims=0):
    """-(x[target] * w[target]) per element (one product), then a sum and, for 'mean', the division
    by the summed weights (both sums of products: any order)."""

    ts, valid = _nll_targets(t, ignore_index)
    picked = x.movedim(_class_axis(x, batch_dims), -1).gather(-1, _make(ts[..., None])).squeeze(-1)
    wt = _nll_weights(x, ts.shape, ts, valid, w, ignore_index, batch_dims)
    per = -(picked * wt)
    if reduction == "none":
        return per
    rest = _rest(per.ndim, batch_dims)
    total = A.sum(per, rest) if rest else per
    if reduction == "sum":
        return total
    return total / (A.sum(wt, rest) if rest else wt)


def _nll_backward_steps(g, t, w, shape, reduction, ignore_index, batch_dims=0):
    """-w[target] * g (divided by the summed weights for 'mean') written at each target's class."""

    k = batch_dims
    x_like = A.zeros(tuple(shape), dtype=g.dtype, device=g.device)
    ts, valid = _nll_targets(t, ignore_index)
    wt = _nll_weights(x_like, ts.shape, ts, valid, w, ignore_index, k)
    if reduction == "none":
        gs = g
    else:
        gs = g.reshape(tuple(g.shape) + (1,) * (wt.ndim - k))
        if reduction == "mean":
            rest = _rest(wt.ndim, k)
            gs = gs / (A.sum(wt, rest) if rest else wt).reshape(tuple(gs.shape))
    val = A.where(_make(valid), -(wt * gs), A.zeros((), dtype=g.dtype, device=g.device))
    ca = _class_axis(x_like, k)
    out = A.zeros(tuple(ts.shape) + (shape[ca],), dtype=g.dtype, device=g.device)
    out = out.scatter(-1, _make(ts[..., None]), val.unsqueeze(-1))
    return out.movedim(-1, ca)


def _bce_steps(x, t, w):
    """-(t*max(log x, -100) + (1-t)*max(log1p(-x), -100)) * w; log(1 - x) bounds log1p(-x)."""
    lx = A.clamp(A.log(x), min=-100.0)
    l1x = A.clamp(A.log(1.0 - x), min=-100.0)
    out = -(t * lx + (1.0 - t) * l1x)
    return out if w is None else out * w


_NLL_ERROR = errors.composite(_nll_steps, "a gather, one product per element, sums of products, a division")
_NLL_BACKWARD_ERROR = errors.composite(_nll_backward_steps, "one product (and a division) per target, moved")
_BCE_ERROR = errors.composite(_bce_steps, "two logs (2 ulp), clamps, products and sums per element")


def _nll_params(c):
    return c.reduction, c.ignore_index, c.params.get("batch_dims", 0)


def _fronted(b, i):
    """Input ``i`` of a batch call with the batch dim first (an unbatched one expanded)."""
    v = b.front(i)
    if v is None:
        x = b.values[i]
        if x is None:
            return None
        v = A.expand(A.unsqueeze(x, 0), (b.size,) + tuple(x.shape))
    return v


def _nll_weight(b):
    """The weight for a batched call: (C,) broadcasts over every problem as it is; a batched or
    per-problem weight gets the batch dim first."""
    w = b.values[2]
    if w is None or (b.bdims[2] is None and w.ndim == 1):
        return w
    return _fronted(b, 2)


def _nll_batch(b, params):
    k = params.get("batch_dims", 0)
    x, t = _fronted(b, 0), _fronted(b, 1)
    return apply(b.rule, (x, t, _nll_weight(b)), {**params, "batch_dims": k + 1}), 0


def _nll_backward_batch(b, params):
    k = params.get("batch_dims", 0)
    g, t = _fronted(b, 0), _fronted(b, 1)
    w = _nll_weight(b)
    shape = (b.size,) + tuple(params["shape"])
    return apply(b.rule, (g, t, w), {**params, "shape": shape, "batch_dims": k + 1}), 0


rule(
    "nll_loss",
    "NllLossBackward0",
    ("self", "target", "weight"),
    forward=_nll_forward,
    grads=(
        lambda c, g: nll_loss_backward_prim(g, c.target, c.weight, c.shapes[0], *_nll_params(c)),
        None,
        None,
    ),
    saves={"target": (0,), "weight": (0,)},
    jvp=(lambda c, t: nll_loss_prim(t, c.target, c.weight, *_nll_params(c)), None, None),
    batch=_nll_batch,
    error=_NLL_ERROR,
)
rule(
    "nll_loss_backward",
    "NllLossBackwardBackward0",
    ("grad_output", "target", "weight"),
    forward=_nll_backward,
    grads=(lambda c, g: nll_loss_prim(g, c.target, c.weight, *_nll_params(c)), None, None),
    saves={"target": (0,), "weight": (0,)},
    jvp=(
        lambda c, t: nll_loss_backward_prim(t, c.target, c.weight, c.shape, *_nll_params(c)),
        None,
        None,
    ),
    batch=_nll_backward_batch,
    error=_NLL_BACKWARD_ERROR,
)

# ---- binary_cross_entropy ------------------------------------------------------------------------
# PyTorch: loss = -w (t log(x) + (1 - t) log(1 - x)), each log clamped at -100;
# d/dx = w (x - t) / max(x (1 - x), 1e-12); d/dt = w (log(1 - x) - log(x)) (logs not clamped),
# each evaluated in a form that does not cancel (below).
# The rule is elementwise (reduction='none', broadcasting like a binary op); the reduction is a
# composite sum/mean after it.

_BCE_EPS = 1e-12


def _bce_forward(x, t, w):
    xp = namespace_of(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        lx = xp.maximum(xp.log(x), -100)
        l1x = xp.maximum(xp.log1p(-x), -100)
    out = -((t * lx) + (1 - t) * l1x)
    if w is not None:
        out = out * w
    return out.astype(x.dtype, copy=False)


def _bce_grad_self(c, g):
    x, t = c.self, c.target
    d = x * (1 - x)
    clamped = d < _BCE_EPS
    quotient = (x - t) / A.clamp(d, min=_BCE_EPS)  # accurate value: x - t is exact near its zero
    # Its derivative by the quotient rule, 1/d - (x - t)(1 - 2x)/d², cancels to all digits where x
    # is small or near 1 (at t = 0: x(1 - x) - x(1 - 2x) = x²). The same function written as
    # (1 - t)/(1 - x) - t/x differentiates to t/x² + (1 - t)/(1 - x)², a sum of terms of one sign
    # for t in [0, 1], but its value cancels near x = t. So the value is the quotient's and the
    # derivative the sum's: the sum enters with its own value subtracted (exactly 0). Where the
    # clamp bites the quotient is kept whole (PyTorch's (x - t)/1e-12); x is moved off 0 and 1
    # there so that the unused form stays finite (a 0 cotangent times an infinite partial is nan).
    xs = A.where(clamped, 0.5, x)
    ts = A.where(clamped, 0.5, t)
    split = (1 - ts) / (1 - xs) - ts / xs
    smooth = quotient.detach() + (split - split.detach())
    out = g * A.where(clamped, quotient, smooth)
    return out if c.weight is None else out * c.weight


def _bce_grad_target(c, g):
    x = c.self
    # log(1 - x) - log(x), unclamped as PyTorch's binary_cross_entropy_target_backward; the two
    # logs cancel near x = 1/2, where it is -2 atanh(2x - 1) (2x - 1 exact for x >= 1/4); below
    # 1/4 log x dominates (no cancellation). x is moved into each form's range in the other's region.
    upper = x >= 0.25
    log_form = P.log1p(-A.where(upper, 0.0, x)) - A.log(A.where(upper, 0.125, x))
    atanh_form = -2 * P.atanh(2 * A.where(upper, x, 0.5) - 1)
    out = g * A.where(upper, atanh_form, log_form)
    return out if c.weight is None else out * c.weight


def _elementwise_batch(b, params):
    rank = max(len(t.shape) for t in b.inputs if t is not None)
    args = tuple(None if t is None else b.aligned(i, rank) for i, t in enumerate(b.inputs))
    return apply(b.rule, args, params, cast=b.cast), 0


rule(
    "binary_cross_entropy",
    "BinaryCrossEntropyBackward0",
    ("self", "target", "weight"),
    forward=_bce_forward,
    grads=(_bce_grad_self, _bce_grad_target, None),
    saves={"self": (0, 1), "target": (0,), "weight": (0, 1)},
    jvp=(_bce_grad_self, _bce_grad_target, None),
    batch=_elementwise_batch,
    error=_BCE_ERROR,
)

_RULES = {}


def _collect():
    for name in ("nll_loss", "nll_loss_backward", "binary_cross_entropy"):
        _RULES[name] = RULES[name]


_collect()
