"""Segment reductions: ``torch._segment_reduce`` (the one table primitive of the masked family;
``torch.masked``'s reductions and normalizations are compositions, reference/ops/functions/masked.py).

``segment_reduce`` reduces consecutive segments of ``data`` along ``axis`` (``reduce`` one of sum,
mean, max, min, prod), segment ``k`` of each leading index ``o`` covering
``data[o, offsets[o][k]:offsets[o][k+1]]``; ``offsets`` (host-side index metadata, a nested tuple
of shape ``data.shape[:axis] + (S + 1,)``) comes from the ``lengths`` or ``offsets`` argument.
The reduction starts from ``initial`` (default: -inf for max, +inf for min, 0 for sum and mean,
1 for prod) and, as aten's CPU kernel (SegmentReduce.cpp), max/min propagate nan, mean divides
``initial + sum`` by the segment's length and an empty segment without ``initial`` has mean nan.

The VJP is aten's ``_segment_reduce_backward`` written in differentiable Tensor ops (the
gradient of each output spread over its segment through a gather): sum passes it on, mean
divides it by the length, max/min give it to the elements equal to the result (or nan) and,
where two or more are, divide the positive ones by their count (PyTorch divides only
``grad > 0``: a negative gradient reaches every tied element whole), prod gives ``grad·result/x``
and, for a zero or nan element, ``grad`` times the product of the others and ``initial``.
PyTorch declares no derivative for ``_segment_reduce_backward`` (double backward raises there)
nor forward AD; the reference's formulas are differentiable again and its JVP is the
segment sum of ``tangent · (the VJP of ones)``, exact where the VJP is a derivative (away from
ties of max/min; at two or more zero factors of prod, second derivatives through the other zero
are left out).

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import math

from reference import errors
from reference.autograd.dispatch import apply
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rules.registry import RULES, rule

REDUCTIONS = ("max", "mean", "min", "sum", "prod")
_IDENTITY = {"max": -math.inf, "min": math.inf, "sum": 0.0, "mean": 0.0, "prod": 1.0}


def _outer(offsets, axis):
    """``(leading index, that index's offsets)`` for every index of ``data.shape[:axis]``."""
    if axis == 0:
        yield (), offsets
        return
    for i, sub in enumerate(offsets):
        for o, off in _outer(sub, axis - 1):
            yield (i,) + o, off


def _segments(offsets, axis):
    return len(next(_outer(offsets, axis))[1]) - 1


def segment_reduce_kernel(data, reduce, offsets, axis, initial):
    xp = namespace_of(data)
    n_seg = _segments(offsets, axis)
    out = xp.empty(data.shape[:axis] + (n_seg,) + data.shape[axis + 1 :], dtype=data.dtype)
    init = _IDENTITY[reduce] if initial is None else initial
    for o, off in _outer(offsets, axis):
        for k in range(n_seg):
            seg = data[o + (slice(off[k], off[k + 1]),)]
            acc = xp.full(seg.shape[1:], init, dtype=data.dtype)
            if seg.shape[0]:
                if reduce == "max":  # nan propagates (xp.max and xp.maximum both do)
                    acc = xp.maximum(acc, xp.max(seg, axis=0))
                elif reduce == "min":
                    acc = xp.minimum(acc, xp.min(seg, axis=0))
                elif reduce == "prod":
                    acc = acc * xp.prod(seg, axis=0)
                else:
                    acc = acc + xp.sum(seg, axis=0)
                    if reduce == "mean":
                        acc = acc / data.dtype.type(seg.shape[0])
            elif reduce == "mean" and initial is None:
                acc = xp.full(seg.shape[1:], math.nan, dtype=data.dtype)
            out[o + (k,)] = acc
    return out


# ---- the VJP, in Tensor ops -------------------------------------------------------------------------------


def _segment_ids(offsets, axis, size):
    """Nested lists of shape ``data.shape[:axis] + (size,)``: each position's segment, or S (none)."""
    n_seg = _segments(offsets, axis)

    def row(off):
        ids = [n_seg] * size
        for k in range(n_seg):
            for j in range(max(off[k], 0), min(off[k + 1], size)):
                ids[j] = k
        return ids

    def build(off, depth):
        return row(off) if depth == axis else [build(sub, depth + 1) for sub in off]

    return build(offsets, 0)


def _lengths(offsets, axis):
    def build(off, depth):
        if depth == axis:
            return [off[k + 1] - off[k] for k in range(len(off) - 1)]
        return [build(sub, depth + 1) for sub in off]

    return build(offsets, 0)


def _inner_expand(t, shape, axis):
    """A tensor of shape ``shape[:axis + 1]`` broadcast to ``shape``."""
    t = A.reshape(t, tuple(t.shape) + (1,) * (len(shape) - axis - 1))
    return A.expand(t, shape)


def _spread(c, y):
    """``y`` (the output's shape) spread over ``data``'s shape: each element gets its segment's
    value, elements in no segment 0."""
    axis, shape = c.axis, tuple(c.data.shape)
    pad_shape = list(y.shape)
    pad_shape[axis] = 1
    padded = A.cat([y, A.zeros(tuple(pad_shape), dtype=y.dtype)], axis)
    ids = A.tensor(_segment_ids(c.offsets, axis, shape[axis]), dtype=A.int64)
    return apply(RULES["gather"], (padded, _inner_expand(ids, shape, axis)), {"dim": axis})


def _in_segment(c):
    axis, shape = c.axis, tuple(c.data.shape)
    ids = A.tensor(_segment_ids(c.offsets, axis, shape[axis]), dtype=A.int64)
    return _inner_expand(ids < _segments(c.offsets, axis), shape, axis)


def _segment_sum(c, x):
    return apply(
        RULES["segment_reduce"],
        (x,),
        {"reduce": "sum", "offsets": c.offsets, "axis": c.axis, "initial": None},
    )


def _vjp(c, g):
    x, reduce = c.data, c.reduce
    g_e = _spread(c, g)
    if reduce == "sum":
        return g_e
    if reduce == "mean":
        n = A.tensor(_lengths(c.offsets, c.axis), dtype=x.dtype, device=x.device)
        n_e = _spread(c, _inner_expand(n, tuple(g.shape), c.axis))
        return g_e / A.where(_in_segment(c), n_e, 1.0)
    out_e = _spread(c, c.result)
    isnan = x != x
    if reduce in ("max", "min"):
        hit = A.logical_and(_in_segment(c), A.logical_or(x == out_e, isnan))
        count = _spread(c, _segment_sum(c, A.to(hit, x.dtype)).detach())
        gm = A.where(hit, g_e, 0.0)
        return A.where(A.logical_and(count >= 2.0, gm > 0.0), gm / A.clamp(count, min=1.0), gm)
    # prod
    special = A.logical_or(x == 0.0, isnan)
    y = A.where(special, 1.0, x)
    regular = g_e * out_e / y
    others = apply(
        RULES["segment_reduce"],
        (y,),
        {"reduce": "prod", "offsets": c.offsets, "axis": c.axis, "initial": c.initial},
    )
    n_special = _spread(c, _segment_sum(c, A.to(special, x.dtype)).detach())
    other_nan = _spread(c, _segment_sum(c, A.to(isnan, x.dtype)).detach()) - A.to(isnan, x.dtype) > 0.0
    factor = A.where(n_special == 1.0, 1.0, A.where(other_nan, math.nan, 0.0))
    return A.where(special, g_e * (_spread(c, others) * factor), regular)


def _jvp(c, t):
    return _segment_sum(c, t * _vjp(c, A.ones_like(c.result)))


def _batch(b, params):
    """Batch first: the axis moves by one and every sample has the same offsets."""
    x = b.expanded(0)
    offsets = tuple(params["offsets"] for _ in range(b.size))
    return apply(b.rule, (x,), {**params, "offsets": offsets, "axis": params["axis"] + 1}, cast=b.cast), 0


def _segment_steps(x, reduce, offsets, axis, initial):
    """Segment by segment: the slice's sum/amax/amin/prod along the axis, combined with the
    initial value, divided by the length for mean, stacked along the axis."""
    n_seg = _segments(offsets, axis)
    outs = []
    for o, off in _outer(offsets, axis):
        segs = []
        for k in range(n_seg):
            seg = x[o + (slice(off[k], off[k + 1]),)]
            init = _IDENTITY[reduce] if initial is None else initial
            if seg.shape[0] == 0:
                empty = math.nan if reduce == "mean" and initial is None else init
                v = A.full(tuple(seg.shape[1:]), empty, dtype=x.dtype, device=x.device)
            elif reduce == "max":
                v = A.maximum(A.amax(seg, 0), A.full((), init, dtype=x.dtype, device=x.device))
            elif reduce == "min":
                v = A.minimum(A.amin(seg, 0), A.full((), init, dtype=x.dtype, device=x.device))
            elif reduce == "prod":
                v = _prod_chain(seg) * init
            else:
                v = A.sum(seg, 0) + init
                if reduce == "mean":
                    v = v / float(seg.shape[0])
            segs.append(v)
        outs.append(A.stack(segs, 0))  # (S, *inner)
    if axis == 0:
        return outs[0]
    flat = A.stack(outs, 0)  # (prod(leading), S, *inner)
    return A.reshape(flat, tuple(x.shape[:axis]) + tuple(flat.shape[1:]))


def _prod_chain(seg):
    acc = seg[0]
    for i in range(1, seg.shape[0]):
        acc = acc * seg[i]
    return acc


rule(
    "segment_reduce",
    "SegmentReduceBackward0",
    ("data",),
    forward=segment_reduce_kernel,
    grads=(_vjp,),
    saves={"data": (0,), "result": (0,)},
    jvp=(_jvp,),
    batch=_batch,
    error=errors.composite(
        _segment_steps,
        "segment by segment: a sum (products), a max/min (selection) or a chain of products, "
        "combined with the initial value in one correctly rounded operation, a division for mean",
    ),
)
