"""Samples for the product primitives of :mod:`reference.ops.rules.products` (format of
:data:`tests.autograd.op_records.OP_RECORDS`)."""

import reference as T

RECORDS = {
    "vdot": [("vectors", lambda a, b: T.vdot(a, b) * a, [(3,), (3,)], "aa")],
    "addmm": [
        (
            "beta_alpha",
            lambda s, a, b: T.addmm(s, a, b, beta=0.5, alpha=-2.0),
            [(2, 4), (2, 3), (3, 4)],
            "aaa",
        ),
        ("broadcast_self", lambda s, a, b: s.addmm(a, b), [(4,), (2, 3), (3, 4)], "aaa"),
        ("beta0", lambda s, a, b: T.addmm(s, a, b, beta=0), [(2, 4), (2, 3), (3, 4)], "aaa"),
    ],
    "addmv": [
        ("beta_alpha", lambda s, a, v: T.addmv(s, a, v, beta=2.0, alpha=0.5), [(2,), (2, 3), (3,)], "aaa")
    ],
    "addr": [("broadcast_self", lambda s, a, b: T.addr(s, a, b, alpha=3.0), [(1, 3), (2,), (3,)], "aaa")],
    "baddbmm": [
        (
            "broadcast_self",
            lambda s, a, b: T.baddbmm(s, a, b, beta=-1.0),
            [(3, 4), (2, 3, 2), (2, 2, 4)],
            "aaa",
        )
    ],
    "addbmm": [
        ("alpha", lambda s, a, b: T.addbmm(s, a, b, alpha=0.5), [(3, 4), (2, 3, 2), (2, 2, 4)], "aaa")
    ],
    "linalg_cross": [
        ("broadcast", lambda a, b: T.linalg.cross(a, b) * a, [(2, 3), (1, 3)], "aa"),
        ("dim0", lambda a, b: T.cross(a, b, dim=0) ** 2, [(3, 2), (3, 2)], "aa"),
    ],
    "trace": [("rect", lambda a: T.trace(a) * a, [(2, 3)], "a")],
}
