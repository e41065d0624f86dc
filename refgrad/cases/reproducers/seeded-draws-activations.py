"""Departures `refgrad run --ops activations --draws seeded --seed 0` reached that the known file did
not yet describe (seedsD): each line prints a framework's value next to the exact one (mpmath)."""

import keras
import mpmath
import tensorflow as tf
import torch

mpmath.mp.prec = 100

# TensorFlow's tf.nn.elu (keras.ops.elu's kernel) forms exp(x) - 1 in the input's dtype: for a small
# negative x it rounds to 0, and EluGradGrad, which reads that output, gives a second derivative 0
x = tf.Variable(tf.constant(-6.103515625e-05, tf.float16))
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = keras.ops.elu(x, 0.5)
    g = inner.gradient(y, x)
d2 = outer.gradient(g, x)
exact = 0.5 * mpmath.exp(mpmath.mpf(-6.103515625e-05))
print("tf keras.ops.elu'' float16 at -6.1e-05, alpha 0.5:", float(d2), "exact:", mpmath.nstr(exact, 8))

# tf.nn.selu's output exp(x) - 1 rounds to 0 at a tiny negative x; its second derivative (through
# SeluGrad, which reads the output) is then 0
x = tf.Variable(tf.constant(-5.623563759127795e-38, tf.float32))
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        y = tf.nn.selu(x)
    g = inner.gradient(y, x)
d2 = outer.gradient(g, x)
scale, alpha = mpmath.mpf("1.0507009873554804934193349852946"), mpmath.mpf("1.6732632423543772848170429916717")
exact = scale * alpha * mpmath.exp(mpmath.mpf(-5.623563759127795e-38))
print("tf selu'' float32 at -5.6e-38:", float(d2), "exact:", mpmath.nstr(exact, 8))

# PyTorch's forward over reverse of prelu at x = 0: its backward gives w * g there (x > 0 is the
# positive branch), the forward-mode derivative of that backward takes the positive branch (x >= 0)
x = torch.tensor([[0.0]], dtype=torch.float64)
w = torch.tensor([0.25], dtype=torch.float64)
g = torch.tensor([[1.0]], dtype=torch.float64)


def grad_x(x_, w_, g_):
    return torch.func.vjp(torch.nn.functional.prelu, x_, w_)[1](g_)[0]


_, t = torch.func.jvp(grad_x, (x, w, g), (torch.zeros_like(x), torch.tensor([2.0], dtype=torch.float64), g))
print("torch prelu jvp of the vjp at x = 0, w = 0.25, tangents w 2, g 1:", t.item(), "exact (w g)' = 2 * 1 + 0.25 * 1 = 2.25")
