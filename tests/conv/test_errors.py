"""Every ConvConfigError rule: the error is typed (a ValueError), names the parameter and value,
and states the rule. Also: empty batches and zero channels are valid, not errors."""

from __future__ import annotations

import numpy as np
import pytest

from reference.conv import (
    ConvConfigError,
    batched_convolution,
    batched_convolution_backward,
    batched_convolution_double_backward,
    convolution,
    convolution_backward,
    convolution_double_backward,
)

z = np.zeros
X1, W1 = z((1, 2, 5)), z((3, 2, 3))  # a valid conv1d: output (1, 3, 3)

# (id, call, parameter named in the message, a phrase of the rule)
RULES = [
    ("input rank", lambda: convolution(z((2, 5)), z((3, 2))), "input.shape", "1, 2 or 3 spatial"),
    (
        "input rank 4-d spatial",
        lambda: convolution(z((1, 1, 2, 2, 2, 2)), z((1, 1, 1, 1, 1, 1))),
        "input.shape",
        "spatial",
    ),
    ("weight rank", lambda: convolution(z((1, 2, 5, 5)), W1), "weight.shape", "input's rank"),
    ("stride zero", lambda: convolution(X1, W1, stride=0), "stride", ">= 1"),
    ("stride length", lambda: convolution(X1, W1, stride=(1, 2)), "stride", "one entry per spatial"),
    ("stride bool", lambda: convolution(X1, W1, stride=True), "stride", "not a bool"),
    ("stride float", lambda: convolution(X1, W1, stride=1.5), "stride", "int"),
    ("dilation zero", lambda: convolution(X1, W1, dilation=0), "dilation", ">= 1"),
    ("output_padding negative", lambda: convolution(X1, W1, output_padding=-1), "output_padding", ">= 0"),
    ("groups zero", lambda: convolution(X1, W1, groups=0), "groups", "positive"),
    ("groups float", lambda: convolution(X1, W1, groups=1.0), "groups", "positive int"),
    (
        "groups divide input",
        lambda: convolution(z((1, 3, 5)), z((2, 1, 3)), groups=2),
        "groups",
        "divisible by groups",
    ),
    (
        "groups divide output",
        lambda: convolution(z((1, 4, 5)), z((3, 2, 3)), groups=2),
        "weight.shape",
        "out_channels (3)",
    ),
    (
        "weight in-channels",
        lambda: convolution(z((1, 4, 5)), z((2, 3, 3)), groups=2),
        "weight.shape",
        "must equal the input's channels",
    ),
    (
        "transposed weight",
        lambda: convolution(z((1, 2, 4)), z((3, 3, 3)), transposed=True),
        "weight.shape",
        "weight.shape[0]",
    ),
    ("zero kernel", lambda: convolution(X1, z((3, 2, 0))), "weight.shape", "kernel sizes must be positive"),
    (
        "kernel > padded input",
        lambda: convolution(z((1, 2, 4)), z((3, 2, 5))),
        "weight.shape",
        "larger than the padded input",
    ),
    ("dilated kernel > input", lambda: convolution(X1, W1, dilation=3), "weight.shape", "dilated kernel (7)"),
    (
        "negative padding crops all",
        lambda: convolution(X1, W1, padding=[(-3, -3)]),
        "padding",
        "crops more than",
    ),
    (
        "negative padding crops past kernel",
        lambda: convolution(X1, W1, padding=-2),
        "weight.shape",
        "larger than the padded input",
    ),
    ("padding string", lambda: convolution(X1, W1, padding="full"), "padding", "padding strings"),
    ("padding length", lambda: convolution(X1, W1, padding=(1, 1, 1)), "padding", "one entry per spatial"),
    ("padding entry", lambda: convolution(X1, W1, padding=[(1, 2, 3)]), "padding", "(lo, hi) pair"),
    ("padding float", lambda: convolution(X1, W1, padding=[(1.0, 2)]), "padding", "ints"),
    (
        "output_padding >= stride and dilation",
        lambda: convolution(z((1, 2, 4)), z((2, 3, 3)), None, 2, 0, 1, True, 2),
        "output_padding",
        "smaller than either stride",
    ),
    (
        "output_padding with string padding",
        lambda: convolution(z((1, 2, 4)), z((2, 3, 3)), None, 2, "same", 1, True, 1),
        "output_padding",
        "must be 0 when",
    ),
    (
        "transposed output not positive",
        lambda: convolution(z((1, 2, 1)), z((2, 3, 1)), None, 1, 1, 1, True, 0),
        "padding",
        "must be positive",
    ),
    ("bias size", lambda: convolution(X1, W1, z(4)), "bias.shape", "one per output channel"),
    ("input not an array", lambda: convolution([[[1.0]]], W1), "input", "NumPy or CuPy array"),
    ("integer dtype", lambda: convolution(X1.astype(np.int64), W1), "input.dtype", "floating-point"),
    (
        "grad_output shape",
        lambda: convolution_backward(z((1, 3, 4)), X1, W1, None, 1, 0, 1, False, 0, 1, (1, 1, 1)),
        "grad_output.shape",
        "output shape (1, 3, 3)",
    ),
    (
        "bias_sizes",
        lambda: convolution_backward(z((1, 3, 3)), X1, W1, [4], 1, 0, 1, False, 0, 1, (1, 1, 1)),
        "bias_sizes",
        "(3,)",
    ),
    (
        "output_mask length",
        lambda: convolution_backward(z((1, 3, 3)), X1, W1, None, 1, 0, 1, False, 0, 1, (1, 1)),
        "output_mask",
        "three bools",
    ),
    (
        "ggI shape",
        lambda: convolution_double_backward(
            z((1, 2, 4)), None, None, z((1, 3, 3)), W1, X1, 1, 0, 1, False, 0, 1, (1, 1, 1)
        ),
        "ggI.shape",
        "must equal",
    ),
    (
        "gO shape",
        lambda: convolution_double_backward(
            None, None, None, z((1, 3, 4)), W1, X1, 1, 0, 1, False, 0, 1, (1, 1, 1)
        ),
        "gO.shape",
        "output shape",
    ),
    (
        "batch_groups divide batch",
        lambda: convolution(z((3, 2, 5)), z((4, 2, 3)), batch_groups=2),
        "batch_groups",
        "divide the input batch",
    ),
    (
        "batch_groups divide outputs",
        lambda: convolution(z((4, 2, 5)), z((3, 2, 3)), batch_groups=2),
        "batch_groups",
        "divide the output channels",
    ),
    (
        "batch_groups with groups",
        lambda: convolution(z((4, 2, 5)), z((4, 1, 3)), groups=2, batch_groups=2),
        "batch_groups",
        "cannot be combined",
    ),
    (
        "batch_groups transposed divide outputs",
        lambda: convolution(z((4, 2, 5)), z((2, 3, 3)), transposed=True, batch_groups=2),
        "batch_groups",
        "must divide the output channels (3)",
    ),
    (
        "batched: nothing batched",
        lambda: batched_convolution(X1, W1, input_batched=False, weight_batched=False),
        "input_batched",
        "at least one",
    ),
    (
        "batched: batch sizes",
        lambda: batched_convolution(z((2, 1, 2, 5)), z((3, 3, 2, 3))),
        "weight.shape",
        "differs",
    ),
    (
        "batched: algorithm",
        lambda: batched_convolution(z((2, 1, 2, 5)), z((2, 3, 2, 3)), algorithm="im2col"),
        "algorithm",
        "batched_convolution's paths",
    ),
]
BB = (1, 0, 1, False, 0, 1, (True, True, False))  # params + mask for the batched backward rows
RULES += [
    (
        "batched backward: flags",
        lambda: batched_convolution_backward(z((2, 1, 3, 3)), X1, W1, None, *BB, batched=(True,)),
        "batched",
        "3 bools",
    ),
    (
        "batched backward: none batched",
        lambda: batched_convolution_backward(z((1, 3, 3)), X1, W1, None, *BB, batched=(0, 0, 0)),
        "batched",
        "at least one",
    ),
    (
        "batched backward: sizes",
        lambda: batched_convolution_backward(
            z((2, 1, 3, 3)), z((3, 1, 2, 5)), W1, None, *BB, batched=(1, 1, 0)
        ),
        "batched",
        "same leading batch size",
    ),
    (
        "batched backward: grad_output",
        lambda: batched_convolution_backward(z((2, 1, 3, 4)), X1, W1, None, *BB, batched=(1, 0, 0)),
        "grad_output.shape",
        "leading batch dim",
    ),
    (
        "batched backward: algorithm",
        lambda: batched_convolution_backward(
            z((2, 1, 3, 3)), X1, W1, None, *BB, batched=(1, 0, 0), algorithm="direct"
        ),
        "algorithm",
        "batched backward paths",
    ),
    (
        "batched double backward: flags",
        lambda: batched_convolution_double_backward(
            None, None, None, z((1, 3, 3)), W1, X1, *BB, batched=(1, 1)
        ),
        "batched",
        "6 bools",
    ),
]


@pytest.mark.parametrize("call,parameter,rule", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_rule(call, parameter, rule):
    with pytest.raises(ConvConfigError) as info:
        call()
    err = info.value
    assert isinstance(err, ValueError)
    assert err.parameter == parameter, str(err)
    assert str(err).startswith(f"{parameter}="), str(err)
    assert rule in str(err), str(err)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize(
    "input_shape,weight_shape",
    [((0, 4, 5, 5), (6, 2, 3, 3)), ((2, 0, 5, 5), (6, 0, 3, 3)), ((2, 4, 5, 5), (0, 2, 3, 3))],
    ids=["empty batch", "zero input channels", "zero output channels"],
)
def test_empty_arrays_give_empty_outputs_and_zero_gradients(input_shape, weight_shape, transposed):
    groups = 2 if input_shape[1] and weight_shape[0] else 1
    if transposed:  # (in, out/groups, *k)
        weight_shape = (input_shape[1], weight_shape[0] // groups, *weight_shape[2:])
    else:
        weight_shape = (weight_shape[0], input_shape[1] // groups, *weight_shape[2:])
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(input_shape), rng.standard_normal(weight_shape)
    out_channels = weight_shape[1] * groups if transposed else weight_shape[0]
    b = rng.standard_normal(out_channels)
    y = convolution(x, w, b, 2, 1, 1, transposed, 0, groups)
    spatial = (9, 9) if transposed else (3, 3)
    assert y.shape == (input_shape[0], out_channels, *spatial)
    np.testing.assert_array_equal(y, np.broadcast_to(b.reshape(1, -1, 1, 1), y.shape))  # the empty sum is 0
    gy = rng.standard_normal(y.shape)
    gx, gw, gb = convolution_backward(gy, x, w, b.shape, 2, 1, 1, transposed, 0, groups, (True, True, True))
    assert gx.shape == x.shape and gw.shape == w.shape and gb.shape == b.shape
    if input_shape[0] == 0:
        assert not gw.any() and not gb.any()
    if 0 in (input_shape[1], out_channels):
        assert not gx.any() and not gw.any()
