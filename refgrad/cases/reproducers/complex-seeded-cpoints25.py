"""Complex departures of the records' own draws found by `refgrad run --ops <the 21 records with
complex points> --dtypes complex64,complex128 --known builtin --draws seeded --seed 1` (cpoints25):
second derivatives at a huge modulus (values 'large'), where an intermediate (1/z^2, or
(1 + z^2)^(3/2)) leaves the dtype's normal range and the result is 0 where the exact value, scaled
by the tangents, is a normal number. Exact: mpmath, t1 t2 f''(z)."""
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, mpmath, torch, tensorflow as tf
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
mpmath.mp.prec = 100
c64 = np.complex64


def jax2(f, z, t1, t2):
    g = lambda x: jax.jvp(f, (x,), (jnp.asarray(t1),))[1]
    return complex(jax.jvp(g, (jnp.asarray(z),), (jnp.asarray(t2),))[1])


def tf2(f, z, t1, t2):
    x = tf.constant(z)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(t2)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(t1)) as inner:
            y = f(x)
        d = inner.jvp(y)
    return complex(outer.jvp(d).numpy())


def torch2(f, z, t1, t2):
    from torch.func import jvp
    x = torch.tensor(z)
    return complex(jvp(lambda a: jvp(f, (a,), (torch.tensor(t1),))[1], (x,), (torch.tensor(t2),))[1])


def ex(d2, z, t1, t2):
    w = mpmath.mpc(complex(z).real, complex(z).imag)
    return complex(d2(w) * mpmath.mpc(complex(t1).real, complex(t1).imag) * mpmath.mpc(complex(t2).real, complex(t2).imag))


z, t1, t2 = c64(-1.1040118189173244e19j), c64(2094027136 + 0.659325122833252j), c64(-0.7944443225860596 - 4.4400071777208613e-38j)
print(f"log2 f'' t1 t2 complex64 at {complex(z)!r}: jax {jax2(jnp.log2, z, t1, t2)!r} tensorflow {tf2(lambda x: tf.math.log(x) / tf.cast(np.log(2), x.dtype), z, t1, t2)!r} torch {torch2(torch.log2, z, t1, t2)!r} exact {ex(lambda w: -1 / (w * w * mpmath.log(2)), z, t1, t2)!r}")
print(f"log10 f'' t1 t2 complex64 at {complex(z)!r}: jax {jax2(jnp.log10, z, t1, t2)!r} exact {ex(lambda w: -1 / (w * w * mpmath.log(10)), z, t1, t2)!r}")
z, t1, t2 = c64(1.319276239499821e18 - 2.544292556613196e19j), c64(1.2122868299484253 - 32877778j), c64(-53685776 + 4.107216168544675e-38j)
# angle = Im log z: its second derivative is real, Im(-t1 t2 / z^2) for a real-valued function of z (the tangents complex)
print(f"angle jvp_jvp complex64 at {complex(z)!r}: tensorflow {tf2(tf.math.angle, z, t1, t2)!r} exact {ex(lambda w: 1 / (w * w), z, t1, t2).imag * -1:.6g}")
z, t1, t2 = c64(-6.959501784519803e18 + 4.35995667953877e18j), c64(1232336384 + 0.7904427647590637j), c64(-1.1392546892166138j)
print(f"asinh f'' t1 t2 complex64 at {complex(z)!r}: torch {torch2(torch.asinh, z, t1, t2)!r} jax {jax2(jnp.arcsinh, z, t1, t2)!r} tensorflow {tf2(tf.math.asinh, z, t1, t2)!r} exact {ex(lambda w: -w / (1 + w * w) ** mpmath.mpf(1.5), z, t1, t2)!r}")

# TensorFlow's vectorised complex128 log (and tnp.log10) at the largest finite number: |z|^2 overflows
# in a full vector packet (3 or more elements), while one element alone is right
import tensorflow.experimental.numpy as tnp  # noqa: E402

big = np.finfo(np.float64).max
for n in (1, 3):
    print(f"tensorflow complex128 log10 of {n} x {big!r}: {complex(tnp.log10(tf.constant(np.full(n, big + 0j))).numpy()[0])!r} "
          f"exact {float(mpmath.log10(big)):.10g}")  # fmt: skip

# the argument of a complex number with subnormal parts: JAX and TensorFlow answer pi/2
z = np.array([complex(1e-309, 1.2e-309)])
print(f"angle complex128 at {z[0]!r}: jax {float(jnp.angle(jnp.asarray(z))[0]):.6g} tensorflow {float(tf.math.angle(tf.constant(z)).numpy()[0]):.6g} "
      f"torch {float(torch.angle(torch.tensor(z))[0]):.6g} exact {float(mpmath.atan2(1.2e-309, 1e-309)):.6g}")  # fmt: skip

# JAX's derivative of angle divides by |z|^2, which underflows float32 at |z| = 3.4e-38 (the 'ties'
# draws' imaginary parts of the smallest normal magnitude just off the cut): the JVP is nan where
# Im(t/z) = 1.41e37
z, t = np.complex64(complex(-0.0, 3.388768764327184e-38)), np.complex64(-0.4791712462902069)
_, jv = jax.jvp(jnp.angle, (jnp.asarray(z),), (jnp.asarray(t),))
print(f"angle jvp complex64 at {complex(z)!r} along {complex(t)!r}: jax {float(jv)!r} exact {(complex(t) / complex(z)).imag:.6g}")

# --- cplxseed28: the seeded complex campaigns (--seed 0 and --seed 1, the 24 complex unary records) ---
# JAX's log1p second derivative differentiates t/(1 + z): (1 + z)^2 overflows float64 past
# |1 + z| = 1.34e154, and -t1 t2/(1 + z)^2 is 0 where the exact value is a normal number
z, t1, t2 = -2.892805638553048e154 + 0j, -0.5468394833943432 - 1.858144917934048e77j, -0.3104728940131453 - 3.0576110133258164e-308j
print(f"log1p f'' t1 t2 complex128 at {z!r}: jax {jax2(jnp.log1p, z, t1, t2)!r} exact {ex(lambda w: -1 / ((1 + w) * (1 + w)), z, t1, t2)!r}")


def torch_vjp_vjp(f, z, g, gg, n=9):
    """The derivative in the cotangent of the VJP of f at z (cotangent g), along gg: reverse over reverse."""
    x = torch.full((n,), z, dtype=torch.complex128 if isinstance(z, complex) else torch.complex64, requires_grad=True)
    c = torch.full((n,), g, dtype=x.dtype, requires_grad=True)
    (gx,) = torch.autograd.grad(f(x), x, c, create_graph=True)
    return complex(torch.autograd.grad(gx, c, torch.full((n,), gg, dtype=x.dtype))[0][0])


# PyTorch's complex second derivatives of sgn and sqrt at a subnormal modulus are nan where the exact
# value overflows (the infinity of that sign is the correctly rounded value)
z, g, gg = complex(-5.329104659019614e-309, -0.0), complex(-1.0000673683060093, 7.970098642927365e-308), 2.394922105824598j
print(f"torch sgn reverse over reverse complex128 at {z!r}, g = {g!r}, gg = {gg!r}: {torch_vjp_vjp(torch.sgn, z, g, gg)!r} "
      f"exact (gg - sgn^2 conj(gg))/(2|z|) = {complex(mpmath.mpc(gg) * 2 / (2 * mpmath.mpf(abs(z))))}")  # fmt: skip
z, t1, t2 = complex(-0.0, 1.4671569769294583e-308), complex(-0.8479818464535521, -2.0549602869312364), complex(-0.0, -1.27448901469617e77)
print(f"torch sqrt f'' t1 t2 complex128 at {z!r}: {torch2(torch.sqrt, z, t1, t2)!r} exact {ex(lambda w: -1 / (4 * w * mpmath.sqrt(w)), z, t1, t2)!r}")

# PyTorch's complex64 log10 backward g / (conj(z) log 10) divides in c10::complex<float>, which overflows
# at a subnormal z although the quotient is a float32 number
z, g, gg = np.complex64(6.718175162589254e-40 - 0j), np.complex64(0.8429169058799744j), np.complex64(-0.24444670975208282j)
print(f"torch log10 reverse over reverse complex64 at {complex(z)!r}, g = {complex(g)!r}, gg = {complex(gg)!r}: "
      f"{torch_vjp_vjp(torch.log10, z, g, gg)!r} exact {complex(gg) / (complex(z).conjugate() * np.log(10))!r}")  # fmt: skip

# TensorFlow's complex64 log2 (tnp.log2: log z / log 2) of a full vector packet (4 elements) computes |z|^2
# in float32, which underflows at -0 + 2.88e-38i
import tensorflow.experimental.numpy as tnp  # noqa: E402

z = np.complex64(complex(-0.0, 2.8787830038177387e-38))
for n in (3, 4):
    got = complex(tnp.log2(tf.constant(np.full(n, z))).numpy()[0])
    print(f"tensorflow complex64 log2({complex(z)!r}) in a vector of {n}: {got!r} exact {complex(mpmath.log(mpmath.mpc(0, float(z.imag)), 2))!r}")

# TensorFlow's complex64 sigmoid 1/(1 + e^-z) 0.11 from the pole 169 pi i (a 'wide' draw): 1 + e^-z cancels
z = np.complex64(complex(0.00058105873, 530.8198))
w = mpmath.mpc(float(z.real), float(z.imag))
print(f"sigmoid complex64 at {complex(z)!r}: tensorflow {complex(tf.math.sigmoid(tf.constant(np.full(4, z))).numpy()[0])!r} "
      f"torch {complex(torch.sigmoid(torch.tensor(np.full(4, z)))[0])!r} jax {complex(jax.nn.sigmoid(jnp.asarray(np.full(4, z)))[0])!r} "
      f"exact {complex(1 / (1 + mpmath.exp(-w)))!r} |z - 169 pi i| = {float(abs(w - 169j * mpmath.pi)):.3g}")  # fmt: skip
