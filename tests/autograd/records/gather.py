"""Samples for the gather/scatter family (reference/ops/rules/gather.py)."""

import reference as T


def _i(values):
    return T.tensor(values, dtype=T.int64)


_MASK = T.tensor([[True, False, True], [False, True, True]])

RECORDS = {
    "gather": [
        ("dup_index", lambda a: a.gather(1, _i([[0, 0], [2, 1]])) * 2, [(2, 3)], "a"),
        ("take_along_dim", lambda a: T.take_along_dim(a, _i([[1], [0]]), 1) * a, [(2, 3)], "a"),
    ],
    "scatter_add_dim": [
        ("dup", lambda a, s: a.scatter_add(1, _i([[0, 0], [2, 1]]), s) * a, [(2, 3), (2, 2)], "aa"),
        ("dim0", lambda a, s: T.scatter_add(a, 0, _i([[1, 0, 1]]), s), [(2, 3), (1, 3)], "aa"),
    ],
    "scatter": [("src", lambda a, s: a.scatter(1, _i([[2, 0], [1, 2]]), s) * a, [(2, 3), (2, 2)], "aa")],
    "scatter_value": [("value", lambda a: a.scatter(0, _i([[1, 0, 1]]), 0.5) * a, [(2, 3)], "a")],
    "scatter_reduce": [
        ("sum", lambda a, s: a.scatter_reduce(1, _i([[0, 0], [2, 1]]), s, "sum") * a, [(2, 3), (2, 2)], "aa"),
        (
            "prod_no_self",
            lambda a, s: a.scatter_reduce(1, _i([[0, 0], [2, 1]]), s, "prod", include_self=False),
            [(2, 3), (2, 2)],
            "aa",
        ),
        ("mean", lambda a, s: a.scatter_reduce(0, _i([[1, 1, 0]]), s, "mean"), [(2, 3), (1, 3)], "aa"),
        ("amax", lambda a, s: a.scatter_reduce(1, _i([[0, 0], [2, 1]]), s, "amax"), [(2, 3), (2, 2)], "ff"),
        (
            "amin_no_self",
            lambda a, s: a.scatter_reduce(1, _i([[0, 0], [2, 1]]), s, "amin", include_self=False),
            [(2, 3), (2, 2)],
            "ff",
        ),
    ],
    "index_select": [("dup", lambda a: a.index_select(1, _i([2, 0, 2])) * 2, [(2, 3)], "a")],
    "index_add": [
        ("alpha", lambda a, s: a.index_add(1, _i([2, 0, 2]), s, alpha=-1.5) * a, [(2, 3), (2, 3)], "aa"),
    ],
    "index_copy": [("copy", lambda a, s: a.index_copy(0, _i([1]), s) * a, [(2, 3), (1, 3)], "aa")],
    "index_fill": [("fill", lambda a: a.index_fill(1, _i([0, 2]), -1.0) * a, [(2, 3)], "a")],
    "index_fill_tensor": [
        ("value_grad", lambda a, v: a.index_fill(1, _i([0, 2, 0]), v.sum()) * a, [(2, 3), (2,)], "aa")
    ],
    "masked_select": [("mask", lambda a: a.masked_select(_MASK) * 2, [(2, 3)], "a")],
    "masked_scatter": [
        ("mask", lambda a, s: a.masked_scatter(_MASK, s) * a, [(2, 3), (5,)], "aa"),
        (
            "broadcast_mask",
            lambda a, s: a.masked_scatter(T.tensor([True, False, True]), s),
            [(2, 3), (2, 3)],
            "aa",
        ),
    ],
    "take_index": [("take", lambda a: a.take(_i([[0, 5], [5, -1]])) * 2, [(2, 3)], "a")],
    "put_index": [
        ("accumulate", lambda a, s: a.put(_i([0, 5, 0]), s, accumulate=True) * a, [(2, 3), (3,)], "aa"),
        ("assign", lambda a, s: T.put(a, _i([[1], [-1]]), s) * 2, [(2, 3), (2, 1)], "aa"),
        ("via_take_grad", lambda a: a.take(_i([0, 5, 0])).sum() * a, [(2, 3)], "a"),
    ],
}
