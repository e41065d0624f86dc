"""TensorFlow's gradient of tf.tile reshapes the cotangent to twice the rank and sums every other
dim; the gradient of that sum is a BroadcastTo of rank 2n, which TensorFlow's kernel refuses past
rank 5 ('Broadcast between [...] and [...] is not supported yet'). So the second derivatives of
tf.tile of a tensor of rank 3 or more (repeats of length 3 or more) raise, where the first ones return (and the second derivative of the
linear tile is 0: PyTorch's repeat and the reference). Prints what each order does."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf  # noqa: E402

for rank in (2, 3):
    x = tf.ones([2, 5, 3, 2][:rank])
    reps = [3, 3, 2, 3][:rank]
    t = tf.ones_like(x)
    try:
        with tf.autodiff.ForwardAccumulator(x, t) as outer:
            with tf.autodiff.ForwardAccumulator(x, t) as inner:
                y = tf.tile(x, reps)
            j = inner.jvp(y)
        said = f"shape {tuple(outer.jvp(j).shape)}"
    except (tf.errors.UnimplementedError, tf.errors.InvalidArgumentError) as exc:
        text = " ".join(exc.message.split())
        said = f"{type(exc).__name__}: " + text[text.find("Broadcast between") :][:90]
    print(f"rank {rank}: jvp of jvp of tf.tile: {said}")
