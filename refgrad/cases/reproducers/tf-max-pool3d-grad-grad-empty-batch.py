"""TensorFlow's MaxPool3DGradGrad rejects an empty batch, so every derivative of tf.nn.max_pool3d
past the first reverse one raises over an empty batch (forward mode included: TensorFlow's
ForwardAccumulator differentiates MaxPool3DGrad). The gradient of an empty result is empty: PyTorch
and the reference return a (0, ...) tensor. Prints what each spelling returns or raises."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402


def pool(x):
    return tf.nn.max_pool3d(x, (2, 2, 1), (1, 1, 1), "VALID")


for n in (1, 0):
    x = tf.zeros([n, 2, 3, 1, 1])
    try:
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            y = pool(x)
        said = f"shape {tuple(acc.jvp(y).shape)}"
    except tf.errors.InvalidArgumentError as exc:
        text = " ".join(exc.message.split())
        said = f"{type(exc).__name__}: " + text[text.find("received") :][:80]
    print(f"batch {n}: jvp of tf.nn.max_pool3d: {said}")
