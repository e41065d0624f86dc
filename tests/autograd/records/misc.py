"""Samples for reference/ops/rules/misc.py: out-of-place fill, ldexp, frexp (format of
:data:`tests.autograd.op_records.OP_RECORDS`)."""

import reference as T

RECORDS = {
    "fill_out": [("number", lambda a: T.fill(a, 1.5) * a, [(2, 3)], "a")],
    "fill_tensor_out": [("tensor", lambda a, v: T.fill(a, v * v) * a, [(2, 3), ()], "aa")],
    "ldexp": [
        ("float_exponent", lambda a, e: T.ldexp(a, e) * a, [(2, 3), (3,)], "aa"),
        # a negative integral exponent has PyTorch's zero gradient (integer pow(2, other), see
        # rules/misc.py), which finite differences would reject; tests/autograd/test_torch_misc.py has it
        ("int_exponent_nonneg", lambda a: T.ldexp(a, T.tensor([1, 2, 0])) ** 2, [(2, 3)], "a"),
    ],
    "frexp": [("mantissa", lambda a: T.frexp(a * 3.0).mantissa * a, [(4,)], "f")],
}


def _pool_backward(x, g):
    out, idx = T.nn.functional.max_pool2d(x, 2, return_indices=True)
    return T.ops.aten.max_pool2d_with_indices_backward.default(
        g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx
    )


RECORDS["max_pool2d_with_indices_backward"] = [
    ("scatter", lambda x, g: _pool_backward(x, g) * _pool_backward(x, g), [(1, 2, 4, 4), (1, 2, 2, 2)], "fa"),
]
