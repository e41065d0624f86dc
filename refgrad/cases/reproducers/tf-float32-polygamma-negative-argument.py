"""TensorFlow's float32 derivative of digamma (tf.math.polygamma(1, x), the gradient of
tf.math.digamma and the second derivative of tf.math.lgamma) at negative non-integer x is far off;
float64 is right. The exact value is mpmath.psi(1, x)."""
import tensorflow as tf

exact = 14.986887065722637  # mpmath.psi(1, -10.3)
for dtype in (tf.float32, tf.float64):
    x = tf.Variable(-10.3, dtype=dtype)
    with tf.GradientTape() as tape:
        y = tf.math.digamma(x)
    got = float(tape.gradient(y, x))
    print(dtype.name, "gradient of digamma at -10.3 =", got, "exact", exact)
x32 = tf.Variable(-10.3, dtype=tf.float32)
with tf.GradientTape() as tape:
    y = tf.math.digamma(x32)
got = float(tape.gradient(y, x32))
print("wrong:", abs(got - exact) > 1e-3 * exact)
