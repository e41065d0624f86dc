"""Shape primitives that copy (PyTorch's own backward nodes): flip, roll, rot90, repeat, tril/triu,
diag_embed, diagonal copies, block_diag, narrow_copy, the *_scatter ops, and the unfold view.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry. Composites over these (fliplr, tile, movedim, hstack, ...) live in
:mod:`reference.ops.functions.shape`, as in PyTorch.
"""

from __future__ import annotations

from reference import errors
from reference.autograd.batching import view_rule
from reference.autograd.dispatch import apply, apply_view
from reference.backend import namespace_of
from reference.ops import api as A
from reference.ops.rule import AUTO_LINEAR, SAME_VIEW
from reference.ops.rules._helpers import _view_index
from reference.ops.rules.registry import RULES, rule


def _call(name, *inputs, **params):
    """Rule ``name`` of the table on Tensor ``inputs`` (a differentiable op, for the formulas)."""
    return apply(RULES[name], inputs, params)


def _zeros(g, shape):
    return A.zeros(tuple(shape), dtype=g.dtype, device=g.device)


def _shift_dims(*names):
    """A batch rule for an op on one input whose ``names`` params are dims (tuples or ints) of it:
    the batch dim goes first and those dims shift by one."""

    def batch(b, params):
        p = dict(params)
        for n in names:
            v = p[n]
            p[n] = tuple(d + 1 for d in v) if isinstance(v, tuple) else v + 1
        return apply(b.rule, (b.front(0),), p, cast=b.cast), 0

    return batch


def _same_params(b, params):
    """Ops on the last dims (tril, triu): the batch dim first, the same parameters."""
    return apply(b.rule, (b.front(0),), params, cast=b.cast), 0


# ---- flip, roll, rot90 -----------------------------------------------------------------------------

rule(
    "flip",
    "FlipBackward0",
    ("self",),
    forward=lambda a, dims: namespace_of(a).flip(a, axis=dims).copy() if dims else a.copy(),
    grads=(lambda c, g: _call("flip", g, dims=c.dims),),
    jvp=AUTO_LINEAR,
    batch=_shift_dims("dims"),
    error=errors.GATHER,
)


def _roll_forward(a, shifts, dims):
    xp = namespace_of(a)
    if not dims:  # PyTorch: roll the flattened tensor, then view it back
        return xp.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return xp.roll(a, shifts, axis=dims)


def _roll_batch(b, params):
    x = b.front(0)
    if params["dims"]:
        return apply(b.rule, (x,), {**params, "dims": tuple(d + 1 for d in params["dims"])}, cast=b.cast), 0
    flat = A.reshape(x, (b.size, -1))
    out = apply(b.rule, (flat,), {**params, "dims": (1,)}, cast=b.cast)
    return A.reshape(out, x.shape), 0


rule(
    "roll",
    "RollBackward0",
    ("self",),
    forward=_roll_forward,
    grads=(lambda c, g: _call("roll", g, shifts=tuple(-s for s in c.shifts), dims=c.dims),),
    jvp=AUTO_LINEAR,
    batch=_roll_batch,
    error=errors.GATHER,
)
rule(
    "rot90",
    "Rot90Backward0",
    ("self",),
    forward=lambda a, k, dims: namespace_of(a).rot90(a, k, axes=dims).copy(),
    grads=(lambda c, g: _call("rot90", g, k=-c.k, dims=c.dims),),
    jvp=AUTO_LINEAR,
    batch=_shift_dims("dims"),
    error=errors.GATHER,
)

# ---- repeat -----------------------------------------------------------------------------------------


def _repeat_forward(a, repeats):
    lead = len(repeats) - a.ndim
    return namespace_of(a).tile(a.reshape((1,) * lead + a.shape), repeats)


def _repeat_grad(c, g):
    """Sum the copies: view g as (r0, s0, r1, s1, ...) and sum over the r's (repeat_backward)."""
    shape, reps = c.shapes[0], c.repeats
    padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
    if 0 in g.shape:
        return _zeros(g, shape)
    split = []
    for r, s in zip(reps, padded):
        split += [r, s]
    out = A.sum(A.reshape(g, tuple(split)), tuple(range(0, 2 * len(reps), 2)))
    return A.reshape(out, shape)


def _repeat_batch(b, params):
    shape, reps = tuple(b.inputs[0].shape), params["repeats"]
    x = A.reshape(b.front(0), (b.size,) + (1,) * (len(reps) - len(shape)) + shape)
    return apply(b.rule, (x,), {"repeats": (1,) + tuple(reps)}, cast=b.cast), 0


rule(
    "repeat",
    "RepeatBackward0",
    ("self",),
    forward=_repeat_forward,
    grads=(_repeat_grad,),
    jvp=AUTO_LINEAR,
    batch=_repeat_batch,
    error=errors.GATHER,
)

# ---- tril, triu -------------------------------------------------------------------------------------

rule(
    "tril",
    "TrilBackward0",
    ("self",),
    forward=lambda a, diagonal: namespace_of(a).tril(a, diagonal),
    grads=(lambda c, g: _call("tril", g, diagonal=c.diagonal),),
    jvp=AUTO_LINEAR,
    batch=_same_params,
    error=errors.GATHER,
)
rule(
    "triu",
    "TriuBackward0",
    ("self",),
    forward=lambda a, diagonal: namespace_of(a).triu(a, diagonal),
    grads=(lambda c, g: _call("triu", g, diagonal=c.diagonal),),
    jvp=AUTO_LINEAR,
    batch=_same_params,
    error=errors.GATHER,
)

# ---- diagonals --------------------------------------------------------------------------------------


def _diag_index(n, offset):
    """Rows and columns of the ``n`` elements of diagonal ``offset``."""
    import numpy as np  # host-side index table

    i = np.arange(n)
    return i + max(-offset, 0), i + max(offset, 0)


def _diag_embed_forward(a, offset, dim1, dim2):
    xp = namespace_of(a)
    n = a.shape[-1]
    m = n + abs(offset)
    out = xp.zeros(a.shape[:-1] + (m, m), dtype=a.dtype)
    rows, cols = _diag_index(n, offset)
    out[..., rows, cols] = a
    return xp.moveaxis(out, (-2, -1), (dim1, dim2)).copy()


rule(
    "diag_embed",
    "DiagEmbedBackward0",
    ("self",),
    forward=_diag_embed_forward,
    grads=(lambda c, g: A.diagonal(g, c.offset, c.dim1, c.dim2),),
    jvp=AUTO_LINEAR,
    batch=_shift_dims("dim1", "dim2"),
    error=errors.GATHER,
)


def _diagonal_view(xp, out, offset, dim1, dim2):
    """A writable view of ``out`` with dims (..., dim1, dim2) last, and the diagonal's index."""
    moved = xp.moveaxis(out, (dim1, dim2), (-2, -1))
    n = max(0, min(moved.shape[-2] + min(offset, 0), moved.shape[-1] - max(offset, 0)))
    return moved, _diag_index(n, offset)


def _diagonal_copy_forward(a, offset, dim1, dim2):
    xp = namespace_of(a)
    moved, (rows, cols) = _diagonal_view(xp, a, offset, dim1, dim2)
    return moved[..., rows, cols].copy()


def _diagonal_backward(g, shape, offset, dim1, dim2):
    """aten's diagonal_backward: g scattered onto the diagonal of zeros of ``shape``."""
    return _call("diagonal_scatter", _zeros(g, shape), g, offset=offset, dim1=dim1, dim2=dim2)


rule(
    "diagonal_copy",
    "DiagonalBackward0_copy",
    ("self",),
    forward=_diagonal_copy_forward,
    grads=(lambda c, g: _diagonal_backward(g, c.shapes[0], c.offset, c.dim1, c.dim2),),
    jvp=AUTO_LINEAR,
    batch=_shift_dims("dim1", "dim2"),
    error=errors.GATHER,
)

# ---- *_scatter: out = input with a view replaced by src --------------------------------------------


def _scatter_batch(*names):
    def batch(b, params):
        p = dict(params)
        for n in names:
            p[n] = p[n] + 1
        return apply(b.rule, (b.expanded(0), b.expanded(1)), p, cast=b.cast), 0

    return batch


def _select_scatter_forward(a, src, dim, index):
    out = a.copy()
    out[(slice(None),) * dim + (index,)] = src
    return out


rule(
    "select_scatter",
    "SelectScatterBackward0",
    ("self", "src"),
    forward=_select_scatter_forward,
    grads=(
        lambda c, g: _call("select_scatter", g, _zeros(g, c.shapes[1]), dim=c.dim, index=c.index),
        lambda c, g: A.select(g, c.dim, c.index),
    ),
    jvp=AUTO_LINEAR,
    batch=_scatter_batch("dim"),
    error=errors.GATHER,
)


def _slice_scatter_forward(a, src, dim, start, end, step):
    out = a.copy()
    out[(slice(None),) * dim + (slice(start, end, step),)] = src
    return out


def _slice_params(c):
    return {"dim": c.dim, "start": c.start, "end": c.end, "step": c.step}


rule(
    "slice_scatter",
    "SliceScatterBackward0",
    ("self", "src"),
    forward=_slice_scatter_forward,
    grads=(
        lambda c, g: _call("slice_scatter", g, _zeros(g, c.shapes[1]), **_slice_params(c)),
        lambda c, g: apply_view(RULES["slice"], g, _slice_params(c)),
    ),
    jvp=AUTO_LINEAR,
    batch=_scatter_batch("dim"),
    error=errors.GATHER,
)


def _diagonal_scatter_forward(a, src, offset, dim1, dim2):
    xp = namespace_of(a)
    out = a.copy()
    moved, (rows, cols) = _diagonal_view(xp, out, offset, dim1, dim2)
    moved[..., rows, cols] = src
    return out


rule(
    "diagonal_scatter",
    "DiagonalScatterBackward0",
    ("self", "src"),
    forward=_diagonal_scatter_forward,
    grads=(
        lambda c, g: _call(
            "diagonal_scatter", g, _zeros(g, c.shapes[1]), offset=c.offset, dim1=c.dim1, dim2=c.dim2
        ),
        lambda c, g: A.diagonal(g, c.offset, c.dim1, c.dim2),
    ),
    jvp=AUTO_LINEAR,
    batch=_scatter_batch("dim1", "dim2"),
    error=errors.GATHER,
)

# ---- narrow_copy ------------------------------------------------------------------------------------

rule(
    "narrow_copy",
    "NarrowCopyBackward0",
    ("self",),
    forward=lambda a, dim, start, length: a[(slice(None),) * dim + (slice(start, start + length),)].copy(),
    grads=(
        lambda c, g: _call(
            "slice_scatter",
            _zeros(g, c.shapes[0]),
            g,
            dim=c.dim,
            start=c.start,
            end=c.start + c.length,
            step=1,
        ),
    ),
    jvp=AUTO_LINEAR,
    batch=_shift_dims("dim"),
    error=errors.GATHER,
)

# ---- block_diag -------------------------------------------------------------------------------------


def _block_diag_forward(*xs, lead):
    """Blocks on the diagonal of the last two dims; ``lead`` leading batch dims (vmap) are shared."""
    xp = namespace_of(*xs)
    batch = xs[0].shape[:lead] if xs else ()
    rows = sum(x.shape[lead] for x in xs)
    cols = sum(x.shape[lead + 1] for x in xs)
    out = xp.zeros(batch + (rows, cols), dtype=xs[0].dtype if xs else None)
    r = c = 0
    for x in xs:
        h, w = x.shape[lead], x.shape[lead + 1]
        out[..., r : r + h, c : c + w] = x
        r, c = r + h, c + w
    return out


def _block_diag_vjp(c, g):
    out, r, col = [], 0, 0
    for shape, need in zip(c.shapes, c.needs):
        h, w = shape[c.lead], shape[c.lead + 1]
        if need:
            out.append(A.narrow(A.narrow(g, -2, r, h), -1, col, w))
        else:
            out.append(None)
        r, col = r + h, col + w
    return out


def _block_diag_batch(b, params):
    lead = params["lead"]
    xs = tuple(b.expanded(i) for i in range(len(b.inputs)))
    return apply(b.rule, xs, {"lead": lead + 1}, cast=b.cast), 0


rule(
    "block_diag",
    "BlockDiagBackward0",
    ("tensors",),
    forward=_block_diag_forward,
    vjp=_block_diag_vjp,
    jvp=AUTO_LINEAR,
    batch=_block_diag_batch,
    error=errors.GATHER,
)

# ---- Tensor.unfold (a view) ---------------------------------------------------------------------------


def unfold_geometry(shape, stride, offset, dim, size, step):
    if not shape:  # a 0-d tensor unfolds into a 1-element window
        return (size,), (1,), offset
    n = (shape[dim] - size) // step + 1
    new_shape = shape[:dim] + (n,) + shape[dim + 1 :] + (size,)
    new_stride = stride[:dim] + (stride[dim] * step,) + stride[dim + 1 :] + (stride[dim],)
    return tuple(new_shape), tuple(new_stride), offset


rule(
    "unfold",
    "UnfoldBackward0",
    ("self",),
    view=unfold_geometry,
    grads=(lambda c, g: A.scatter_add(g, _view_index(c, unfold_geometry), c.shapes[0]),),
    jvp=SAME_VIEW,
    batch=lambda b, p: _unfold_batch(b, p),
)

_unfold_view_batch = view_rule(lambda p, shape, n: {**p, "dim": p["dim"] + 1})


def _unfold_batch(b, params):
    """The same unfold of the physical value one dim further; a logical 0-d input (physical (B,))
    unfolds into its one-element window, or an empty one for size 0: (B, size), still a view."""
    if tuple(b.inputs[0].shape) == ():
        return A.narrow(A.unsqueeze(b.front(0), 1), 1, 0, params["size"]), 0
    return _unfold_view_batch(b, params)


# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
