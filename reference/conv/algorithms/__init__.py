"""The algorithm paths. Each is one small module with ``NAME``, ``SUMMARY``, ``ROLES`` (the roles it
implements: ``forward``, ``grad_input``, ``grad_weight``, each on a
:class:`~reference.conv.geometry.Correlation`) and ``why_not(corr, role)``, its applicability
rule: ``None`` when it applies, else the reason it does not.

All applicable paths must agree with the default in float64; the test suite checks that.
"""

from __future__ import annotations

from reference.conv.algorithms import (
    dgrad_transposed_conv,
    direct,
    gemm_1x1,
    gemm_full_filter,
    im2col,
    prepad_crop,
    wgrad_grouped_conv,
)
from reference.conv.errors import ConvConfigError

DEFAULT = im2col.NAME
ROLES = ("forward", "grad_input", "grad_weight")
PATHS = {
    m.NAME: m
    for m in (
        im2col,
        direct,
        gemm_1x1,
        gemm_full_filter,
        wgrad_grouped_conv,
        dgrad_transposed_conv,
        prepad_crop,
    )
}
# Applies to :func:`reference.conv.batched_convolution` (a vmap batch of inputs and/or weights),
# not to a single convolution; listed here so that ``algorithms()`` names every path.
BATCHED_PATHS = ("fold_batch_into_groups", "loop")


def names() -> list[str]:
    return [*PATHS, *BATCHED_PATHS]


def why_not(name: str, corr, role: str) -> str | None:
    """Why path ``name`` cannot compute ``role`` for ``corr`` (``None`` when it can)."""
    module = PATHS[name]
    if role not in module.ROLES:
        return f"it does not compute the {role.replace('_', ' ')} (it computes: {', '.join(module.ROLES)})"
    return module.why_not(corr, role)


def applicable(corr, role: str) -> list[str]:
    """Every path that can compute ``role`` for ``corr``."""
    return [name for name in PATHS if why_not(name, corr, role) is None]


def default_kernel(corr, role: str):
    """The default path's function for ``role``: im2col, except the stride-1 input gradient.

    With stride 1 the input gradient is a stride-1 correlation of the (un-inserted) output
    gradient with the flipped kernel (``dgrad_transposed_conv``): its GEMM is (C, O·K) @ (O·K, P),
    the forward's shape, which OpenBLAS runs 1.3-1.6x faster than col2im's (C·K, O) @ (O, P) with
    its short contraction over O (measured in benchmarks/conv.py). With a larger stride that
    formulation would multiply the s−1 inserted zeros too, so col2im stays the default there.
    """
    if role == "grad_input" and all(s == 1 for s in corr.stride):
        return dgrad_transposed_conv.grad_input
    return PATHS[DEFAULT].ROLES[role]


def kernel(name: str | None, corr, role: str, public_role: str | None = None):
    """The function computing ``role`` with path ``name`` (default when ``None``).

    ``public_role`` is the role as the caller sees it (for a transposed convolution the public
    forward is the correlation's input gradient); it only improves the error message.
    """
    if name is None:
        return default_kernel(corr, role)
    if name in BATCHED_PATHS:
        raise ConvConfigError(
            "algorithm",
            name,
            "applies to batched_convolution (a vmap batch of inputs/weights), not a single convolution",
        )
    if name not in PATHS:
        raise ConvConfigError("algorithm", name, f"is not one of {names()}")
    reason = why_not(name, corr, role)
    if reason is not None:
        where = role if public_role in (None, role) else f"{public_role} (the correlation's {role})"
        raise ConvConfigError("algorithm", name, f"does not apply to the {where}: {reason}")
    return PATHS[name].ROLES[role]
