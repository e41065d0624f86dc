"""keras.ops (Keras 3 on TensorFlow) computes many functions of a complex128 tensor in complex64:
its dtype promotion has no complex128 for them, so the result (and every gradient through it) has
float32 precision. exp, reciprocal, sum, mean, cumsum, cumprod, expm1 and sigmoid keep complex128."""
import keras
import numpy as np
import tensorflow as tf

x = tf.constant(np.array([1 + 2j]))
for name in ("log", "sqrt", "tanh", "log1p", "matmul", "exp"):
    f = getattr(keras.ops, name)
    y = f(tf.reshape(x, (1, 1)), tf.reshape(x, (1, 1))) if name == "matmul" else f(x)
    print(name, "complex128 ->", y.dtype.name)
