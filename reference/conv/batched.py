"""A vmap batch of convolutions: a leading batch dim B on the input and/or the weight.

``fold_batch_into_groups`` is functorch's batch rule for convolution, which never loops:

* input and weight batched: B joins the channels of the input and the *groups*
  (x (B,N,C,…) → (N, B·C, …), w (B,O,Cg,…) → (B·O, Cg, …), groups → B·groups);
* only the input batched: B joins the batch (x → (B·N, C, …));
* only the weight batched: B joins the output channels, inside each group so that every group's
  output channels stay contiguous (w (B, g·Og, …) → (g·B·Og, …)).

``loop`` is the oracle: slice, convolve, stack.
"""

from __future__ import annotations

from reference.backend import namespace_of
from reference.conv.api import _array, convolution
from reference.conv.errors import ConvConfigError
from reference.conv.geometry import conv_output_shape

BATCHED_ALGORITHMS = ("fold_batch_into_groups", "loop")


def batched_convolution(
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
    input_batched=True,
    weight_batched=True,
    algorithm=None,
):
    """``convolution`` mapped over a leading batch dim of ``input`` and/or ``weight`` (and of
    ``bias`` when it is 2-d). Returns (B, N, O, *spatial)."""
    x, w = _array("input", input), _array("weight", weight)
    if not (input_batched or weight_batched):
        raise ConvConfigError(
            "input_batched", input_batched, "at least one of input and weight must be batched"
        )
    batch = _batch_size(x, w, input_batched, weight_batched)
    bias_batched = bias is not None and _array("bias", bias).ndim == 2
    if bias_batched and bias.shape[0] != batch:
        raise ConvConfigError(
            "bias.shape", tuple(bias.shape), f"a batched bias needs the batch size {batch} first"
        )
    params = (stride, padding, dilation, transposed, output_padding, groups)
    algorithm = algorithm or "fold_batch_into_groups"
    if batch == 0:  # nothing to map over: the shape of one result, zero times
        one = conv_output_shape(x.shape[input_batched:], w.shape[weight_batched:], *params)
        return namespace_of(x, w).zeros((0, *one), dtype=namespace_of(x, w).result_type(x, w))
    if algorithm == "loop":
        return _loop(x, w, bias, params, input_batched, weight_batched, bias_batched, batch)
    if algorithm != "fold_batch_into_groups":
        raise ConvConfigError("algorithm", algorithm, f"batched_convolution's paths are {BATCHED_ALGORITHMS}")
    y = _fold(x, w, params, input_batched, weight_batched, batch)
    if bias is not None:
        b = bias if bias_batched else bias[None]
        y = y + b.reshape(b.shape[0], 1, b.shape[1], *(1,) * (y.ndim - 3))
    return y


def _batch_size(x, w, input_batched, weight_batched):
    sizes = {}
    for name, a, batched in (("input", x, input_batched), ("weight", w, weight_batched)):
        if batched:
            if a.ndim not in (4, 5, 6):
                raise ConvConfigError(
                    f"{name}.shape",
                    tuple(a.shape),
                    "a batched array is (B, ·, ·, *spatial), 1-3 spatial dims",
                )
            sizes[name] = a.shape[0]
    if len(set(sizes.values())) > 1:
        raise ConvConfigError(
            "weight.shape",
            tuple(w.shape),
            f"batch size {sizes['weight']} differs from input's {sizes['input']}",
        )
    return next(iter(sizes.values()))


def _loop(x, w, bias, params, input_batched, weight_batched, bias_batched, batch):
    xp = namespace_of(x, w)
    outs = [
        convolution(
            x[b] if input_batched else x,
            w[b] if weight_batched else w,
            (bias[b] if bias_batched else bias),
            *params,
        )
        for b in range(batch)
    ]
    return xp.stack(outs)


def _fold(x, w, params, input_batched, weight_batched, batch):
    stride, padding, dilation, transposed, output_padding, groups = params
    conv = lambda xx, ww, g: convolution(
        xx, ww, None, stride, padding, dilation, transposed, output_padding, g
    )
    if input_batched and not weight_batched:
        y = conv(x.reshape(batch * x.shape[1], *x.shape[2:]), w, groups)
        return y.reshape(batch, x.shape[1], *y.shape[1:])
    if input_batched and weight_batched:
        n = x.shape[1]
        xf = x.swapaxes(0, 1).reshape(n, batch * x.shape[2], *x.shape[3:])
        y = conv(xf, w.reshape(batch * w.shape[1], *w.shape[2:]), batch * groups)
        return y.reshape(n, batch, y.shape[1] // batch, *y.shape[2:]).swapaxes(0, 1)
    # Only the weight is batched: B joins the output channels inside each group.
    g = groups
    if not transposed:
        b, o, cg = w.shape[:3]
        kernel = w.shape[3:]
        wf = w.reshape(b, g, o // g, cg, *kernel).swapaxes(0, 1).reshape(g * b * (o // g), cg, *kernel)
    else:
        b, c, og = w.shape[:3]
        kernel = w.shape[3:]
        wf = w.swapaxes(0, 1).reshape(c, b * og, *kernel)  # (C, B·Og): output channel (group, b, og)
    y = conv(x, wf, g)  # (N, g·B·Og, *S)
    n, spatial = y.shape[0], y.shape[2:]
    og = y.shape[1] // (g * batch)
    y = y.reshape(n, g, batch, og, *spatial)  # (N, g, B, Og, *S)
    return y.transpose(2, 0, 1, 3, *range(4, 4 + len(spatial))).reshape(batch, n, g * og, *spatial)
