"""Departures reached by `refgrad run --ops special --draws seeded --seed 3` (accuracy7): each line
prints TensorFlow's value next to the exact one (mpmath)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import mpmath
import tensorflow as tf

mpmath.mp.dps = 40

# Y1(x) ~ -2/(pi x) -> -inf as x -> 0+; TensorFlow's float64 kernel says -inf at 0, its float16 and
# float32 kernels nan (J1(x)·log(x) = 0·(-inf) with no case for x = 0)
for dtype in (tf.float16, tf.float32, tf.float64):
    y = tf.math.special.bessel_y1(tf.constant([0.0], dtype)).numpy()[0]
    print(f"tf bessel_y1(0) {dtype.name}: {y}")

# K0(x) = -log(x/2) - gamma + O(x^2 log x): finite for every x > 0; TensorFlow's Cephes k0
# (chbevl(x^2 - 2) - log(x/2)·i0(x)) flushes the subnormal x/2 to 0 below twice the smallest normal
for dtype, x in ((tf.float32, 2.0e-38), (tf.float64, 3.4e-308)):
    xt = tf.constant([x], dtype)
    k0 = tf.math.special.bessel_k0(xt).numpy()[0]
    k0e = tf.math.special.bessel_k0e(xt).numpy()[0]
    k0_vmap = tf.vectorized_map(tf.math.special.bessel_k0, xt).numpy()[0]
    exact = mpmath.besselk(0, mpmath.mpf(float(xt.numpy()[0])))
    print(f"tf bessel_k0 {dtype.name} at {x:.3g}: {k0}, bessel_k0e {k0e}, under vectorized_map {k0_vmap}; exact {mpmath.nstr(exact, 8)}")

# e^x K1(x) ~ 1/x is finite for x > 0; TensorFlow's bessel_k1e is nan below twice the smallest normal
# (log(x/2)·i1(x) with x/2 and i1(x) flushed: log(0)·0), so K0e' = K0e - K1e is nan there too
xt = tf.constant([2.0e-38], tf.float32)
with tf.GradientTape() as tape:
    tape.watch(xt)
    k0e = tf.math.special.bessel_k0e(xt)
d1 = tape.gradient(k0e, xt).numpy()[0]
k1e = tf.math.special.bessel_k1e(xt).numpy()[0]
exact = mpmath.exp(mpmath.mpf(float(xt.numpy()[0]))) * mpmath.besselk(1, mpmath.mpf(float(xt.numpy()[0])))
print(f"tf bessel_k1e float32 at 2e-38: {k1e}, bessel_k0e' {d1}; exact K1e {mpmath.nstr(exact, 8)}")
