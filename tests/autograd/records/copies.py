"""Samples for the functional copies of the view ops and unsafe_split (reference/ops/rules/copies.py)
(format of :data:`tests.autograd.op_records.OP_RECORDS`)."""

import reference as T

RECORDS = {
    "expand_copy": [("lead_and_unit", lambda a: T.expand_copy(a, (2, 3, 4)) ** 2, [(3, 1)], "a")],
    "alias_copy": [("square", lambda a: T.alias_copy(a) * a, [(2, 3)], "a")],
    "as_strided_copy": [
        ("overlap", lambda a: T.as_strided_copy(a, (2, 3), (1, 2), 1) ** 2, [(3, 3)], "a"),
    ],
    "view_copy": [("infer", lambda a: T.view_copy(a, (3, -1)) ** 2, [(2, 3, 2)], "a")],
    "permute_copy": [("neg_dims", lambda a: T.permute_copy(a, (2, -3, 1)) ** 2, [(2, 3, 4)], "a")],
    "unfold_copy": [("windows", lambda a: T.unfold_copy(a, 1, 2, 1) ** 2, [(2, 4)], "a")],
    "squeeze_copy": [("all", lambda a: T.squeeze_copy(a) ** 2, [(2, 1, 3, 1)], "a")],
    "squeeze_copy_dim": [("one", lambda a: T.squeeze_copy(a, -1) ** 2, [(2, 3, 1)], "a")],
    "squeeze_copy_dims": [("some", lambda a: T.squeeze_copy(a, (0, 2)) ** 2, [(1, 3, 1)], "a")],
    "unsqueeze_copy": [("neg", lambda a: T.unsqueeze_copy(a, -2) ** 2, [(2, 3)], "a")],
    "transpose_copy": [("swap", lambda a: T.transpose_copy(a, 0, -1) ** 2, [(2, 3, 4)], "a")],
    "t_copy": [("matrix", lambda a: T.t_copy(a) * T.t_copy(a), [(2, 3)], "a")],
    "split_with_sizes_copy": [
        (
            "weighted",
            lambda a: (
                T.cat([p * (i + 1.0) for i, p in enumerate(T.split_with_sizes_copy(a, [1, 3], 1))], 1) ** 2
            ),
            [(2, 4)],
            "a",
        )
    ],
    "unbind_copy": [
        (
            "weighted",
            lambda a: T.stack([p * (i + 1.0) for i, p in enumerate(T.unbind_copy(a, -1))]) ** 2,
            [(2, 3)],
            "a",
        )
    ],
    "unsafe_split": [
        (
            "chunk",
            lambda a: T.cat([p * (i + 1.0) for i, p in enumerate(T.unsafe_chunk(a, 2, 0))]) ** 2,
            [(5, 2)],
            "a",
        )
    ],
    "unsafe_split_with_sizes": [
        (
            "sizes",
            lambda a: (
                T.cat([p * (i + 1.0) for i, p in enumerate(a.unsafe_split_with_sizes([2, 1], 1))], 1) ** 2
            ),
            [(2, 3)],
            "a",
        )
    ],
}
