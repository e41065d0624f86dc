"""Complex departures found measuring the complex kernels against mpmath
(scripts/measure_complex_accuracy.py) and by `refgrad run --dtypes complex64,complex128 --draws seeded
--seed 3 --ops <the complex unary records>` (cplxdecl28). Exact values: mpmath. Each line names a
framework, the op, the point and the answer against the exact value."""
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, mpmath, torch, tensorflow as tf
mpmath.mp.prec = 200


def torch2(f, z, t1, t2, dtype):
    from torch.func import jvp
    x = torch.tensor(z, dtype=dtype)
    inner = lambda a: jvp(f, (a,), (torch.tensor(t1, dtype=dtype),))[1]
    return complex(jvp(inner, (x,), (torch.tensor(t2, dtype=dtype),))[1])


def mp(z):
    return mpmath.mpc(complex(z).real, complex(z).imag)


def rel(got, exact):
    """max part error over |exact| in units of 2u (complex128)"""
    return max(abs(got.real - exact.real), abs(got.imag - exact.imag)) / (2 * 2.0**-53 * abs(exact))


# TensorFlow's complex reciprocal of an infinity is nan (the textbook conj(z)/|z|^2 is inf/inf); 1/inf = 0
z = np.array([complex(np.inf, 0.0), complex(-np.inf, 2.0), complex(3.0, np.inf)])
print(f"tensorflow reciprocal of {list(z)!r}: {list(tf.math.reciprocal(tf.constant(z)).numpy())!r} exact [0, 0, 0]")

# PyTorch's second derivatives of acos and asinh, -z/(1 - z^2)^(3/2) and -z/(1 + z^2)^(3/2), form the
# power first: it overflows (or 1 + z^2 does) at a huge modulus, underflows next to the branch points
z, t1, t2 = 4.997951725225315e153 + 0j, -1 - 6.926597667638784e-308j, -4.345155492708128e-308 + 0.9008303372051859j
print(f"torch acos f'' t1 t2 complex128 at {z!r}: {torch2(torch.acos, z, t1, t2, torch.complex128)!r} exact {complex(-mp(z) / (1 - mp(z) ** 2) ** mpmath.mpf(1.5) * mp(t1) * mp(t2))!r}")
z, t1, t2 = 0.5 - 1.7976931348623157e308j, -0.4084208253802884 + 0j, complex(-0.0, 3.8798754603581027e-308)
print(f"torch asinh f'' t1 t2 complex128 at {z!r}: {torch2(torch.asinh, z, t1, t2, torch.complex128)!r} exact 0 (|f''| ~ 1/|z|^2 = 3e-617)")
z, t1, t2 = complex(-1, np.float32(4.223423608113589e-38)), complex(np.float32(-0.5874056816101074), -0.0), complex(-0.0, -0.0)
print(f"torch acos f'' t1 t2 complex64 at {z!r} (a zero tangent t2): {torch2(torch.acos, z, t1, t2, torch.complex64)!r} exact 0")

# PyTorch's complex128 acos is pi/2 - asin(z) (ATen's Vectorized<c10::complex<double>>::acos): the real
# part cancels next to z = 1
for x in (0.9999999, 0.99999):
    got = complex(torch.acos(torch.tensor([complex(x, 0.0)], dtype=torch.complex128))[0])
    exact = complex(mpmath.acos(mpmath.mpf(x)))
    print(f"torch complex128 acos({x!r}+0j) = {got!r}, exact {exact!r}: {rel(got, exact):.0f}·2u")

# PyTorch's CPU complex log1p, log(u)·(z/(u - 1)) with u = 1 + z: nan at a tiny real and a subnormal
# imaginary part (z/(u - 1) divides by a subnormal number)
for z, dtype in ((complex(-1e-24, 1e-40), torch.complex64), (complex(-1e-300, 1e-316), torch.complex128)):
    got = complex(torch.log1p(torch.tensor([z], dtype=dtype))[0])
    print(f"torch {str(dtype)[6:]} log1p({z!r}) = {got!r}, exact {complex(mpmath.log1p(mp(z)))!r}")

# TensorFlow's complex log1p, the same formula with Eigen's complex log: the real part cancels where
# |1 + z| is near 1
for z, dtype, u in ((complex(np.float32(0.000793353363), np.float32(-0.000608761446)), tf.complex64, 2.0**-24),
                    (complex(-1.8369702e-26, -1e-10), tf.complex128, 2.0**-53)):
    got = complex(tf.math.log1p(tf.constant([z], dtype)).numpy()[0])
    exact = complex(mpmath.log1p(mp(z)))
    err = max(abs(got.real - exact.real), abs(got.imag - exact.imag)) / (2 * u * abs(exact))
    print(f"tensorflow {dtype.name} log1p({z!r}) = {got!r}, exact {exact!r}: {err:.0f}·2u")
