"""Convolution and its backward (reference.conv underneath), with their JVPs and batch rules.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

from reference import errors
from reference.ops import api as A
from reference.ops.batch_rules import (
    convolution_backward_batch,
    convolution_batch,
)
from reference.ops.rules.registry import rule

_ALL3 = (0, 1, 2)


def _conv_grads(c, g):
    return A.convolution_backward(g, c.input, c.weight, c.shapes[2], c.conv, c.needs)


def _conv_double_grads(c, gg):
    return A.convolution_double_backward(gg, c.grad_output, c.input, c.weight, c.conv, c.needs)


def _conv_jvp(c, ts):
    """Bilinear in (input, weight), affine in bias."""
    tx, tw, tb = ts
    out = None if tx is None else A.convolution(tx, c.weight, None, **c.conv)
    if tw is not None:
        term = A.convolution(c.input, tw, None, **c.conv)
        out = term if out is None else out + term
    if tb is not None:
        term = A.reshape(tb, (1, -1) + (1,) * (c.input.ndim - 2))
        out = term if out is None else out + term
    return out


def _conv_backward_jvp(c, ts):
    """grad_input is bilinear in (grad_output, weight), grad_weight in (grad_output, input),
    grad_bias linear in grad_output: each output's tangent is two convolution_backward calls."""
    tg, tx, tw = ts
    mask = c.output_mask
    bias = tuple(c.bias_sizes) if c.bias_sizes is not None else None
    zero = (None, None, None)
    a = A.convolution_backward(tg, c.input, c.weight, bias, c.conv, mask) if tg is not None else zero
    b = (
        A.convolution_backward(c.grad_output, c.input, tw, None, c.conv, (mask[0], False, False))
        if tw is not None
        else zero
    )
    d = (
        A.convolution_backward(c.grad_output, tx, c.weight, None, c.conv, (False, mask[1], False))
        if tx is not None
        else zero
    )
    out = []
    for terms in ((a[0], b[0]), (a[1], d[1]), (a[2],)):
        terms = [t for t in terms if t is not None]
        out.append(None if not terms else terms[0] if len(terms) == 1 else terms[0] + terms[1])
    return tuple(out)


rule(
    "convolution",
    "ConvolutionBackward0",
    ("input", "weight", "bias"),
    forward=lambda x, w, b, conv: A.conv_forward(x, w, b, conv),
    vjp=_conv_grads,
    saves={"input": _ALL3, "weight": _ALL3},
    jvp=_conv_jvp,
    batch=convolution_batch,
    error=errors.products(),
)
rule(
    "convolution_backward",
    "ConvolutionBackwardBackward0",
    ("grad_output", "input", "weight"),
    forward=lambda g, x, w, bias_sizes, conv, output_mask: A.conv_backward_arrays(
        g, x, w, bias_sizes, conv, output_mask
    ),
    outputs=3,
    undefined_grads=True,  # aten's double backward leaves g_input undefined without ggW, etc.
    vjp=_conv_double_grads,
    saves={"grad_output": _ALL3, "input": _ALL3, "weight": _ALL3},
    jvp=_conv_backward_jvp,
    batch=convolution_backward_batch,
    error=errors.products(),
)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    convolution convolution_backward
"""
