"""Batch rules for ``convolution_backward`` and ``convolution_double_backward``: a vmap batch
dim B on any of grad_output, input and weight (seven combinations), never a loop.

functorch's rules, derived from what each gradient depends on:

* grad_input depends on (grad_output, weight) only. It *is* a convolution of grad_output with
  the weight — a transposed one for an ordinary convolution, an ordinary one for a transposed
  convolution — so it reuses the forward fold rules of :func:`batched_convolution`.
* grad_weight depends on (input, grad_output) only, a correlation of the two over the batch and
  space. When both are batched, B joins the groups (each b is its own set of groups); when one
  is, B joins that array's channels *inside* each group, and the weight gradient comes out with B
  folded into the corresponding weight dim, which is unfolded back.
* grad_bias is grad_output summed over everything but channels.

A gradient whose inputs are all unbatched is computed once and broadcast over B. ``loop``
(slice, call the unbatched function, stack) is the oracle the fold rules are tested against.
"""

from __future__ import annotations

from reference.backend import namespace_of
from reference.conv.api import _array, convolution, convolution_backward, convolution_double_backward
from reference.conv.batched import batched_convolution
from reference.conv.errors import ConvConfigError
from reference.conv.geometry import plan

ALGORITHMS = ("fold_batch_into_groups", "loop")


def batched_convolution_backward(
    grad_output,
    input,
    weight,
    bias_sizes,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    output_mask,
    *,
    batched,
    algorithm=None,
):
    """``convolution_backward`` mapped over a leading batch dim of the arrays flagged in
    ``batched = (grad_output_batched, input_batched, weight_batched)``. Every returned gradient
    carries the batch dim first."""
    arrays = {"grad_output": grad_output, "input": input, "weight": weight}
    flags = dict(zip(arrays, _flags("batched", batched, 3)))
    batch = _batch_size(arrays, flags)
    params = (stride, padding, dilation, transposed, output_padding, groups)
    gO, x, w = (_array(n, a) for n, a in arrays.items())
    if _algorithm(algorithm) == "loop":
        return _loop(
            lambda go, xx, ww: convolution_backward(go, xx, ww, bias_sizes, *params, output_mask),
            (gO, x, w),
            tuple(flags.values()),
            batch,
        )
    gO_b, x_b, w_b = flags.values()
    one = lambda a, b: a[0] if b else a  # one unbatched slice, for shapes
    p = plan(one(x, x_b).shape, one(w, w_b).shape, *params)
    if tuple(one(gO, gO_b).shape) != p.output_shape:
        raise ConvConfigError(
            "grad_output.shape",
            tuple(gO.shape),
            f"must be {p.output_shape}, with a leading batch dim if batched",
        )
    mask = tuple(bool(m) for m in output_mask)
    grad_input = _grad_input(gO, w, p, params, gO_b, w_b, batch) if mask[0] else None
    grad_weight = _grad_weight(gO, x, w, p, params, gO_b, x_b, batch) if mask[1] else None
    grad_bias = None
    if mask[2]:
        axes = (0, *range(2, gO.ndim - gO_b)) if not gO_b else (1, *range(3, gO.ndim))
        grad_bias = _broadcast(gO.sum(axis=axes), batch, gO_b)
    return grad_input, grad_weight, grad_bias


def input_gradient_as_convolution(p):
    """The convolution of grad_output with the *same* weight that gives the input gradient:
    ``(params, crop)``, aten's positional parameters and the input's spatial size to crop to.

    An ordinary convolution's input gradient is the transposed convolution with the same
    padding, whose output_padding is the stride remainder that restores the input size. A
    transposed convolution's is the ordinary convolution, which can produce extra positions
    (output_padding >= stride), cropped."""
    corr = p.corr
    if not p.transposed:
        remainder = tuple(
            xp - ((y - 1) * s + ek)
            for xp, y, s, ek in zip(corr.padded_size, corr.out_size, corr.stride, corr.dilated_kernel)
        )
        return (corr.stride, corr.pads, corr.dilation, True, remainder, corr.groups), None
    return (corr.stride, corr.pads, corr.dilation, False, 0, corr.groups), tuple(p.input_shape[2:])


def _grad_input(gO, w, p, params, gO_b, w_b, batch):
    if not (gO_b or w_b):
        x_shape = _shape_only(gO, p.input_shape)
        gi, _, _ = convolution_backward(gO, x_shape, w, None, *params, (True, False, False))
        return _broadcast(gi, batch, False)
    dual, crop = input_gradient_as_convolution(p)
    gi = batched_convolution(gO, w, None, *dual, input_batched=gO_b, weight_batched=w_b)
    return gi if crop is None else gi[(Ellipsis, *(slice(0, n) for n in crop))]


def _shape_only(like, shape):
    """A zero-stride array of ``shape``: for arguments a gradient needs only the shape of."""
    xp = namespace_of(like)
    return xp.broadcast_to(xp.zeros((), dtype=like.dtype), tuple(shape))


def _explicit(p):
    """(padding, output_padding) that give the same plan when spelled out (string padding of a
    transposed convolution implies an output_padding)."""
    corr = p.corr
    if not p.transposed:
        return corr.pads, 0
    output_padding = tuple(
        y - ((x - 1) * s - lo - hi + ek)
        for y, x, s, (lo, hi), ek in zip(
            corr.in_size, p.input_shape[2:], corr.stride, corr.pads, corr.dilated_kernel
        )
    )
    return corr.pads, output_padding


def _grad_weight(gO, x, w, p, params, gO_b, x_b, batch):
    stride, _, dilation, transposed, _, groups = params
    if not (gO_b or x_b):
        gw = convolution_backward(gO, x, _shape_only(x, p.weight_shape), None, *params, (False, True, False))[
            1
        ]
        return _broadcast(gw, batch, False)
    # Which weight dim holds input-side channels and which grad_output-side channels, and how
    # many groups each of those dims spans (PyTorch layouts: (O, C/g, k) and (C, O/g, k)).
    x_dim, gO_dim = (0, 1) if transposed else (1, 0)
    groups_in_dim = {0: groups, 1: 1}
    if gO_b and x_b:  # B joins the groups: every b is its own set of groups
        x_f, gO_f, g_f = _fold_batch_major(x), _fold_batch_major(gO), batch * groups
        unfold_dim, unfold_groups = 0, 1
    elif x_b:  # B joins the input's channels inside each group
        x_f, gO_f, g_f = _fold_within_groups(x, groups), gO, groups
        unfold_dim, unfold_groups = x_dim, groups_in_dim[x_dim]
    else:  # B joins grad_output's channels inside each group
        x_f, gO_f, g_f = x, _fold_within_groups(gO, groups), groups
        unfold_dim, unfold_groups = gO_dim, groups_in_dim[gO_dim]
    folded_shape = list(p.weight_shape)
    folded_shape[unfold_dim] *= batch
    padding, output_padding = _explicit(p)
    folded_params = (stride, padding, dilation, transposed, output_padding, g_f)
    gw = convolution_backward(
        gO_f, x_f, _shape_only(x, folded_shape), None, *folded_params, (False, True, False)
    )[1]
    return _unfold_dim(gw, unfold_dim, batch, unfold_groups)


def _fold_batch_major(a):
    """(B, N, Ch, *S) → (N, B·Ch, *S), channel order (b, c)."""
    return a.swapaxes(0, 1).reshape(a.shape[1], a.shape[0] * a.shape[2], *a.shape[3:])


def _fold_within_groups(a, groups):
    """(B, N, Ch, *S) → (N, Ch·B, *S), channel order (group, b, c within group)."""
    b, n, ch = a.shape[:3]
    spatial = a.shape[3:]
    grouped = a.reshape(b, n, groups, ch // groups, *spatial)
    return grouped.transpose(1, 2, 0, 3, *range(4, 4 + len(spatial))).reshape(n, ch * b, *spatial)


def _unfold_dim(a, dim, batch, groups_in_dim):
    """Undo a fold of B into axis ``dim`` laid out as (groups_in_dim, B, rest): B moves to axis 0."""
    size = a.shape[dim]
    rest = size // (groups_in_dim * batch)
    split = a.reshape(*a.shape[:dim], groups_in_dim, batch, rest, *a.shape[dim + 1 :])
    moved = namespace_of(a).moveaxis(split, dim + 1, 0)  # (B, ..., groups_in_dim, rest, ...)
    return moved.reshape(batch, *a.shape[:dim], groups_in_dim * rest, *a.shape[dim + 1 :])


def batched_convolution_double_backward(
    ggI,
    ggW,
    ggb,
    gO,
    weight,
    input,
    stride,
    padding,
    dilation,
    transposed,
    output_padding,
    groups,
    output_mask,
    *,
    batched,
    algorithm=None,
):
    """``convolution_double_backward`` mapped over a leading batch dim of the arrays flagged in
    ``batched = (ggI, ggW, ggb, gO, weight, input)`` (flags of ``None`` arrays are ignored).

    The double backward is three sums of convolutions (see ``convolution_double_backward``);
    each term is batched with the forward and backward rules above. Outputs are ``None`` where
    aten's are undefined (no cotangent they are built from)."""
    names = ("ggI", "ggW", "ggb", "gO", "weight", "input")
    arrays = dict(zip(names, (ggI, ggW, ggb, gO, weight, input)))
    flags = {n: f and arrays[n] is not None for n, f in zip(names, _flags("batched", batched, 6))}
    batch = _batch_size(arrays, flags)
    params = (stride, padding, dilation, transposed, output_padding, groups)
    if _algorithm(algorithm) == "loop":
        return _loop(
            lambda *a: convolution_double_backward(*a, *params, output_mask),
            tuple(arrays.values()),
            tuple(flags.values()),
            batch,
        )
    mask = tuple(bool(m) for m in output_mask)
    f = flags
    g_grad_output = g_input = g_weight = None
    if mask[0]:
        terms = []
        if ggI is not None:
            terms.append(_conv(ggI, weight, params, f["ggI"], f["weight"], batch))
        if ggW is not None:
            terms.append(_conv(input, ggW, params, f["input"], f["ggW"], batch))
        if ggb is not None:
            b = ggb if f["ggb"] else ggb[None]
            terms.append(b.reshape(b.shape[0], 1, b.shape[1], *(1,) * (gO.ndim - 2 - f["gO"])))
        g_grad_output = _sum_terms(terms, gO, f["gO"], batch) if terms else None
    if mask[1] and ggW is not None:
        g_input = _backward_term(gO, input, ggW, params, (f["gO"], f["input"], f["ggW"]), batch, 0)
    if mask[2] and ggI is not None:
        g_weight = _backward_term(gO, ggI, weight, params, (f["gO"], f["ggI"], f["weight"]), batch, 1)
    return g_grad_output, g_input, g_weight


def _conv(x, w, params, x_b, w_b, batch):
    if x_b or w_b:
        return batched_convolution(x, w, None, *params, input_batched=x_b, weight_batched=w_b)
    return convolution(x, w, None, *params)[None]


def _sum_terms(terms, gO, gO_b, batch):
    xp = namespace_of(gO)
    shape = (batch, *(gO.shape[1:] if gO_b else gO.shape))
    total = xp.zeros(shape, dtype=gO.dtype)
    for t in terms:
        total = total + t
    return total


def _backward_term(gO, x, w, params, flags, batch, index):
    """grad_input (index 0) or grad_weight (index 1) of the conv at (x, w), batched."""
    mask = (index == 0, index == 1, False)
    if not any(flags):
        return _broadcast(convolution_backward(gO, x, w, None, *params, mask)[index], batch, False)
    return batched_convolution_backward(gO, x, w, None, *params, mask, batched=flags)[index]


def _broadcast(a, batch, already_batched):
    if already_batched:
        return a
    xp = namespace_of(a)
    return xp.ascontiguousarray(xp.broadcast_to(a[None], (batch, *a.shape)))


def _loop(fn, arrays, flags, batch):
    xp = namespace_of(*arrays)
    results = [fn(*(a[b] if f and a is not None else a for a, f in zip(arrays, flags))) for b in range(batch)]
    return tuple(None if r[0] is None else xp.stack(r) for r in zip(*results))


def _flags(name, value, count):
    try:
        flags = tuple(bool(v) for v in value)
    except TypeError:
        raise ConvConfigError(name, value, f"must be a sequence of {count} bools") from None
    if len(flags) != count:
        raise ConvConfigError(name, value, f"must be a sequence of {count} bools")
    return flags


def _batch_size(arrays, flags):
    sizes = {n: arrays[n].shape[0] for n, f in flags.items() if f}
    if not sizes:
        raise ConvConfigError("batched", tuple(flags.values()), "at least one array must be batched")
    if len(set(sizes.values())) > 1:
        raise ConvConfigError("batched", sizes, "every batched array needs the same leading batch size")
    return next(iter(sizes.values()))


def _algorithm(name):
    name = name or "fold_batch_into_groups"
    if name not in ALGORITHMS:
        raise ConvConfigError("algorithm", name, f"the batched backward paths are {ALGORITHMS}")
    return name
