"""vmap: batched tensors, batch rules and the slice-loop-stack fallback.

Inside ``vmap`` a batched tensor is seen by user code as a *logical* tensor, without the batch
dimension: a placeholder whose ``_data`` has the logical shape (filled with NaN, so anything that
reads it instead of going through a primitive shows up) and whose ``_batched[level]`` holds the
*physical* value and where its batch dimension is. Every primitive goes through the dispatcher,
which asks the innermost visible level holding one of its inputs to run it
(:mod:`reference.autograd.levels` keeps the stack; vmap and jvp levels interleave in it):

* the autograd node, shape checks and type promotion happen on the logical tensors, as without
  vmap, so ``vmap(grad(f))`` records the graph of one sample and runs its backward batched;
* the values come from the rule's ``batch`` field, run one level down on the physical values
  (so outer levels, and reverse mode on the physical tensors, see those ops: ``grad(vmap(f))``,
  ``vmap(vmap(f))``, ``jvp(vmap(f))`` compose);
* a primitive without a batch rule runs the fallback: slice every batched input, run the
  primitive per sample, stack (counted in :func:`fallback_counts`), or, with
  ``allow_fallback=False``, raises :class:`BatchRuleError` naming it.

A batch rule is ``batch(b, params) -> (value, bdim) | tuple of them``; ``b`` is a
:class:`BatchCall` (the batch size, each input's physical value and batch dim). The table's
shorthands (``BATCH_ELEMENTWISE``, ``BATCH_REDUCE``, ``BATCH_DIM``, ``BATCH_MATMUL``) are
implemented here; view ops declare how their parameters shift with :func:`view_rule`.
"""

from __future__ import annotations

import collections

import numpy as np

from reference.autograd import levels
from reference.autograd.dispatch import apply, apply_view
from reference.autograd.forward_ad import MissingRuleError
from reference.autograd.levels import VmapError, lowered
from reference.autograd.table import (
    BATCH_DIM,
    BATCH_ELEMENTWISE,
    BATCH_MATMUL,
    BATCH_REDUCE,
    RULES,
    ops,
    register,
)
from reference.autograd.tensor import _make
from reference.backend import is_inexact, namespace_of

_fallbacks: collections.Counter = collections.Counter()


class BatchRuleError(MissingRuleError):
    """vmap(..., allow_fallback=False) met a primitive without a batch rule."""

    def __init__(self, primitive):
        super().__init__(primitive, "batch", "vmap(allow_fallback=False)")


class VmapLevel:
    def __init__(self, size, allow_fallback):
        self.size = size
        self.allow_fallback = allow_fallback


def fallback_counts():
    """How many times each primitive ran the slice-loop-stack fallback since the last reset."""
    return dict(_fallbacks)


def reset_fallback_counts():
    _fallbacks.clear()


# ---- batched tensors --------------------------------------------------------------------------------


def physical(t, level):
    """``(value, bdim)`` of ``t`` at ``level``, or None when ``t`` is not batched there."""
    if t is None or t._batched is None:
        return None
    return t._batched.get(level)


def placeholder(value, bdim, level):
    """The logical tensor of physical ``value`` batched along ``bdim`` at ``level``."""
    shape = value.shape[:bdim] + value.shape[bdim + 1 :]
    dt = value.dtype
    xp = namespace_of(value._data)  # on the physical value's device, which the logical tensor reports
    arr = xp.full(shape, np.nan, dtype=dt) if is_inexact(dt) else xp.zeros(shape, dtype=dt)
    t = _make(arr)
    t._batched = {level: (value, bdim)}
    return t


def attach(t, value, bdim, level):
    d = dict(t._batched) if t._batched else {}
    d[level] = (value, bdim)
    t._batched = d


def move_to_front(value, bdim):
    if bdim == 0:
        return value
    dims = (bdim,) + tuple(i for i in range(value.ndim) if i != bdim)
    return ops.permute(value, dims)


class BatchCall:
    """One primitive call at a vmap level: its inputs' physical values and batch dims."""

    def __init__(self, rule, inputs, level, info, cast):
        self.rule, self.inputs, self.size, self.cast, self.level = rule, inputs, info.size, cast, level
        self.allow_fallback = info.allow_fallback
        self.values, self.bdims = [], []
        for t in inputs:
            p = physical(t, level)
            self.values.append(t if p is None else p[0])
            self.bdims.append(None if p is None else p[1])

    def front(self, i):
        """Input ``i`` with its batch dim first (None when it is not batched)."""
        if self.bdims[i] is None:
            return None
        return move_to_front(self.values[i], self.bdims[i])

    def expanded(self, i):
        """Input ``i`` batched along dim 0, expanding an unbatched one (a view, no copy)."""
        v = self.front(i)
        if v is not None:
            return v
        x = self.values[i]
        return ops.expand(ops.unsqueeze(x, 0), (self.size,) + tuple(x.shape))

    def aligned(self, i, rank):
        """Input ``i`` for broadcasting against logical rank ``rank``: batched inputs become
        ``(B, 1, ..., *shape)``; unbatched ones stay as they are (they broadcast from the right)."""
        v = self.front(i)
        if v is None:
            return self.values[i]
        shape = tuple(self.inputs[i].shape)
        if len(shape) < rank:
            v = ops.reshape(v, (self.size,) + (1,) * (rank - len(shape)) + shape)
        return v


# ---- the shorthands ---------------------------------------------------------------------------------


def _elementwise(b, params):
    rank = max(len(t.shape) for t in b.inputs if t is not None)
    args = tuple(None if t is None else b.aligned(i, rank) for i, t in enumerate(b.inputs))
    return apply(b.rule, args, params, cast=b.cast), 0


def _reduce(b, params):
    rule = b.rule
    if rule.name in ("sum", "mean"):
        rule = RULES[rule.name + "_dim"]
    dim = params["dim"]
    dims = tuple(range(len(b.inputs[0].shape))) if dim is None else dim
    return apply(rule, (b.front(0),), {**params, "dim": tuple(d + 1 for d in dims)}, cast=b.cast), 0


def _dim(b, params):
    args = tuple(b.expanded(i) for i in range(len(b.inputs)))
    if params["dim"] is None or not b.inputs[0].shape:  # a 0-d logical tensor: each sample its own axis
        args = tuple(ops.unsqueeze(a, -1) for a in args)
        return ops.squeeze(apply(b.rule, args, {**params, "dim": 1}, cast=b.cast), -1), 0
    return apply(b.rule, args, {**params, "dim": params["dim"] + 1}, cast=b.cast), 0


def _matmul(b, params):
    """dot/mv/mm/bmm as one broadcasting matmul: 1-d operands become matrices, the batched operand
    gets unit dims after B so that batch dims line up from the right, then the unit dims go."""
    sa, sb = (tuple(t.shape) for t in b.inputs)
    ra, rb = max(len(sa), 2), max(len(sb), 2)
    rank = max(ra, rb)
    args = []
    for i, (shape, vec_dim) in enumerate(((sa, -2), (sb, -1))):
        v = b.front(i)
        if v is None:
            v = b.values[i]
            if len(shape) == 1:
                v = ops.unsqueeze(v, vec_dim)
        else:
            if len(shape) == 1:
                v = ops.unsqueeze(v, vec_dim)
            mat = tuple(v.shape[1:])
            v = ops.reshape(v, (b.size,) + (1,) * (rank - len(mat)) + mat)
        args.append(v)
    out = apply(RULES["bmm"], tuple(args), {})
    if len(sb) == 1:
        out = ops.squeeze(out, -1)
    if len(sa) == 1:
        out = ops.squeeze(out, -1 if len(sb) == 1 else -2)
    extra = out.ndim - 1 - _matmul_rank(sa, sb)
    if extra:
        out = ops.reshape(out, (b.size,) + tuple(out.shape[1 + extra :]))
    return out, 0


def _matmul_rank(sa, sb):
    if len(sa) == 1 and len(sb) == 1:
        return 0
    batch = max(len(sa), len(sb)) - 2 if min(len(sa), len(sb)) >= 2 else max(len(sa), len(sb)) - 2
    return max(batch, 0) + (len(sa) > 1) + (len(sb) > 1)


_SHORTHANDS = {
    BATCH_ELEMENTWISE: _elementwise,
    BATCH_REDUCE: _reduce,
    BATCH_DIM: _dim,
    BATCH_MATMUL: _matmul,
}


class Copied:
    """A view op's physical value that had to be a copy."""

    def __init__(self, value):
        self.value = value


def _viewable(x, size):
    try:
        ops.view_geometry(tuple(x.shape), x.stride(), x.storage_offset(), size=tuple(size))
    except RuntimeError:
        return False
    return True


def view_rule(shift):
    """A view op's batch rule: the same view of the physical value (batch dim first) with the
    parameters ``shift(params, logical_shape, B)`` returns; every output keeps the batch dim at 0."""

    def batch(b, params):
        x = b.front(0)
        shape = tuple(b.inputs[0].shape)
        new = shift(dict(params), shape, b.size)
        if "_reshape" in new:  # expand: unit dims first, so the logical dims line up
            x = ops.reshape(x, new.pop("_reshape"))
        if b.rule.name == "view" and not _viewable(x, new["size"]):
            # the logical tensor is viewable but, with the batch dim moved first, the physical one
            # is not: copy it (and refuse later writes through the copy, see batch_inplace)
            return Copied(ops.reshape(x, new["size"])), 0
        out = apply_view(b.rule, x, new)
        return tuple((o, 0) for o in out) if isinstance(out, tuple) else (out, 0)

    return batch


# ---- running a primitive at a vmap level ------------------------------------------------------------


def _run(index, rule, inputs, params, cast):
    """Physical outputs [(value, bdim)] of ``rule`` on ``inputs`` at the vmap level ``index``."""
    info = levels.vmap_level(index)
    level = levels.state.stack[index]
    with lowered(index):
        b = BatchCall(rule, inputs, level, info, cast)
        spec = rule.batch
        if spec is None:
            count_fallback(b)
            out = _fallback(b, params)
        else:
            out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(b, params)
    if isinstance(out[0], tuple) or isinstance(out, list):
        return list(out)
    return [out]


def count_fallback(b):
    """Record that ``b`` runs per sample (or refuse, under ``allow_fallback=False``)."""
    if not b.allow_fallback:
        raise BatchRuleError(b.rule.name)
    _fallbacks[b.rule.name] += 1


def _fallback(b, params):
    """Slice every batched input, run the primitive per sample (one level down), stack."""
    per_sample = []
    for k in range(b.size):
        args = tuple(v if d is None else ops.select(v, d, k) for v, d in zip(b.values, b.bdims))
        if b.rule.view is not None:
            res = apply_view(b.rule, args[0], params)
        else:
            res = apply(b.rule, args, params, cast=b.cast)
        per_sample.append(res if isinstance(res, tuple) else (res,))
    n = len(per_sample[0])
    outs = [(ops.stack([s[j] for s in per_sample], 0), 0) for j in range(n)]
    return outs if n > 1 or isinstance(res, tuple) else outs[0]


def batch_apply(index, rule, inputs, params, cast):
    """Logical outputs (placeholders) of an out-of-place primitive, and its aux."""
    level = levels.state.stack[index]
    outs = _run(index, rule, inputs, params, cast)
    return [placeholder(v, d, level) for v, d in outs], _aux(rule, inputs, params, outs, level)


# Rules whose aux is an argmax: output 1 holds, per leading (batch, channel) plane, flat indices
# into the input's trailing ``n`` (spatial) dims, and the aux is the same indices made flat over
# the whole input. The family module registers its rules (pooling: max_pool2d -> 2).
ARGMAX_AUX: dict[str, int] = {}


def _aux(rule, inputs, params, outs, level):
    """The rule's aux for the logical node. Pooling geometry is the same for every sample (the
    kernel on the logical placeholders gives it); an argmax (:data:`ARGMAX_AUX`) is not, so it
    becomes a :class:`BatchedIndex` into the physical input, which ``take``/``scatter_add``
    understand."""
    if not rule.has_aux:
        return None
    n = ARGMAX_AUX.get(rule.name)
    if n is None:
        return rule.forward(*[None if t is None else t._data for t in inputs], **params)[1]
    values, indices = outs[0][0], outs[1][0]
    if indices._batched:  # batched again further out: its data is a placeholder there
        return NestedArgmax(rule.name)
    lead = values.shape[:-n]
    plane = np.arange(int(np.prod(lead)), dtype=np.int64).reshape(lead + (1,) * n) * int(
        np.prod(inputs[0].shape[-n:])
    )
    return BatchedIndex(indices._data + namespace_of(indices._data).asarray(plane))  # (host table to device)


class BatchedIndex:
    """Flat indices into a physical (batch-first) tensor, standing in for a logical flat index."""

    def __init__(self, array):
        self.array = array


class NestedArgmax:
    """An argmax aux (:data:`ARGMAX_AUX`) under two vmap levels."""

    def __init__(self, name):
        self.name = name


def flat_index(index, size, numel):
    """A logical flat index (or a BatchedIndex) as flat indices into ``(size, numel)`` values."""
    if isinstance(index, NestedArgmax):
        raise VmapError(
            f"vmap: the gradient of {index.name} under two nested vmaps needs argmax indices batched at both "
            "levels; one vmap level is supported (vmap(grad(f)), grad(vmap(f)))"
        )
    if isinstance(index, BatchedIndex):
        return index.array
    index = np.asarray(index)
    return np.arange(size, dtype=np.int64).reshape((size,) + (1,) * index.ndim) * numel + index


def batch_view(index, rule, src, params, run):
    """A view op: the logical view (recorded as usual by ``run``) and the physical view."""
    level = levels.state.stack[index]
    logical = run()
    outs = _run(index, rule, (src,), params, None)
    copied = src._vmap_copied
    for o, (v, d) in zip(logical if isinstance(logical, tuple) else (logical,), outs):
        if isinstance(v, Copied):
            v, copied = v.value, True
        attach(o, v, d, level)
        if copied:
            o._vmap_copied = True
    return logical


def batch_inplace(index, rule, self, others, params, cast, run):
    """``self.op_(*others)``: the batched result is written into self's physical value (which must
    be batched: vmap cannot write a batch into one tensor), then the logical op is recorded."""
    level = levels.state.stack[index]
    p = physical(self, level)
    if self._vmap_copied:
        raise VmapError(
            f"vmap: {rule.name}_ writes through a view whose batched value had to be copied (with the batch "
            "dim first, view() could not alias it); write into a .contiguous() tensor instead"
        )
    if p is None:
        raise VmapError(
            f"vmap: {rule.name}_(self, *others) writes a batched value into an unbatched tensor; "
            "the in-place target must be batched at this vmap level (out of place: use the op without _)"
        )
    (new, bdim), *_ = _run(index, rule, (self,) + tuple(others), params, cast)
    with lowered(index):
        ops.copy_(move_to_front(p[0], p[1]), move_to_front(new, bdim))
    return run()


def vmap_owner(args):
    """Stack index of the innermost visible vmap level at which a Tensor in ``args`` is batched."""
    for i in range(levels.state.visible - 1, -1, -1):
        level = levels.state.stack[i]
        if level in levels.state.vmap and any(physical(a, level) for a in args if hasattr(a, "_batched")):
            return i
    return None


def batch_plain(index, fn, args):
    """``fn(*args)`` for functions outside the table that read values (comparisons, logical ops):
    ``fn`` on the aligned physical values one level down, batched again."""
    level = levels.state.stack[index]
    info = levels.vmap_level(index)
    tensors = [a for a in args if hasattr(a, "_batched")]
    with lowered(index):
        call = BatchCall(None, tensors, level, info, None)
        rank = max(len(t.shape) for t in tensors)
        aligned = iter([call.aligned(i, rank) for i in range(len(tensors))])
        res = fn(*[next(aligned) if hasattr(a, "_batched") else a for a in args])
    return placeholder(res, 0, level)


# The dispatcher sits below batching (the batch rules run primitives through it, one level down),
# so it reaches a vmap level's steps through the core's table (reference.autograd.table).
register(batch_apply=batch_apply, batch_view=batch_view, batch_inplace=batch_inplace)
