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
