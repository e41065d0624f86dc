"""tf.experimental.numpy.power of a bfloat16 tensor by a Python float raises under tf.vectorized_map
once a ForwardAccumulator is taken of its tape gradient (forward over reverse, per sample): the
vectorized gradient multiplies the bfloat16 operand by a float64 constant ("Input 'y' of 'Mul' Op
has type float64 that does not match type bfloat16 of argument 'x'"). Unvectorized it runs, and so
does float32 (12 and 0 below, the exact values)."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402
import tensorflow.experimental.numpy as tnp  # noqa: E402


def per_sample(x, t, c, tc):
    with tf.autodiff.ForwardAccumulator((x, c), (t, tc)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tnp.power(x, -1.0)
        g = tape.gradient(y, x, output_gradients=c)
    return acc.jvp(g)


for dtype in (tf.float32, tf.bfloat16, tf.float16):
    xs = tf.constant([[0.5], [2.0]], dtype)
    ones = tf.ones_like(xs)
    try:
        out = tf.vectorized_map(lambda a: per_sample(*a), (xs, ones, ones, ones))
        print(dtype.name, "vectorized forward over reverse:", out.numpy().ravel().tolist())
    except TypeError as e:
        print(dtype.name, "vectorized forward over reverse raises TypeError:", str(e).splitlines()[-1].strip()[:160])
