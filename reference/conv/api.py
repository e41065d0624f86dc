"""The public, array-level convolution API: aten's ``convolution``, ``convolution_backward`` and
``_convolution_double_backward``, on NumPy or CuPy arrays.

Arrays are channels-first: input (N, C, *spatial), weight (O, C/groups, *kernel), and for a
transposed convolution weight (C, O/groups, *kernel), exactly as in PyTorch.
"""

from __future__ import annotations

from reference.backend import is_inexact, namespace_of
from reference.conv import algorithms
from reference.conv.errors import ConvConfigError
from reference.conv.geometry import plan


def _array(name: str, a, ndim: int | None = None):
    if a is None or not hasattr(a, "shape") or not hasattr(a, "dtype"):
        raise ConvConfigError(name, type(a).__name__, "must be a NumPy or CuPy array")
    if not is_inexact(a.dtype):
        raise ConvConfigError(f"{name}.dtype", str(a.dtype), "must be a floating-point dtype")
    if ndim is not None and a.ndim != ndim:
        raise ConvConfigError(f"{name}.shape", tuple(a.shape), f"must have {ndim} dimensions")
    return a


def _channel_bias(b, rank):
    return b.reshape(1, -1, *(1,) * rank)


def _check_bias(bias, channels):
    _array("bias", bias)
    if tuple(bias.shape) != (channels,):
        raise ConvConfigError(
            "bias.shape", tuple(bias.shape), f"must be ({channels},), one per output channel"
        )


def _extend(a, extension):
    """Zero-extend the spatial end of ``a`` by ``extension`` (a transposed input, see geometry.plan)."""
    if not any(extension):
        return a
    xp = namespace_of(a)
    out = xp.zeros(a.shape[:2] + tuple(n + e for n, e in zip(a.shape[2:], extension)), dtype=a.dtype)
    out[(slice(None), slice(None), *(slice(0, n) for n in a.shape[2:]))] = a
    return out


def _crop(a, shape):
    return a[tuple(slice(0, n) for n in shape)]


def _fold_batch_groups(x, weight, batch_groups, groups, transposed):
    """JAX's batch_group_count: input batch split into contiguous blocks, block b feeding the b-th
    block of output channels. It is a feature-grouped convolution once the blocks move into channels.

    Returns ``(x_folded, w_folded, unfold_x, unfold_w)``: the arrays of that grouped convolution
    (``groups = batch_groups``) and the maps taking gradients of the folded arrays back. For a
    transposed convolution (weight (C, O, *k)) the same definition holds: block b of the input
    batch feeds output channels b*O/bg ... (b+1)*O/bg - 1, through weight[:, those channels]."""
    if isinstance(batch_groups, bool) or not isinstance(batch_groups, int) or batch_groups < 1:
        raise ConvConfigError("batch_groups", batch_groups, "must be a positive int")
    if groups != 1:
        raise ConvConfigError(
            "batch_groups", batch_groups, f"cannot be combined with groups={groups} (as in XLA)"
        )
    bg = batch_groups
    n, c = x.shape[0], x.shape[1]
    out_channels = weight.shape[1] if transposed else weight.shape[0]
    if n % bg:
        raise ConvConfigError("batch_groups", batch_groups, f"must divide the input batch ({n})")
    if out_channels % bg:
        raise ConvConfigError(
            "batch_groups", batch_groups, f"must divide the output channels ({out_channels})"
        )
    in_axis = 0 if transposed else 1
    if weight.ndim == x.ndim and weight.shape[in_axis] != c:
        raise ConvConfigError(
            "weight.shape",
            tuple(weight.shape),
            f"weight.shape[{in_axis}] must equal the input's channels ({c}) with batch_groups",
        )
    spatial = x.shape[2:]
    folded = x.reshape(bg, n // bg, c, *spatial).swapaxes(0, 1).reshape(n // bg, bg * c, *spatial)

    def unfold_x(g):
        return g.reshape(n // bg, bg, c, *spatial).swapaxes(0, 1).reshape(n, c, *spatial)

    if not transposed:
        return folded, weight, unfold_x, lambda g: g
    k = weight.shape[2:]
    o = out_channels // bg
    w_f = weight.reshape(c, bg, o, *k).swapaxes(0, 1).reshape(bg * c, o, *k)

    def unfold_w(g):
        return g.reshape(bg, c, o, *k).swapaxes(0, 1).reshape(c, bg * o, *k)

    return folded, w_f, unfold_x, unfold_w


def _dilate_input(x, lhs_dilation):
    """TF/JAX's input (lhs) dilation: ``d - 1`` zeros between neighbouring input elements per dim."""
    rank = x.ndim - 2
    if isinstance(lhs_dilation, bool):
        raise ConvConfigError("lhs_dilation", lhs_dilation, "must be an int >= 1 or one per spatial dim")
    d = (lhs_dilation,) * rank if isinstance(lhs_dilation, int) else tuple(lhs_dilation)
    if len(d) != rank or any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in d):
        raise ConvConfigError("lhs_dilation", lhs_dilation, f"must be an int >= 1 or {rank} of them")
    if all(v == 1 for v in d):
        return x, None
    xp = namespace_of(x)
    shape = x.shape[:2] + tuple((n - 1) * v + 1 if n else 0 for n, v in zip(x.shape[2:], d))
    out = xp.zeros(shape, dtype=x.dtype)
    index = (slice(None), slice(None), *(slice(None, None, v) for v in d))
    out[index] = x
    return out, index


def _unbatched(input, weight):
    """PyTorch's unbatched convolution input: (C, *spatial) with a (O, C/g, *k) weight."""
    return hasattr(input, "ndim") and hasattr(weight, "ndim") and input.ndim == weight.ndim - 1 >= 2


def convolution(
    input,
    weight,
    bias=None,
    stride=1,
    padding=0,
    dilation=1,
    transposed=False,
    output_padding=0,
    groups=1,
    *,
    batch_groups=1,
    lhs_dilation=1,
    algorithm=None,
):
    """aten's ``convolution``: N-d, strided, dilated, grouped, optionally transposed, with bias.

    ``padding``: an int, one int per spatial dim, one ``(lo, hi)`` pair per dim (asymmetric;
    negative crops), ``"valid"``, ``"same"`` (TensorFlow's split, odd pad at the end, any stride)
    or ``"same_lower"`` (odd pad at the start). ``batch_groups`` is JAX's
    ``batch_group_count`` (with ``transposed`` too: input batch block b feeds output-channel block
    b). ``lhs_dilation`` is TF/JAX's input dilation (``d - 1`` zeros between input elements, before
    padding; an extra keyword, PyTorch's ``dilation`` is the kernel's). An unbatched input
    ``(C, *spatial)`` gives an unbatched output, as PyTorch's ``conv2d`` on a 3-d tensor.
    ``algorithm`` forces one path (see :func:`algorithms`).
    """
    if _unbatched(input, weight):  # PyTorch's (C, *spatial) input: a batch of one, squeezed after
        y = convolution(
            input[None],
            weight,
            bias,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            batch_groups=batch_groups,
            lhs_dilation=lhs_dilation,
            algorithm=algorithm,
        )
        return y[0]
    x, w = _array("input", input), _array("weight", weight)
    x, _ = _dilate_input(x, lhs_dilation)
    if batch_groups != 1:
        x, w, _, _ = _fold_batch_groups(x, w, batch_groups, groups, transposed)
        groups = batch_groups
    p = plan(x.shape, w.shape, stride, padding, dilation, transposed, output_padding, groups)
    xp = namespace_of(x, w, bias)
    corr = p.corr
    if bias is not None:
        _check_bias(bias, p.output_shape[1])
    if corr.is_empty() or 0 in p.output_shape:
        y = xp.zeros(p.output_shape, dtype=xp.result_type(x, w))
    elif not p.transposed:
        y = algorithms.kernel(algorithm, corr, "forward")(x, w, corr)
    else:
        y = algorithms.kernel(algorithm, corr, "grad_input", "forward")(
            _extend(x, p.transposed_input_extension), w, corr
        )
    y = (
        y if y.dtype == xp.result_type(x, w) else y.astype(xp.result_type(x, w))
    )  # bfloat16: matmul gives float32
    if bias is not None:
        y = y + _channel_bias(bias, corr.rank)
    return y


def convolution_backward(
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
    batch_groups=1,
    lhs_dilation=1,
    algorithm=None,
):
    """aten's ``convolution_backward``: ``(grad_input, grad_weight, grad_bias)``, each ``None`` where
    ``output_mask`` is False. ``bias_sizes`` is the bias shape (or ``None``) and is only checked.
    ``batch_groups``, ``lhs_dilation`` and unbatched arrays as in :func:`convolution`."""
    if _unbatched(input, weight):
        gi, gw, gb = convolution_backward(
            grad_output[None],
            input[None],
            weight,
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            output_mask,
            batch_groups=batch_groups,
            lhs_dilation=lhs_dilation,
            algorithm=algorithm,
        )
        return (None if gi is None else gi[0]), gw, gb
    gy, x, w = _array("grad_output", grad_output), _array("input", input), _array("weight", weight)
    mask = _mask(output_mask)
    x, dilated_at = _dilate_input(x, lhs_dilation)
    if batch_groups != 1:
        x, w, unfold_x, unfold_w = _fold_batch_groups(x, w, batch_groups, groups, transposed)
        gi, gw, gb = convolution_backward(
            gy,
            x,
            w,
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            batch_groups,
            output_mask,
            algorithm=algorithm,
        )
        gi = None if gi is None else unfold_x(gi)
        gw = None if gw is None else unfold_w(gw)
        return (gi if gi is None or dilated_at is None else gi[dilated_at]), gw, gb
    if dilated_at is not None:
        gi, gw, gb = convolution_backward(
            gy,
            x,
            w,
            bias_sizes,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            output_mask,
            algorithm=algorithm,
        )
        return (None if gi is None else gi[dilated_at]), gw, gb
    p = plan(x.shape, w.shape, stride, padding, dilation, transposed, output_padding, groups)
    if tuple(gy.shape) != p.output_shape:
        raise ConvConfigError(
            "grad_output.shape",
            tuple(gy.shape),
            f"must equal the convolution's output shape {p.output_shape}",
        )
    if bias_sizes is not None and tuple(bias_sizes) != (p.output_shape[1],):
        raise ConvConfigError("bias_sizes", tuple(bias_sizes), f"must be ({p.output_shape[1]},)")
    xp = namespace_of(gy, x, w)
    dtype = xp.result_type(gy, x, w)
    corr = p.corr
    empty = corr.is_empty() or 0 in p.output_shape
    grad_input = grad_weight = grad_bias = None
    if mask[0]:
        if empty:
            grad_input = xp.zeros(p.input_shape, dtype=dtype)
        elif not p.transposed:
            grad_input = algorithms.kernel(algorithm, corr, "grad_input")(gy, w, corr)
        else:  # the public input is the correlation's output side
            grad_input = _crop(
                algorithms.kernel(algorithm, corr, "forward", "grad_input")(gy, w, corr), p.input_shape
            )
    if mask[1]:
        if empty:
            grad_weight = xp.zeros(p.weight_shape, dtype=dtype)
        elif not p.transposed:
            grad_weight = algorithms.kernel(algorithm, corr, "grad_weight")(x, gy, corr)
        else:
            x_ext = _extend(x, p.transposed_input_extension)
            grad_weight = algorithms.kernel(algorithm, corr, "grad_weight")(gy, x_ext, corr)
    if mask[2]:
        grad_bias = gy.sum(axis=(0, *range(2, gy.ndim))).astype(dtype, copy=False)
    return grad_input, grad_weight, grad_bias


def convolution_double_backward(
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
    batch_groups=1,
):
    """aten's ``_convolution_double_backward``: the VJP of ``convolution_backward``.

    ``convolution_backward`` is bilinear, so with (ggI, ggW, ggb) the cotangents of
    (grad_input, grad_weight, grad_bias):

    * g_grad_output = conv(ggI, w) + conv(x, ggW) + ggb      (each term is ⟨gg·, ∂/∂gO⟩)
    * g_input       = grad_input of conv(x, ggW) at gO        (⟨ggW, gW(x)⟩ is linear in x)
    * g_weight      = grad_weight of conv(ggI, w) at gO       (⟨ggI, gI(w)⟩ is linear in w)

    As in aten, an output is ``None`` (undefined) where ``output_mask`` is False *or* where none
    of the cotangents it is built from is given: g_grad_output needs one of ggI/ggW/ggb, g_input
    needs ggW, g_weight needs ggI. Callers that want zeros there materialise them.

    ``batch_groups`` and unbatched arrays as in :func:`convolution`.
    """
    if _unbatched(input, weight):
        ggo, gi, gw = convolution_double_backward(
            None if ggI is None else ggI[None],
            ggW,
            ggb,
            gO[None],
            weight,
            input[None],
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            output_mask,
            batch_groups=batch_groups,
        )
        return (None if ggo is None else ggo[0]), (None if gi is None else gi[0]), gw
    if batch_groups != 1:
        x_f, w_f, unfold_x, unfold_w = _fold_batch_groups(
            _array("input", input), _array("weight", weight), batch_groups, groups, transposed
        )
        ggI_f = ggW_f = None
        if ggI is not None:
            ggI_f = _fold_batch_groups(_array("ggI", ggI), weight, batch_groups, groups, transposed)[0]
        if ggW is not None:
            ggW_f = _fold_batch_groups(input, _array("ggW", ggW), batch_groups, groups, transposed)[1]
        ggo, gi, gw = convolution_double_backward(
            ggI_f,
            ggW_f,
            ggb,
            gO,
            w_f,
            x_f,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            batch_groups,
            output_mask,
        )
        return ggo, (None if gi is None else unfold_x(gi)), (None if gw is None else unfold_w(gw))
    gy, x, w = _array("gO", gO), _array("input", input), _array("weight", weight)
    mask = _mask(output_mask)
    params = (stride, padding, dilation, transposed, output_padding, groups)
    p = plan(x.shape, w.shape, *params)
    for name, g, shape in (("ggI", ggI, p.input_shape), ("ggW", ggW, p.weight_shape)):
        if g is not None and tuple(_array(name, g).shape) != shape:
            raise ConvConfigError(f"{name}.shape", tuple(g.shape), f"must equal {shape}")
    if ggb is not None:
        _check_bias(ggb, p.output_shape[1])
    if tuple(gy.shape) != p.output_shape:
        raise ConvConfigError(
            "gO.shape", tuple(gy.shape), f"must equal the convolution's output shape {p.output_shape}"
        )

    xp = namespace_of(gy, x, w)
    g_grad_output = g_input = g_weight = None
    if mask[0] and not (ggI is None and ggW is None and ggb is None):
        g_grad_output = xp.zeros(p.output_shape, dtype=xp.result_type(gy, x, w))
        if ggI is not None:
            g_grad_output = g_grad_output + convolution(ggI, w, None, *params)
        if ggW is not None:
            g_grad_output = g_grad_output + convolution(x, ggW, None, *params)
        if ggb is not None:
            g_grad_output = g_grad_output + _channel_bias(ggb, p.corr.rank)
    if mask[1] and ggW is not None:
        g_input = convolution_backward(gy, x, ggW, None, *params, (True, False, False))[0]
    if mask[2] and ggI is not None:
        g_weight = convolution_backward(gy, ggI, w, None, *params, (False, True, False))[1]
    return g_grad_output, g_input, g_weight


def _mask(output_mask):
    try:
        mask = tuple(bool(m) for m in output_mask)
    except TypeError:
        raise ConvConfigError("output_mask", output_mask, "must be a sequence of three bools") from None
    if len(mask) != 3:
        raise ConvConfigError("output_mask", output_mask, "must be a sequence of three bools")
    return mask
