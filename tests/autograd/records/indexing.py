"""Samples for advanced indexing (the index/index_put rules of reference/ops/rules/indexing.py)."""

import reference as T


def _i(values):
    return T.tensor(values, dtype=T.int64)


def _set_tensor(a, v):
    b = a * v.mean()  # (depends on v, so that under vmap the written tensor is batched whenever v is)
    b[_i([0, 2]), 1:] = v
    return b * a


def _set_mask(a):
    b = a * 2.0
    b[T.tensor([True, False, True])] = 0.5
    return b


RECORDS = {
    "index": [
        ("dup_rows", lambda a: a[_i([0, 2, 0])] * 2, [(3, 2)], "a"),
        ("mixed_slices", lambda a: a[1:, _i([[1], [0]]), None] * 2, [(3, 2, 2)], "a"),
        ("non_adjacent", lambda a: a[_i([0, 1]), :, _i([1, 0])] * 2, [(2, 3, 2)], "a"),
        ("bool_mask", lambda a: a[T.tensor([[True, False], [True, True]])] ** 2, [(2, 2)], "a"),
    ],
    "index_put": [
        ("setitem", _set_tensor, [(3, 3), (2, 2)], "aa"),
        ("setitem_mask", _set_mask, [(3, 2)], "a"),
        (
            "accumulate",
            lambda a, v: T.index_put(a, (_i([0, 0, 1]),), v, accumulate=True) * a,
            [(2, 3), (3,)],
            "aa",
        ),
        ("no_accumulate", lambda a, v: a.index_put((None, _i([2, 0])), v) * 2, [(2, 3), (2, 1)], "aa"),
    ],
}
