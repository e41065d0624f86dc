"""Samples of the complex-number primitives (reference.ops.rules.complex), and complex128 samples
of the primitives recorded elsewhere that PyTorch defines on complex tensors (``EXTRA_SAMPLES``):
gradcheck perturbs real and imaginary parts apart, the JVP tests use complex tangents, vmap
batches complex inputs. Kinds: ``c`` any complex, ``q`` real part > 0.5 (log, sqrt, pow: away
from 0 and the branch cut), ``u`` inside the unit disk (asin, atanh)."""

import reference as T

RECORDS = {
    "view_as_real": [
        ("scaled", lambda a: T.view_as_real(a) * T.tensor([1.5, -0.5], dtype=T.float64), [(2, 3)], "c"),
        ("of_transpose", lambda a: T.view_as_real(a.t()).sum(-1) * 2.0, [(2, 3)], "c"),
    ],
    "view_as_complex": [
        # stack: a fresh row-major tensor, so under vmap the batch dim is not last (torch.func.vmap and
        # the reference refuse a physical last dim whose stride is not 1; tests/autograd/test_torch_complex.py).
        # (a * 1.0 is not: an elementwise result keeps its input's layout, the batch dim last too.)
        (
            "times_z",
            lambda a: (
                T.view_as_complex(T.stack([a[..., 0], a[..., 1]], -1))
                * T.view_as_complex(T.stack([a[..., 0], a[..., 1]], -1)).exp()
            ),
            [(3, 2)],
            "a",
        ),
    ],
    "conj": [
        ("times_z", lambda a: a.conj() * a.sin(), [(3,)], "c"),
        ("real_input", lambda a: a.conj() * a, [(3,)], "a"),
    ],
    "_neg_view": [  # the negative bit: imag of a conjugate view (torch._neg_view)
        (
            "imag_of_conj",
            lambda a: a.conj().imag * a.real + (a.conj().imag * a.exp().conj()).sum(),
            [(3,)],
            "c",
        ),
    ],
    "conj_physical": [("times_z", lambda a: T.conj_physical(a) * a.exp(), [(3,)], "c")],
    "angle": [
        ("complex", lambda a: a.angle() * 1.5, [(4,)], "c"),
        ("real", lambda a: a.angle() + a, [(4,)], "f"),
    ],
    "complex": [("parts", lambda a, b: T.complex(a, b) * T.complex(b, a), [(2, 3), (3,)], "aa")],
    "polar": [("abs_angle", lambda a, b: T.polar(a, b) * T.polar(b * b + 0.5, a), [(3,), (3,)], "pa")],
}

EXTRA_SAMPLES = {
    "add": [("complex", lambda a, b: a + b * (0.5 - 1j), [(2, 3), (3,)], "cc")],
    "sub": [("complex_real", lambda a, b: a - b, [(2, 3), (3,)], "ca")],
    "rsub": [("complex", lambda a: (1 + 2j) - a * a, [(3,)], "c")],
    "mul": [
        ("complex", lambda a, b: a * b, [(2, 3), (2, 1)], "cc"),
        ("real_times_complex", lambda a, b: a * b, [(3,), (3,)], "ac"),
    ],
    "div": [("complex", lambda a, b: a / b, [(2, 3), (3,)], "cq")],
    "neg": [("complex", lambda a: -a, [(3,)], "c")],
    "pow": [
        ("complex_int", lambda a: a**3, [(3,)], "c"),
        ("complex_frac", lambda a: a.pow(2.5), [(3,)], "q"),
    ],
    "pow_tensor": [("complex", lambda a, b: a**b, [(3,), (3,)], "qc")],
    "reciprocal": [("complex", lambda a: 2.0 / a, [(3,)], "q")],
    "exp": [("complex", lambda a: a.exp(), [(3,)], "c")],
    "log": [("complex", lambda a: a.log(), [(3,)], "q")],
    "sqrt": [("complex", lambda a: a.sqrt(), [(3,)], "q")],
    "tanh": [("complex", lambda a: (a * 0.5).tanh(), [(3,)], "c")],
    "sigmoid": [("complex", lambda a: (a * 0.5).sigmoid(), [(3,)], "c")],
    "abs": [("complex", lambda a: a.abs() * a, [(4,)], "c")],
    "sgn": [("complex", lambda a: a.sgn() * a.abs(), [(4,)], "c")],
    "sin": [("complex", lambda a: a.sin(), [(3,)], "c")],
    "cos": [("complex", lambda a: a.cos(), [(3,)], "c")],
    "asin": [("complex", lambda a: a.asin(), [(3,)], "u")],
    "atanh": [("complex", lambda a: a.atanh(), [(3,)], "u")],
    "sum": [("complex", lambda a: a.sum() * a, [(2, 3)], "c")],
    "sum_dim": [("complex", lambda a: a.sum(1), [(2, 3)], "c")],
    "mean": [("complex", lambda a: a.mean() * a, [(2, 3)], "c")],
    "prod": [("complex", lambda a: a.prod(), [(4,)], "c")],
    "mm": [("complex", lambda a, b: a @ b, [(2, 3), (3, 2)], "cc")],
    "cumprod": [("complex", lambda a: a.cumprod(0), [(4,)], "c")],
    "bmm": [("complex", lambda a, b: T.bmm(a, b), [(2, 2, 3), (2, 3, 2)], "cc")],
    "mv": [("complex", lambda a, b: T.mv(a, b), [(2, 3), (3,)], "cc")],
    "to": [
        ("real_to_complex", lambda a: a.to(T.complex128) * (1 + 1j), [(3,)], "a"),
        ("complex_to_real", lambda a: a.to(T.float64) * a.abs(), [(3,)], "c"),
    ],
    "where": [("complex", lambda a, b: T.where(a.abs() > 1, a, b), [(4,), (4,)], "cc")],
    "cumsum": [("complex", lambda a: a.cumsum(0), [(4,)], "c")],
    "select": [("complex", lambda a: a[1] * a[0], [(2, 3)], "c")],
    "permute": [("complex", lambda a: a.permute(1, 0) * 1j, [(2, 3)], "c")],
}
