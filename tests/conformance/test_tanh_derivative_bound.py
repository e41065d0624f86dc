"""tanh's second-order bound covers JAX's orders, where a subnormal partial product is rounded and
then multiplied (issue 38; tan's case: tan_backward_output_grad).

JAX's tanh JVP is (g + g·y)·(1 − y); the VJP it transposes from it is g·(1 − y) + (g·(1 − y))·y. Its
double backward differentiates that in y as gg·(g·(1 − y)) − (gg + gg·y)·g: gg·y is formed first,
and where it is subnormal its rounding (eta) is multiplied by g. The bound declared PyTorch's one
product gg·(−2·y·g) and JAX's JVP order only. In float64 the underflow term itself was 0: half the
smallest subnormal, 2^-1075, is no float64 (Precision.eta now rounds it up to 2^-1074).

JAX's value is computed here in NumPy, each operation rounded to the dtype in JAX's order (jax 0.10.2
on CPU gives the same float16 value, -0.0020122528076171875; it flushes float32/float64 subnormals)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

import reference as T
from conformance.tolerance import ulp_of
from reference.errors import Precision, bound_of


def jax_vjp_vjp(x, g, gg, f):
    """JAX's grad of (the VJP of tanh at x with cotangent g) with cotangent gg, in dtype ``f``."""
    with np.errstate(all="ignore"):
        y = f(np.tanh(f(x)))
        p = f(g * f(1 - y))
        ct_y = f(f(gg * p) - f(f(gg + f(gg * y)) * g))  # the derivative of g·(1-y) + g·(1-y)·y in y
        a = f(ct_y * f(1 - y))  # through tanh's VJP again
        return float(f(a + f(a * y)))


def exact_second(x, g, gg):
    """g·gg·tanh''(x) = -2·g·gg·y·(1 - y²), y = tanh x (mpmath)."""
    with mpmath.workdps(50):
        y = mpmath.tanh(mpmath.mpf(x))
        return float(mpmath.mpf(g) * mpmath.mpf(gg) * -2 * y * (1 - y * y))


def reference_bound(x, g, gg, dtype):
    def second(a, c1, c2):
        return T.autograd.grad(T.autograd.grad(T.tanh(a), a, c1, create_graph=True)[0], a, c2)[0]

    with np.errstate(all="ignore"):
        (value,), (bound,), _ = bound_of(second, [np.array([x]), np.array([g]), np.array([gg])], Precision(dtype))
    return float(value[0]), float(bound[0])


CASES = [
    # dtype, x, g, gg (each exact in the dtype): gg·y is subnormal
    ("float16", 0.54931640625, 1e4, 2.980232238769531e-07),
    ("float64", 0.5493, 1e300, 1e-320),
]


@pytest.mark.parametrize("dtype,x,g,gg", CASES, ids=[c[0] for c in CASES])
def test_jax_s_double_backward_is_within_the_bound(dtype, x, g, gg):
    f = {"float16": np.float16, "float64": np.float64}[dtype]
    exact = exact_second(x, g, gg)
    value, bound = reference_bound(x, g, gg, dtype)
    assert value == pytest.approx(exact, rel=1e-12)
    jax_s = jax_vjp_vjp(x, g, gg, f)
    if dtype == "float16":
        assert jax_s == -0.0020122528076171875  # jax 0.10.2's value (exact -0.0022352)
    ulp = float(ulp_of(exact, dtype))
    # before: float16 bound 2.45e-5 (ratio 8.5), float64 3.7e-35 (ratio 1e9: eta 2^-1075 = 0)
    assert abs(jax_s - exact) <= bound + ulp


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_a_planted_second_order_error_is_caught(dtype):
    """At a normal element a lost factor 2 or sign is still outside the bound in every dtype."""
    x, g, gg = 0.75, 1.25, -0.625
    exact = exact_second(x, g, gg)
    value, bound = reference_bound(x, g, gg, dtype)
    ulp = float(ulp_of(exact, dtype))
    for planted in (exact / 2, -exact):
        assert abs(planted - exact) > bound + ulp
