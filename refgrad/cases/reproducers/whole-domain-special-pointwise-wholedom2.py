"""Departures reached by `refgrad run --ops <op> --domains whole --draws seeded --seed 1` (wholedom2),
left unclassified by wholedom: each line prints the framework's value next to mpmath's."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import jax
import mpmath
import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import jax.scipy.special as jss  # noqa: E402

mpmath.mp.dps = 40


def tf_reverse_over_forward(f, x, tangent, cotangent, dtype):
    """d/dx <cotangent, f'(x) tangent>, TensorFlow's vjp_jvp."""
    x = tf.constant(x, dtype)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, tf.constant(tangent, dtype)) as acc:
            out = f(x)
        jvp = acc.jvp(out)
    return float(tape.gradient(jvp, x, output_gradients=tf.constant(cotangent, dtype)))


# TensorFlow's atanh forward over reverse at x = 1: its ReciprocalGrad kernel answers 0 for a zero
# incoming gradient even where 1 / (1 - x^2) = inf, and the float32 seed product cotangent * tangent
# (-1.45e-39) is subnormal, flushed to -0: -0.0 where the exact value is -inf (inf * 0, the flushed
# reading, is nan; torch.autograd's is nan at a zero cotangent)
t, c = -0.14603906869888306, 9.915622966024014e-39
got = tf_reverse_over_forward(tf.math.atanh, 1.0, t, c, tf.float32)
# c t atanh''(x) = c t 2x / (1 - x^2)^2: its limit as x -> 1 from below is -inf for c t < 0
near_1 = 1 - mpmath.mpf(10) ** -30
exact = mpmath.mpf(c) * t * 2 * near_1 / (1 - near_1**2) ** 2
print(f"tf atanh vjp_jvp float32 at x = 1, tangent {t:.4g}, cotangent {c:.4g}: {got!r} exact -inf"
      f" ({float(exact):.4g} at 1 - 1e-30)")
print(f"tf atanh vjp_jvp float64 at x = 1, cotangent 0: {tf_reverse_over_forward(tf.math.atanh, 1.0, t, 0.0, tf.float64)!r}"
      " where inf * 0 is nan")

# TensorFlow's float32 bessel_j1'' at small x: its gradient j0(x) - j1(x) / x differentiated again is
# -j1 - j1'/x + j1/x^2, two terms of size 1/(2x) that cancel to -3x/8: their rounding is u/x
for x in (7.297564993959165e-38, 1e-10, 1e-3):
    x = float(np.float32(x))
    got = tf_reverse_over_forward(tf.math.special.bessel_j1, x, 1.0, 1.0, tf.float32)
    exact = mpmath.diff(lambda z: mpmath.besselj(1, z), mpmath.mpf(x), 2)
    print(f"tf bessel_j1'' float32 at {x:.6g}: {got!r} exact {float(exact)!r}")

# JAX's float16 i1'' near 0: i1's derivative i0(x) - i1(x) / x, differentiated again, carries
# i1(x) / x^2, and 1 / x^2 overflows float16 (65504) for |x| <= 2^-8
for x in (0.00390625, 0.0010004043579101562):
    got = float(jax.grad(jax.grad(jss.i1))(np.float16(x)))
    exact = mpmath.diff(lambda z: mpmath.besseli(1, z), mpmath.mpf(x), 2)
    print(f"jax i1'' float16 at {x}: {got!r} exact {float(exact)!r}")

# TensorFlow's float32 log10 (tnp.log10: log(x) / log(10)) of a positive subnormal: log's
# log(2^-150) = -103.97208 for every subnormal (tf-log-of-subnormal-float32), over log(10)
xs = np.array([1.401298464324817e-45, 1e-40, 1e-39], np.float32)
got = tnp.log10(tf.constant(xs)).numpy()
print(f"tf log10 float32 at {xs.tolist()}: {got.tolist()} exact {[float(mpmath.log10(float(v))) for v in xs]}")

# TensorFlow's modified Bessel K1 below twice the smallest normal: Cephes' log(x / 2) * i1(x) with
# x / 2 and i1(x) ~ x / 2 subnormal, flushed to 0: log(0) * 0 = nan where K1(x) ~ 1/x is finite
for x, dt in ((2.0923954669852265e-38, tf.float32), (3.0e-308, tf.float64)):
    got = float(tf.math.special.bessel_k1(tf.constant(x, dt)))
    print(f"tf bessel_k1 {dt.name} at {x!r}: {got!r} exact {float(mpmath.besselk(1, x))!r}")

# JAX's zeta(s, q) at a pole q = 0, -1, -2, ... with s < 1 an integer: inf, where the frameworks'
# domain s > 1 gives nan (PyTorch's, the reference's) and the continuation -B_(n+1)(q) / (n + 1) at
# s = -n is finite: zeta(-2, -1) = 1
s, q = -2.0, -1.0
print(f"jax zeta({s}, {q}) float64: {float(jss.zeta(np.float64(s), np.float64(q)))!r}, continuation"
      f" {float(mpmath.zeta(s, q))!r}, torch.special.zeta"
      f" {torch.special.zeta(torch.tensor(s, dtype=torch.float64), torch.tensor(q, dtype=torch.float64)).item()!r}")

# JAX's float16 and bfloat16 derivatives of zeta in s: its Euler-Maclaurin series in the input dtype,
# whose terms cancel where the derivative is small
for s, q, g, dt in ((2.60546875, 0.81005859375, 0.68603515625, np.float16),
                    (1.0546875, 0.015625, -0.68359375, jnp.bfloat16)):
    _, vjp = jax.vjp(lambda s_: jss.zeta(s_, dt(q)), dt(s))
    print(f"jax zeta vjp in s {np.dtype(dt).name} at ({s}, {q}), cotangent {g}: {float(vjp(dt(g))[0])!r}"
          f" exact {float(g * mpmath.zeta(s, q, 1))!r}")
