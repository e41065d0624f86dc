"""Samples for the reduction family (reference/ops/rules/reductions.py): format of
tests.autograd.op_records.OP_RECORDS."""

import reference as T


def _c(values):
    return T.tensor(values, dtype=T.float64)


RECORDS = {
    "nansum": [
        (
            "all_with_nan",
            lambda a: T.nansum(a.masked_fill(T.tensor([False, True, False]), float("nan"))) * a,
            [(3,)],
            "a",
        ),
        ("dims", lambda a: a.nansum((0, 2), keepdim=True) * a, [(2, 3, 2)], "a"),
    ],
    "prod": [
        ("all", lambda a: a.prod() * a, [(2, 3)], "a"),
        ("one_zero", lambda a: (a * _c([1.0, 0.0, 1.0, 1.0])).prod(), [(4,)], "a"),
        ("two_zeros", lambda a: (a * _c([0.0, 0.0, 1.0])).prod() + a.sum(), [(3,)], "a"),
    ],
    "prod_dim": [
        ("dim", lambda a: a.prod(1) * 2, [(2, 3)], "a"),
        ("empty_kept_dim", lambda a: a.prod(2), [(3, 0, 4)], "a"),  # -1 in a reshape was ambiguous
        (
            "zeros_keepdim",
            lambda a: (a * _c([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])).prod(-1, keepdim=True) + a,
            [(2, 3)],
            "a",
        ),
    ],
    "var": [
        ("all", lambda a: a.var() * a, [(2, 3)], "a"),
        ("dim_correction", lambda a: T.var(a, (0, 2), correction=0, keepdim=True) * 2, [(2, 3, 2)], "a"),
        ("unbiased_false", lambda a: a.var(1, unbiased=False), [(2, 3)], "a"),
    ],
    "std": [
        ("all", lambda a: a.std(), [(2, 3)], "a"),
        ("dim", lambda a: T.std(a, 1, correction=2, keepdim=True) * a, [(2, 4)], "a"),
    ],
    "var_mean": [("dim", lambda a: T.var_mean(a, 1)[0] * T.var_mean(a, 1)[1], [(2, 3)], "a")],
    "std_mean": [
        ("all", lambda a: T.std_mean(a)[0] + T.std_mean(a, 0, keepdim=True)[1].sum() ** 2, [(3, 2)], "a")
    ],
    "linalg_vector_norm": [
        ("two", lambda a: T.linalg.vector_norm(a) * a, [(2, 3)], "a"),
        ("one_dim", lambda a: T.linalg.vector_norm(a, 1, dim=1), [(2, 3)], "f"),
        ("three", lambda a: a.norm(3, dim=0, keepdim=True) * 2, [(2, 3)], "f"),
        ("frac", lambda a: T.linalg.vector_norm(a, 0.5), [(4,)], "f"),
        ("inf", lambda a: T.linalg.vector_norm(a, float("inf"), dim=1), [(2, 3)], "f"),
        ("neg_inf", lambda a: T.linalg.vector_norm(a, -float("inf")), [(4,)], "f"),
        ("neg_frac", lambda a: T.linalg.vector_norm(a, -1.5, dim=(0, 1)), [(2, 2)], "f"),
        ("zero", lambda a: T.linalg.vector_norm(a, 0) * a, [(3,)], "f"),
    ],
    "logsumexp": [
        ("dim", lambda a: a.logsumexp(1) * 2, [(2, 3)], "a"),
        ("dims_keepdim", lambda a: T.logsumexp(a, (0, 2), keepdim=True) * a, [(2, 3, 2)], "a"),
    ],
    "max": [("all", lambda a: a.max() * a, [(2, 3)], "f")],
    "min": [("all", lambda a: a.min() * 2, [(2, 3)], "f")],
    "median": [("all", lambda a: a.median() * a, [(5,)], "f")],
    "nanmedian": [("all", lambda a: T.nanmedian(a) * 2, [(2, 2)], "f")],
    "max_dim": [
        ("dim", lambda a: a.max(1).values * 2, [(2, 3)], "f"),
        ("keepdim", lambda a: T.max(a, 0, keepdim=True)[0] * a, [(2, 3)], "f"),
    ],
    "min_dim": [("dim", lambda a: a.min(-1).values * 2, [(2, 3)], "f")],
    "median_dim": [("dim", lambda a: a.median(1).values * 2, [(2, 5)], "f")],
    "nanmedian_dim": [("dim", lambda a: a.nanmedian(0, keepdim=True).values * a, [(4, 2)], "f")],
    "kthvalue": [("k2", lambda a: a.kthvalue(2, 1).values * 2, [(2, 4)], "f")],
    "mode": [("distinct", lambda a: a.mode(1).values * 2, [(2, 3)], "f")],
    "aminmax": [
        ("all", lambda a: T.aminmax(a)[0] * T.aminmax(a).max, [(2, 3)], "f"),
        ("dim", lambda a: T.aminmax(a, dim=1, keepdim=True).min * a, [(2, 3)], "f"),
    ],
    "argmax": [
        ("dim", lambda a: a.gather(1, a.argmax(1, keepdim=True)) * 2, [(2, 3)], "f"),
        ("all", lambda a: a.reshape(-1).gather(0, a.argmax().reshape(1)) * a, [(2, 3)], "f"),
    ],
    "argmin": [("dim", lambda a: a.gather(0, T.argmin(a, 0, keepdim=True)) * 2, [(2, 3)], "f")],
    "all": [("dim", lambda a: T.where((a > 0).all(1, keepdim=True), a, a * 2), [(2, 3)], "f")],
    "any": [("all", lambda a: T.where((a > 0.3).any(), a, a * 3), [(2, 3)], "f")],
    "count_nonzero": [("dim", lambda a: a * T.count_nonzero(a > 0, 1)[:, None], [(2, 3)], "f")],
}
