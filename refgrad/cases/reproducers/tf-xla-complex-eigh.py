"""tf.linalg.eigh of a complex Hermitian matrix under tf.function(jit_compile=True): the eigenvalues
are wrong (complex, with NaN parts, where eager TensorFlow, NumPy and PyTorch give real ones), and
its gradient does not compile (XLA: "Binary op add with different element types"). Real matrices
are right."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
H = A + A.conj().T


def gradient(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        L, V = tf.linalg.eigh(x + tf.linalg.adjoint(x))
        y = tf.reduce_sum(V * tf.math.conj(V) * L[None, :])
    return tape.gradient(y, x)


print("numpy eigvalsh:", np.linalg.eigvalsh(H))
print("tf eager:", tf.linalg.eigh(tf.constant(H))[0].numpy())
xla = tf.function(lambda x: tf.linalg.eigh(x)[0], jit_compile=True)(tf.constant(H)).numpy()
print("tf xla:", xla)
print("xla eigenvalues right:", np.allclose(xla, np.linalg.eigvalsh(H)))
try:
    tf.function(gradient, jit_compile=True)(tf.constant(A))
    print("xla gradient compiles")
except tf.errors.InvalidArgumentError as exc:
    print("xla gradient raises:", str(exc).splitlines()[0][:100])
