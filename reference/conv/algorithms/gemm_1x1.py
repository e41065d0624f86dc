"""A 1×1 filter with no padding is a plain matrix product over channels.

Every framework special-cases it (cuDNN's and oneDNN's 1×1 paths, XLA's dot rewrite). With
stride s only every s-th input position is read, so the input is subsampled first and the
input gradient is scattered back into those positions (the rest get zero).
"""

from __future__ import annotations

from reference.backend import namespace_of

NAME = "gemm_1x1"
SUMMARY = "1×1 filter, no padding: a GEMM over channels (strided input subsampled)"


def why_not(corr, role):
    if any(k != 1 for k in corr.kernel):
        return f"the kernel is {corr.kernel}, not all ones"
    if any(p != (0, 0) for p in corr.pads):
        return f"padding is {corr.pads}, not zero"
    return None


def _subsample(corr):
    return (
        slice(None),
        slice(None),
        *(slice(0, s * (y - 1) + 1, s) for s, y in zip(corr.stride, corr.out_size)),
    )


def _as_groups(a, corr, channels):
    """(N, channels, *S) → (N, groups, channels/groups, prod(S))."""
    return a.reshape(a.shape[0], corr.groups, channels // corr.groups, -1)


def _weight_matrix(w, corr):
    return w.reshape(corr.groups, corr.out_channels // corr.groups, corr.in_channels // corr.groups)


def forward(x, w, corr):
    xp = namespace_of(x, w)
    xs = xp.ascontiguousarray(x[_subsample(corr)])
    y = xp.matmul(_weight_matrix(w, corr), _as_groups(xs, corr, corr.in_channels))  # (N, g, Og, P)
    return y.reshape(corr.output_shape)


def grad_input(gy, w, corr):
    xp = namespace_of(gy, w)
    gxs = xp.matmul(_weight_matrix(w, corr).transpose(0, 2, 1), _as_groups(gy, corr, corr.out_channels))
    gx = xp.zeros(corr.input_shape, dtype=gxs.dtype)
    gx[_subsample(corr)] = gxs.reshape(corr.batch, corr.in_channels, *corr.out_size)
    return gx


def grad_weight(x, gy, corr):
    xp = namespace_of(x, gy)
    xs = xp.ascontiguousarray(x[_subsample(corr)])
    per_sample = xp.matmul(
        _as_groups(gy, corr, corr.out_channels), _as_groups(xs, corr, corr.in_channels).transpose(0, 1, 3, 2)
    )  # (N, g, Og, Cg)
    return per_sample.sum(axis=0).reshape(corr.weight_shape)


ROLES = {"forward": forward, "grad_input": grad_input, "grad_weight": grad_weight}
