"""Complex departures found by `refgrad run --ops exp,log,sqrt,sin,cos,tan,tanh,sinh,cosh --domains whole
--dtypes complex64,complex128 --draws seeded --seed 1` (classify23b), each against mpmath."""
import mpmath as mp
import numpy as np
import tensorflow as tf

mp.mp.prec = 200

# TensorFlow (its own kernels; XLA is right): complex sqrt of a number with a nonzero imaginary part
# and a modulus below twice the smallest normal number is 0 (one element) or +-inf i (a full vector
# packet), so its derivative 1/(2 sqrt z) is inf + nan i or nan where it is finite.
for dtype, z in ((np.complex128, complex(-0.0, 3e-308)), (np.complex64, complex(-0.0, 2e-38))):
    root = mp.sqrt(mp.mpc(z.real, z.imag))
    for n in (1, 4):
        x = tf.constant(np.full(n, z, dtype=dtype))
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            y = tf.math.sqrt(x)
        print(
            f"tensorflow {np.dtype(dtype).name} sqrt({z}) in a vector of {n} = {y.numpy()[0]} exact {complex(root):.6g};"
            f" jvp along 1 {acc.jvp(y).numpy()[0]} exact {complex(1 / (2 * root)):.6g}"
        )

# JAX and TensorFlow: log's second derivative -1/z^2 (JAX: div's JVP through integer_pow(z, -2);
# TensorFlow: ReciprocalGrad's y*y of y = 1/z) overflows where |z|^2 underflows; a zero cotangent
# times it is nan where the exact term is 0, so a finite second-order result is lost.
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402


def log_forward_over_reverse_exact(z, c, t1, tc):
    """d/ds of log's gradient c conj(1/z) (PyTorch's convention) along z + s t1, c + s tc:
    tc conj(1/z) - c conj(t1/z^2)."""
    z, c, t1, tc = (mp.mpc(v.real, v.imag) for v in (z, c, t1, tc))
    return complex(tc * mp.conj(1 / z) - c * mp.conj(t1 / z**2))


def jax_log_forward_over_reverse(z, c, t1, tc, dtype):
    z, c, t1, tc = (jnp.asarray(np.array([v], dtype=dtype)) for v in (z, c, t1, tc))

    def grad(c_, z_):  # JAX's VJP in PyTorch's convention: conj(vjp(conj(c)))
        return jnp.conj(jax.vjp(jnp.log, z_)[1](jnp.conj(c_))[0])

    return complex(jax.jvp(grad, (c, z), (tc, t1))[1][0])


def tf_log_forward_over_reverse(z, c, t1, tc, dtype):
    z, c, t1, tc = (tf.constant(np.array([v], dtype=dtype)) for v in (z, c, t1, tc))
    with tf.autodiff.ForwardAccumulator((z, c), (t1, tc)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(z)
            y = tf.math.log(z)
        grad = tape.gradient(y, z, output_gradients=c)
    return complex(acc.jvp(grad).numpy()[0])


for dtype, z in ((np.complex128, 1e-200 + 0j), (np.complex64, 1e-25 + 0j)):
    c, t1, tc = 0j, 1 + 0j, z
    print(
        f"{np.dtype(dtype).name} log forward over reverse at z={z}, cotangent 0, tangents {t1} and {tc}: "
        f"jax {jax_log_forward_over_reverse(z, c, t1, tc, dtype)} "
        f"tensorflow {tf_log_forward_over_reverse(z, c, t1, tc, dtype)} "
        f"exact {log_forward_over_reverse_exact(z, c, t1, tc)}"
    )
