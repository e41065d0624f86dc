"""Samples for the shape primitives of :mod:`reference.ops.rules.shape_ops` (format of
:data:`tests.autograd.op_records.OP_RECORDS`); composites over them are sampled too where they
reach a primitive differently (fliplr, tile, diagflat, diag)."""

import reference as T

RECORDS = {
    "flip": [
        ("dims", lambda a: a.flip(0, 2) * a, [(2, 3, 2)], "a"),
        ("fliplr_neg", lambda a: T.fliplr(a) + T.flip(a, (-1,)), [(2, 3)], "a"),
    ],
    "roll": [
        ("dims", lambda a: a.roll((1, -2), (0, 1)) * a, [(2, 3)], "a"),
        ("flat", lambda a: T.roll(a, 4) * 2, [(2, 3)], "a"),
    ],
    "rot90": [
        ("k1", lambda a: a.rot90() * 2, [(2, 3)], "a"),
        ("k3_dims", lambda a: T.rot90(a, -1, (2, 0)) ** 2, [(2, 3, 2)], "a"),
    ],
    "repeat": [
        ("more_dims", lambda a: a.repeat(2, 1, 3) * 2, [(2, 3)], "a"),
        ("tile", lambda a: T.tile(a, (2,)) ** 2, [(2, 3)], "a"),
    ],
    "tril": [("diag1", lambda a: a.tril(1) ** 2, [(2, 3, 4)], "a")],
    "triu": [("diag_neg", lambda a: T.triu(a, -1) * a, [(4, 3)], "a")],
    "diag_embed": [
        ("offset", lambda a: T.diag_embed(a, 1, 0, 2) * 2, [(2, 3)], "a"),
        ("diag_vector", lambda a: T.diag(a, -1) ** 2, [(3,)], "a"),
        ("diagflat", lambda a: T.diagflat(a) * 2, [(2, 2)], "a"),
    ],
    "diagonal_copy": [("diag_matrix", lambda a: T.diag(a, 1) ** 2, [(3, 4)], "a")],
    "select_scatter": [("both", lambda a, b: T.select_scatter(a, b * b, 1, -1) * a, [(2, 3), (2,)], "aa")],
    "slice_scatter": [
        ("step", lambda a, b: T.slice_scatter(a, b, 1, 0, None, 2) ** 2, [(2, 4), (2, 2)], "aa")
    ],
    "diagonal_scatter": [("offset", lambda a, b: T.diagonal_scatter(a, b, -1) * a, [(3, 4), (2,)], "aa")],
    "narrow_copy": [("mid", lambda a: a.narrow_copy(1, 1, 2) ** 2, [(2, 4)], "a")],
    "block_diag": [
        ("mixed", lambda a, b, c: T.block_diag(a, b, c) * 2, [(2, 3), (2,), ()], "aaa"),
    ],
    "unfold": [
        ("windows", lambda a: a.unfold(1, 2, 1) * a.unfold(1, 2, 1), [(2, 4)], "a"),
        ("step", lambda a: a.unfold(0, 2, 2) ** 2, [(5, 2)], "a"),
    ],
}
