"""torch.special's regularized incomplete gamma functions ``gammainc`` (P) and ``gammaincc`` (Q)
over the exact rules of :mod:`reference.ops.rules.special_gamma`.

PyTorch's TensorIterator promotes the two operands and broadcasts them; its CPU kernels
(``igamma_cpu``, ``igammac_cpu``) exist for the floating dtypes only (an integer result type raises
PyTorch's dispatch error). Unlike PyTorch, which raises "the derivative for 'igamma: input' is not
implemented" for the derivative in a (``input``), the reference differentiates both arguments
(docs/records.md, the gammainc records)."""

from __future__ import annotations

from reference.backend import is_inexact
from reference.ops import api as A
from reference.ops.api import R
from reference.ops.public import promoted
from reference.scalar_types import scalar_type_name


def _incomplete_gamma(name, kernel):
    rule = getattr(R, kernel)

    def op(input, other):
        dt = A.result_type(input, other)
        if not is_inexact(dt):
            raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{scalar_type_name(dt)}'")
        return promoted(rule, input, other)

    op.__name__ = name
    op.__doc__ = (
        f"torch.special.{name}(input, other): a = input, x = other; exact derivatives of every order."
    )
    return op


NAMESPACES = {
    "special": {
        "gammainc": _incomplete_gamma("gammainc", "igamma"),
        "gammaincc": _incomplete_gamma("gammaincc", "igammac"),
    },  # fmt: skip
}
