"""Complex departures found by `refgrad run --ops exp,log,sqrt,sin,cos,tan,tanh,sinh,cosh --domains whole
--dtypes complex64,complex128 --draws seeded --seed 1` (wholedom5), each against mpmath."""
import mpmath as mp
import numpy as np

mp.mp.prec = 200


def ulps(observed, exact, dtype):
    exact = float(exact)
    return abs(observed - exact) / np.spacing(dtype(abs(exact)))


# TensorFlow: complex64 log of a full vector packet (4 elements) computes |z|^2, which overflows
# (2e19 + 3e19i) or underflows (3e-20 + 4e-20i) in float32; the scalar remainder does not.
import tensorflow as tf  # noqa: E402

for z in (3e-20 + 4e-20j, 2e19 + 3e19j):
    exact = float(mp.log(abs(mp.mpc(z.real, z.imag))))
    for n in (3, 4):
        got = tf.math.log(tf.constant(np.full(n, z, dtype=np.complex64))).numpy()[0]
        print(f"tensorflow complex64 log({z}) in a vector of {n}: real part {got.real} exact {exact:.6f}")

# TensorFlow: complex64 sqrt of a modulus near the smallest normal number is 0, and its gradient
# 0.5 / sqrt(z) then inf + nan i.
z = 1.540541849348767e-38j
x = tf.constant(np.array([z], dtype=np.complex64))
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.sqrt(x)
g = tape.gradient(y, x, output_gradients=tf.ones_like(y)).numpy()[0]
root = mp.sqrt(mp.mpc(z.real, z.imag))
print(f"tensorflow complex64 sqrt({z}) = {y.numpy()[0]} exact {complex(root):.6g}; gradient {g} exact {complex(mp.conj(1 / (2 * root))):.6g}")

# JAX: the real part of complex128 log is not log|z| to a few ulps.
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

z = 0.5763332020337188 - 0.505760556655406j
got = complex(jnp.log(jnp.asarray(z))).real
exact = mp.log(abs(mp.mpc(z.real, z.imag)))
print(f"jax complex128 log({z}) real part {got!r} exact {float(exact)!r}: {ulps(got, exact, np.float64):.0f} ulps")

# JAX: complex sinh (and cosh's derivative, sinh) at a small real part: (e^x - e^-x)/2 cancels.
for dtype, part in ((np.complex64, np.float32), (np.complex128, np.float64)):
    x = -0.001
    got = complex(jnp.sinh(jnp.asarray(dtype(x)))).real
    exact = mp.sinh(mp.mpf(float(part(x))))
    print(f"jax {np.dtype(dtype).name} sinh({x}+0j) real part {got!r} exact {float(exact)!r}: {ulps(got, exact, part):.0f} ulps")

# JAX: asinh on its branch cut (real part -0, |imaginary part| > 1) answers the +0 side.
for dtype in (np.complex64, np.complex128):
    got = complex(jnp.arcsinh(jnp.asarray(np.array([complex(-0.0, 2.0)], dtype=dtype)))[0])
    exact = complex(np.arcsinh(np.complex128(complex(-0.0, 2.0))))  # C99 casinh: the -0 side of the cut
    print(f"jax {np.dtype(dtype).name} asinh(-0+2j) = {got:.6f} C99/NumPy/PyTorch {exact:.6f}")
