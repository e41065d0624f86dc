"""Samples for the masked family (reference/ops/rules/masked.py): ``torch._segment_reduce``."""

import reference as T


def _l(values):
    return T.tensor(values, dtype=T.int64)


def _c(values):
    return T.tensor(values, dtype=T.float64)


RECORDS = {
    "segment_reduce": [
        ("sum_lengths", lambda a: T._segment_reduce(a, "sum", lengths=_l([2, 0, 3])) * 1.5, [(5,)], "a"),
        (
            "mean_initial_axis1",
            lambda a: T._segment_reduce(a, "mean", lengths=_l([[1, 2], [3, 0]]), axis=1, initial=0.5),
            [(2, 3, 2)],
            "a",
        ),
        (
            "max_offsets",
            lambda a: T._segment_reduce(a, "max", offsets=_l([0, 2, 2, 5]), initial=-5.0),
            [(5, 2)],
            "f",
        ),
        (
            "min_initial_unsafe",
            lambda a: T._segment_reduce(a, "min", lengths=_l([1, 2]), unsafe=True, initial=0.3),
            [(4, 2)],
            "f",
        ),
        ("prod", lambda a: T._segment_reduce(a, "prod", lengths=_l([3, 1, 2]), initial=2.0), [(6,)], "a"),
        (
            "prod_zeros",
            lambda a: T._segment_reduce(
                a * _c([1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0]), "prod", lengths=_l([3, 2, 2])
            ),
            [(7,)],
            "a",
        ),
    ],
}
