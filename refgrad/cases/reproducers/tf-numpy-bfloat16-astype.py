"""tf.experimental.numpy's float functions raise on bfloat16 tensors unless NumPy behaviour is
enabled globally: np_math_ops._scalar promotes with x.astype(...), a method EagerTensor has only
after tf.experimental.numpy.experimental_enable_numpy_behavior(). float16 and float32 work."""
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

x = tf.constant([0.5, 2.0], tf.bfloat16)
for name in ("exp", "sinc", "log2", "log10", "exp2", "deg2rad", "hypot", "logaddexp"):
    f = getattr(tnp, name)
    try:
        f(x, x) if name in ("hypot", "logaddexp") else f(x)
        print(name, "ok")
    except AttributeError as exc:
        print(name, "raises AttributeError:", str(exc).split(".")[0])
