"""The matmul family: aten's products (dot, mv, mm, bmm) and the broadcasting matmul.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

from reference import errors
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.rule import (
    BATCH_MATMUL,
    BILINEAR,
)
from reference.ops.rules.registry import rule

# ---- linear algebra ------------------------------------------------------------------------------


def _matmul_grads(c, g):
    a, b = c.self if c.needs[1] else None, c.other if c.needs[0] else None
    sa, sb = c.shapes
    if len(sa) == 1 and len(sb) == 1:
        g2 = A.reshape(g, (1, 1))
    elif len(sa) == 1:
        g2 = A.unsqueeze(g, -2)
    elif len(sb) == 1:
        g2 = A.unsqueeze(g, -1)
    else:
        g2 = g
    ga = gb = None
    if c.needs[0]:
        b2 = b if len(sb) > 1 else A.unsqueeze(b, -1)
        ga = A.matmul(g2, A.transpose(b2, -1, -2))
        ga = A.reshape(A.sum_to(ga, (1,) + sa if len(sa) == 1 else sa), sa)
    if c.needs[1]:
        a2 = a if len(sa) > 1 else A.unsqueeze(a, 0)
        gb = A.matmul(A.transpose(a2, -1, -2), g2)
        gb = A.reshape(A.sum_to(gb, sb + (1,) if len(sb) == 1 else sb), sb)
    return ga, gb


# aten's products; ``matmul`` is PyTorch's composite over them (reference.ops.api.matmul).
for _name, _node in (
    ("dot", "DotBackward0"),
    ("mv", "MvBackward0"),
    ("mm", "MmBackward0"),
    ("bmm", "BmmBackward0"),
):
    rule(
        _name,
        _node,
        ("self", "other"),
        forward=K.matmul,
        error=errors.products(),
        vjp=_matmul_grads,
        saves={"self": (1,), "other": (0,)},
        jvp=BILINEAR,
        batch=BATCH_MATMUL,
    )

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
