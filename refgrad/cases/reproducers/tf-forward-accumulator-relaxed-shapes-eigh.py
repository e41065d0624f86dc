"""tf.autodiff.ForwardAccumulator traces each op's JVP per input shape, and after 32 traces of one op
(forwardprop._TRACE_COUNT_LIMIT) it switches to a trace with relaxed (unknown) shapes. The
forward over forward of tf.linalg.eigh through that relaxed trace raises 'Input to reshape is a
tensor with N values, but the requested shape has N^2' (a Reshape's gradient inside the traced
JVP), where the same call with exact shapes returns. So whether a second-order forward-mode
derivative of eigh works depends on how many shapes the process has seen. Prints the first
shape that raises."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402


def f(x):
    L, V = tf.linalg.eigh(x + tf.linalg.adjoint(x))
    return V * V * L[..., None, :] + L[..., :, None]


def jvp_jvp(x):
    t = tf.ones_like(x)
    with tf.autodiff.ForwardAccumulator(x, t) as outer:
        with tf.autodiff.ForwardAccumulator(x, t) as inner:
            y = f(x)
        j = inner.jvp(y)
    return outer.jvp(j)


said = "no shape raised"
for i, shape in enumerate([(b, n, n) for b in range(1, 8) for n in range(1, 6)]):
    try:
        jvp_jvp(tf.random.stateless_normal(shape, [1, 2], dtype=tf.float32))
    except tf.errors.InvalidArgumentError as exc:
        text = " ".join(exc.message.split())
        said = f"call {i + 1}, shape {shape}: " + text[text.find("Input to reshape") :][:80]
        break
print(f"forward over forward of tf.linalg.eigh: {said}")
