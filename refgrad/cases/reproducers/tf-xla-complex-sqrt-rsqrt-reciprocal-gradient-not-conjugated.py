"""tf.function(jit_compile=True): the gradients of tf.math.sqrt, tf.math.rsqrt and tf.math.reciprocal
of a complex tensor miss PyTorch's conjugate (XLA's lowerings of SqrtGrad, RsqrtGrad and
ReciprocalGrad compute g * f'(z) where TensorFlow's own kernels, eager and tf.function without XLA,
compute g * conj(f'(z)), as torch.autograd.grad does)."""
import numpy as np
import tensorflow as tf
import torch

z = np.array([1 + 2j, 0.3 - 0.7j])
g = np.array([1 + 0j, 0.5 - 0.25j])


def gradient(f, x, g):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x, output_gradients=g)


for name, f, tf_f in [
    ("sqrt", torch.sqrt, tf.math.sqrt),
    ("rsqrt", torch.rsqrt, tf.math.rsqrt),
    ("reciprocal", torch.reciprocal, tf.math.reciprocal),
]:
    zt = torch.tensor(z, requires_grad=True)
    want = torch.autograd.grad(f(zt), zt, torch.tensor(g))[0].numpy()
    eager = gradient(tf_f, tf.constant(z), tf.constant(g)).numpy()
    xla = tf.function(lambda x, g, f=tf_f: gradient(f, x, g), jit_compile=True)(tf.constant(z), tf.constant(g)).numpy()
    plain = g * np.conj(want / g)  # g * f'(z): the derivative without the conjugate
    print(f"{name}: torch {want}, tf eager {eager}, tf xla {xla}")
    print(f"{name}: eager is torch's: {np.allclose(eager, want)}; xla is g * f'(z) (no conj): {np.allclose(xla, plain)}")
