"""Records of the masked family (reference/ops/rules/masked.py): ``torch._segment_reduce``.

(``torch.masked``'s reductions and normalizations are compositions of other primitives, each
fuzzed by its own record.)"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import record
from conformance.strategies import tensor_shapes, value_kinds

FAMILY = "masked"

_KINDS = {
    "sum": ("normal", "wide", "ties", "tiny"),
    "mean": ("normal", "wide", "ties", "tiny"),
    "max": ("normal", "wide", "tiny"),  # no ties: PyTorch divides only positive gradients among ties
    "min": ("normal", "wide", "tiny"),
    "prod": ("normal", "ties"),  # ties draw zeros: the exclusive-product gradient
}


@st.composite
def _lengths(draw, n):
    """Segment lengths (some empty) summing to ``n``."""
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=0, max_size=4)))
    bounds = [0, *cuts, n]
    return [b - a for a, b in zip(bounds, bounds[1:])]


@st.composite
def _sample(draw, broken=False):
    shape = draw(tensor_shapes(1, 3, 96, 1))
    axis = draw(st.integers(0, len(shape) - 1))
    reduce = draw(st.sampled_from(sorted(_KINDS)))
    n = shape[axis] + (1 if broken else 0)
    first = draw(_lengths(n))
    segments = len(first)

    def rows(depth):
        if depth == axis:
            ls = draw(_lengths(n))
            ls = (ls + [0] * segments)[:segments]
            ls[-1] += n - sum(ls)
            return ls
        return [rows(depth + 1) for _ in range(shape[depth])]

    lengths = first if axis == 0 else rows(0)
    initial = draw(st.one_of(st.none(), st.sampled_from([-2.0, 0.5, 3.0])))
    params = {
        "values": "normal" if broken else draw(value_kinds(_KINDS[reduce])),
        "reduce": reduce,
        "lengths": lengths,
        "axis": axis,
        "initial": initial,
    }
    if broken:
        params["invalid"] = "lengths_do_not_sum_to_the_axis_size"
    return params, {"input": shape}


def _torch_like(T, x, reduce, lengths, axis, initial):
    return T._segment_reduce(x, reduce, lengths=T.tensor(lengths, dtype=T.int64), axis=axis, initial=initial)


_IDENTITY = {"max": float("-inf"), "min": float("inf"), "sum": 0.0, "mean": 0.0, "prod": 1.0}


def _flat_ids(lengths, axis, shape):
    """Segment ids over the flattened ``shape[:axis + 1]``, one segment range per leading index."""
    import numpy as np

    lead = int(np.prod(shape[:axis], dtype=np.int64))
    rows = np.asarray(lengths, dtype=np.int64).reshape(lead, -1)
    n_seg = rows.shape[1]
    ids = np.concatenate([np.repeat(r * n_seg + np.arange(n_seg), row) for r, row in enumerate(rows)])
    return ids, lead, n_seg


def _segment_with(ops, x, reduce, lengths, axis, initial, shape):
    """The reduction from a framework's unsorted segment sum/max/min/prod over flattened leading
    dims; ``ops`` = (segment(name, data, ids, num), reshape, where, ones_like, maximum, minimum)."""
    segment, reshape, where, full_like, maximum, minimum = ops
    ids, lead, n_seg = _flat_ids(lengths, axis, shape)
    inner = tuple(shape[axis + 1 :])
    flat = reshape(x, (lead * shape[axis], *inner))
    num = lead * n_seg
    count = segment("sum", full_like(flat), ids, num)
    init = _IDENTITY[reduce] if initial is None else initial
    if reduce in ("sum", "mean"):
        out = segment("sum", flat, ids, num) + init
        if reduce == "mean":
            out = where(
                count > 0, out / where(count > 0, count, 1.0), init if initial is not None else float("nan")
            )
    elif reduce == "prod":
        out = segment("prod", flat, ids, num) * init
    else:
        out = segment(reduce, flat, ids, num)
        out = where(count > 0, out, _IDENTITY[reduce])  # TF's empty segment is the dtype's lowest/highest
        if initial is not None:
            out = (maximum if reduce == "max" else minimum)(out, init)
    return reshape(out, (*shape[:axis], n_seg, *inner))


def _jax(J, x, reduce, lengths, axis, initial):
    import numpy as np

    jnp = J.jnp
    fns = {"sum": J.jax.ops.segment_sum, "max": J.jax.ops.segment_max, "min": J.jax.ops.segment_min}

    def segment(name, d, ids, num):
        if name != "prod":
            return fns[name](d, jnp.asarray(ids), num_segments=num)
        # jax.ops.segment_prod has no VJP for repeated ids (scatter_mul needs unique_indices):
        # the ids are sorted, so each segment is a contiguous run of rows, reduced by jnp.prod
        bounds = np.searchsorted(ids, np.arange(num + 1))
        return jnp.stack([jnp.prod(d[a:b], axis=0) for a, b in zip(bounds[:-1], bounds[1:])])

    ops = (segment, jnp.reshape, jnp.where, jnp.ones_like, jnp.maximum, jnp.minimum)
    return _segment_with(ops, x, reduce, lengths, axis, initial, tuple(x.shape))


def _tf(tf, x, reduce, lengths, axis, initial):
    fns = {
        "sum": tf.math.unsorted_segment_sum,
        "prod": tf.math.unsorted_segment_prod,
        "max": tf.math.unsorted_segment_max,
        "min": tf.math.unsorted_segment_min,
    }

    def where(c, a, b):
        b = b if hasattr(b, "shape") else tf.fill(tf.shape(a), tf.constant(b, dtype=a.dtype))
        return tf.where(c, a, b)

    ops = (
        lambda name, d, ids, num: fns[name](d, tf.constant(ids), num),
        tf.reshape,
        where,
        tf.ones_like,
        lambda a, b: tf.maximum(a, tf.constant(b, dtype=a.dtype)),
        lambda a, b: tf.minimum(a, tf.constant(b, dtype=a.dtype)),
    )
    return _segment_with(ops, x, reduce, lengths, axis, initial, tuple(x.shape))


record(
    "segment_reduce",
    FAMILY,
    sample=lambda: _sample(),
    invalid=lambda: _sample(broken=True),
    error_frameworks=("torch",),  # the JAX/TF spellings take segment ids, not lengths to validate
    fn=_torch_like,
    jax=_jax,
    tf=_tf,
    checks=("forward", "vjp"),
    note="PyTorch has no double backward (_segment_reduce_backward is not differentiable) and no "
    "forward AD for _segment_reduce: forward and VJP (and vmap) only",
)
