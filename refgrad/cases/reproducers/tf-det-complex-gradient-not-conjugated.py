"""TensorFlow's gradient of tf.linalg.det of a complex matrix is g * det * A^{-H}: it misses the
conjugate of det. PyTorch's convention (which TensorFlow's other complex gradients follow, e.g.
ExpGrad's g * conj(exp(z))) gives g * conj(det) * A^{-H}, as torch.linalg.det's does."""
import numpy as np
import tensorflow as tf
import torch

A = np.array([[1.0 + 0.5j, -0.3 + 0.2j], [0.2 - 0.7j, 1.5 + 0.1j]])
g = np.complex128(-0.75 + 0.1j)
x = tf.constant(A)
with tf.GradientTape() as tape:
    tape.watch(x)
    d = tf.linalg.det(x)
got = tape.gradient(d, x, output_gradients=tf.constant(g)).numpy()
inv_h = np.linalg.inv(A).conj().T
xt = torch.tensor(A, requires_grad=True)
want = torch.autograd.grad(torch.linalg.det(xt), xt, torch.tensor(g))[0].numpy()
print("tensorflow", got.ravel())
print("torch     ", want.ravel())
print("tf is g*det*A^-H (no conj):", np.allclose(got, g * np.linalg.det(A) * inv_h))
