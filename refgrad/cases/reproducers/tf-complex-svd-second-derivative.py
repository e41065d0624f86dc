"""The second derivative of a phase-invariant program of tf.linalg.svd of a complex matrix is wrong.
For a 1 x 1 matrix a, [|U|^2 S, S, U V^H] is [|a|, |a|, a/|a|]; with the cotangent [1, 1, c] the loss
is 2|a| + Re(conj(c) a/|a|). Its gradient (PyTorch's convention, df/dx + i df/dy) is right in
TensorFlow, but the gradient of Re(conj(v) grad) is not: TensorFlow 0.4284+0.5688j, PyTorch and
central differences 0.4196+0.5622j (a = 0.6 - 0.8j, c = 0.5 + 0.25j, v = 0.3 + 0.2j)."""

import numpy as np
import tensorflow as tf

a0, c, v = 0.6 - 0.8j, 0.5 + 0.25j, 0.3 + 0.2j


def program(x):
    S, U, V = tf.linalg.svd(x, full_matrices=False, compute_uv=True)
    S = tf.cast(S, U.dtype)
    parts = [U * tf.math.conj(U) * S[..., None, :], S, tf.linalg.matmul(U, V, adjoint_b=True)]
    return tf.concat([tf.reshape(p, [-1]) for p in parts], 0)


x = tf.constant([[a0]], tf.complex128)
with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = program(x)
    g = inner.gradient(y, x, output_gradients=tf.constant([1, 1, c], tf.complex128))
second = outer.gradient(g, x, output_gradients=tf.constant([[v]], tf.complex128))


def grad(f, a, h):  # df/dx + i df/dy by central differences
    return (f(a + h) - f(a - h)) / (2 * h) + 1j * (f(a + 1j * h) - f(a - 1j * h)) / (2 * h)


def loss(a):
    return 2 * abs(a) + (np.conj(c) * a / abs(a)).real


fd = grad(lambda a: (np.conj(v) * grad(loss, a, 1e-5)).real, a0, 1e-4)
print(f"tf second derivative {complex(second.numpy()[0, 0]):.4f}, central differences {fd:.4f}")
