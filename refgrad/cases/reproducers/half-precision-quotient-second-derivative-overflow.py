"""float16 second-order derivatives of a quotient a / b overflow near the divisor's pole: the
derivative in b of the forward-mode tangent t_a/b - t_b·a/b² holds a/b³, which a float16 kernel
forms as an intermediate (2·t_b·a/b³ overflows, or b² and b³ underflow) before the cotangent
scales it: an infinity where the exact value is representable. Exact value: the same expression in
float64 from the float16-exact inputs. Each framework fails at one of the two points (the
factorisations differ)."""

import numpy as np
import torch

POINTS = [  # (a, b, t_a, t_b, cotangent), each float16-exact
    # refgrad's case div-e40f3c4b5296: 2·t_b·a/b³ = 2.3e5 > 65504 before the cotangent scales it to 41
    (-7.76171875, -0.064697265625, -0.00020742416381835938, 4.0, 0.00017881393432617188),
    (0.5, 2.0**-5, 1.0, 1.0, 2.0**-10),  # the exact value 31
]


def exact(a, b, ta, tb, g):
    return g * (-ta / b**2 + 2 * tb * a / b**3)  # d/db of g·(t_a/b - t_b·a/b²)


def torch_vjp_of_jvp(a, b, ta, tb, g, dtype=torch.float16):
    A = torch.tensor(a, dtype=dtype, requires_grad=True)
    B = torch.tensor(b, dtype=dtype, requires_grad=True)
    tangents = (torch.tensor(ta, dtype=dtype), torch.tensor(tb, dtype=dtype))
    _, tangent = torch.func.jvp(lambda x, y: x / y, (A, B), tangents)
    return float(torch.autograd.grad(tangent, B, torch.tensor(g, dtype=dtype))[0])


def jax_vjp_of_jvp(a, b, ta, tb, g):
    import jax
    import jax.numpy as jnp

    h = jnp.float16

    def tangent(y):
        return jax.jvp(lambda p, q: p / q, (h(a), y), (h(ta), h(tb)))[1] * h(g)

    return float(jax.grad(tangent)(h(b)))


found = {"torch": False, "jax": False}
for p in POINTS:
    t = torch_vjp_of_jvp(*p)
    try:
        j = jax_vjp_of_jvp(*p)
    except ImportError:
        j = float("nan")
    print(f"(a, b, t_a, t_b, g) = {p}: exact {exact(*p):.6g}; torch float16 {t}; jax float16 {j}")
    found["torch"] |= bool(np.isinf(t))
    found["jax"] |= bool(np.isinf(j))
for name, bad in found.items():
    print(f"{name}: {'inf' if bad else 'finite'}")
