"""complex128 samples of primitives recorded elsewhere that PyTorch defines on complex tensors
(issue 13): the functional copies (each real sample of records.copies again with complex inputs),
logsumexp, logaddexp, logcumsumexp, ldexp, fill, the p-norm behind pairwise_distance/normalize and
the in-place cumprod (no sample mixes a real input needing a gradient with a complex one for
logaddexp/ldexp/fill: PyTorch refuses that backward, see rules.pointwise.without_r_to_c). Kinds as in records.complex: ``c`` any complex, ``a`` any real."""

import reference as T
from tests.autograd.records.copies import RECORDS as _COPIES

F = T.nn.functional

RECORDS = {}

EXTRA_SAMPLES = {
    name: [
        ("complex_" + label, fn, shapes, "c" * len(kinds), *rest)
        for label, fn, shapes, kinds, *rest in samples
    ]
    for name, samples in _COPIES.items()
}
EXTRA_SAMPLES.update(
    {
        "logsumexp": [
            ("complex", lambda a: T.logsumexp(a, 1) * 2, [(2, 3)], "c"),
            ("complex_keepdim", lambda a: T.logsumexp(a, (0, 2), keepdim=True) * a, [(2, 3, 2)], "c"),
        ],
        "logaddexp": [
            ("complex", lambda a, b: T.logaddexp(a, b), [(2, 3), (3,)], "cc"),
        ],
        "logcumsumexp": [
            ("complex", lambda a: a.logcumsumexp(1) * 2, [(2, 3)], "c"),
            ("complex_dim0", lambda a: T.logcumsumexp(a, 0) * a, [(3, 2)], "c"),
        ],
        "ldexp": [
            ("complex", lambda a, e: T.ldexp(a, e) * a, [(2, 3), (3,)], "cc"),
        ],
        "fill_out": [("complex", lambda a: T.fill(a, 1.5 - 2j) * a, [(2, 3)], "c")],
        "fill_tensor_out": [("complex", lambda a, v: T.fill(a, v * v) * a, [(2, 3), ()], "cc")],
        "pnorm": [
            ("complex_p2", lambda a, b: F.pairwise_distance(a, b), [(3, 4), (3, 4)], "cc"),
            ("complex_p1", lambda a, b: F.pairwise_distance(a, b, p=1.0, keepdim=True), [(3, 4), (4,)], "cc"),
            ("complex_p3", lambda a, b: F.pairwise_distance(a, b, p=3.0), [(2, 4), (2, 4)], "cc"),
            ("complex_p1_5", lambda a, b: F.pairwise_distance(a, b, p=1.5), [(2, 4), (2, 4)], "cc"),
            ("complex_p0_5", lambda a, b: F.pairwise_distance(a, b, p=0.5), [(2, 4), (2, 4)], "cc"),
            ("complex_inf", lambda a, b: F.pairwise_distance(a, b, p=float("inf")), [(2, 4), (2, 4)], "cc"),
            ("complex_normalize", lambda a: F.normalize(a, dim=1), [(3, 4)], "c"),
        ],
        "cumprod": [("complex_inplace", lambda a: (a * 1.0).cumprod_(1) * 2, [(2, 3)], "c")],
    }
)
