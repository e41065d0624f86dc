"""A filter that covers the whole (unpadded) input is one matrix product per group.

When the dilated kernel equals the input size and there is no padding, the output has one
position per spatial dimension and the convolution is ``y[n, o] = Σ_(c,k) x[n, c, k·d] w[o, c, k]``:
a fully-connected layer. XLA and cuDNN both rewrite this case to a GEMM.
"""

from __future__ import annotations

from reference.backend import namespace_of

NAME = "gemm_full_filter"
SUMMARY = "filter equals the input (VALID, output 1 per dim): one GEMM per group"


def why_not(corr, role):
    if any(p != (0, 0) for p in corr.pads):
        return f"padding is {corr.pads}, not zero"
    if corr.dilated_kernel != tuple(corr.in_size):
        return f"the dilated kernel {corr.dilated_kernel} does not equal the input size {tuple(corr.in_size)}"
    return None


def _taps(corr):
    """The input positions the filter reads: every dilation-th one."""
    return (slice(None), slice(None), *(slice(None, None, d) for d in corr.dilation))


def _flat_input(x, corr):
    """(N, groups, Cg·K)."""
    xp = namespace_of(x)
    return xp.ascontiguousarray(x[_taps(corr)]).reshape(corr.batch, corr.groups, -1)


def _flat_weight(w, corr):
    return w.reshape(corr.groups, corr.out_channels // corr.groups, -1)  # (g, Og, Cg·K)


def forward(x, w, corr):
    xp = namespace_of(x, w)
    xf = _flat_input(x, corr).transpose(1, 0, 2)  # (g, N, Cg·K)
    y = xp.matmul(xf, _flat_weight(w, corr).transpose(0, 2, 1))  # (g, N, Og)
    return xp.ascontiguousarray(y.transpose(1, 0, 2)).reshape(corr.output_shape)


def grad_input(gy, w, corr):
    xp = namespace_of(gy, w)
    gyf = gy.reshape(corr.batch, corr.groups, -1).transpose(1, 0, 2)  # (g, N, Og)
    gxf = xp.matmul(gyf, _flat_weight(w, corr))  # (g, N, Cg·K)
    gx = xp.zeros(corr.input_shape, dtype=gxf.dtype)
    gx[_taps(corr)] = gxf.transpose(1, 0, 2).reshape(corr.batch, corr.in_channels, *corr.kernel)
    return gx


def grad_weight(x, gy, corr):
    xp = namespace_of(x, gy)
    gyf = gy.reshape(corr.batch, corr.groups, -1).transpose(1, 2, 0)  # (g, Og, N)
    gw = xp.matmul(gyf, _flat_input(x, corr).transpose(1, 0, 2))  # (g, Og, Cg·K)
    return gw.reshape(corr.weight_shape)


ROLES = {"forward": forward, "grad_input": grad_input, "grad_weight": grad_weight}
