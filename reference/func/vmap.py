"""``vmap(func, in_dims=0, out_dims=0, *, allow_fallback=True)``: torch.func's vmap on the
batching layer of :mod:`reference.autograd.batching`."""

from __future__ import annotations

from reference.autograd import levels, table
from reference.autograd.batching import VmapLevel, move_to_front, physical, placeholder
from reference.autograd.tensor import Tensor
from reference.func.pytree import TransformError, flatten, unflatten
from reference.ops import api


def _dims_per_leaf(dims, tree, name):
    """Broadcast ``dims`` (an int/None for the whole tree, or a tree of them matching ``tree``,
    or for a tuple of arguments a tuple with one entry per argument) to one entry per leaf."""
    leaves, spec = flatten(tree)
    if dims is None or isinstance(dims, int):
        return [dims] * len(leaves)
    if isinstance(tree, tuple) and isinstance(dims, (tuple, list)) and len(dims) == len(tree):
        out = []
        for k, (d, sub) in enumerate(zip(dims, tree)):
            out += _dims_per_leaf(d, sub, f"{name}[{k}]")
        return out
    d_leaves, d_spec = flatten(dims)
    if d_spec != spec:
        raise TransformError(
            f"vmap: {name}={dims!r} must be an int, None, or a tree matching the structure of what it describes"
        )
    for d in d_leaves:
        if d is not None and not isinstance(d, int):
            raise TransformError(f"vmap: {name} entries must be ints or None, got {d!r}")
    return d_leaves


def vmap(func, in_dims=0, out_dims=0, *, allow_fallback=True):
    """Map ``func`` over a batch dimension of its inputs (``in_dims``: per argument, nested, None
    for unbatched, negative counts from the end); outputs get the batch dim at ``out_dims``.
    A primitive without a batch rule runs per sample (see ``fallback_counts``), or raises
    ``BatchRuleError`` with ``allow_fallback=False``."""

    def wrapper(*args, **kwargs):
        leaves, spec = flatten(args)
        dims = _dims_per_leaf(in_dims, args, "in_dims")
        size = None
        for i, (x, d) in enumerate(zip(leaves, dims)):
            if d is None:
                continue
            if not isinstance(x, Tensor):
                raise TransformError(
                    f"vmap: in_dims gives {d} for input leaf {i}, a {type(x).__name__}; only Tensors can be "
                    "batched (use None for it)"
                )
            if not -x.ndim <= d < x.ndim:
                raise TransformError(
                    f"vmap: in_dims gives {d} for input leaf {i} of shape {tuple(x.shape)}; it must be in "
                    f"[{-x.ndim}, {x.ndim - 1}]"
                )
            n = x.shape[d]
            if size is not None and n != size:
                raise TransformError(
                    f"vmap: input leaf {i} has size {n} at its in_dim {d}, but an earlier batched input has "
                    f"size {size}; every batched input must have the same batch size"
                )
            size = n
        if size is None:
            raise TransformError(
                f"vmap: in_dims={in_dims!r} batches no Tensor input; at least one must be batched"
            )
        level = levels.enter(VmapLevel(size, allow_fallback))
        try:
            wrapped = [x if d is None else placeholder(x, d % x.ndim, level) for x, d in zip(leaves, dims)]
            out = func(*unflatten(spec, wrapped), **kwargs)
            out_leaves, out_spec = flatten(out)
            odims = _dims_per_leaf(out_dims, out, "out_dims")
            results = []
            with levels.lowered(len(levels.state.stack) - 1):
                for i, (o, od) in enumerate(zip(out_leaves, odims)):
                    results.append(_unbatch(o, od, level, size, i))
        finally:
            levels.exit(level)
        return unflatten(out_spec, results)

    return wrapper


def _unbatch(o, od, level, size, i):
    if not isinstance(o, Tensor):
        raise TransformError(f"vmap: output leaf {i} is a {type(o).__name__}; func must return Tensors")
    p = physical(o, level)
    if p is None:  # the same for every sample: expand it, as torch.func does
        if od is None:
            return o
        v = api.expand(api.unsqueeze(o, 0), (size,) + tuple(o.shape))
    else:
        if od is None:
            raise TransformError(f"vmap: out_dims is None for output leaf {i}, but it is batched")
        v = move_to_front(*p)
    if not -v.ndim <= od < v.ndim:
        raise TransformError(
            f"vmap: out_dims entry for output leaf {i} is out of range for its {v.ndim} dims"
        )
    od %= v.ndim
    if od == 0:
        return v
    order = list(range(1, v.ndim))
    order.insert(od, 0)
    return api.permute(v, tuple(order))


table.register(vmap=vmap, dims_per_leaf=_dims_per_leaf)  # (a custom Function's vmap staticmethod)
