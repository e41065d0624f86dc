"""sinc's second derivative (and TensorFlow's first) at the tiny arguments values 'special' draws (the
smallest subnormal and normal numbers), where sinc'' = -pi^2/3 and sinc' = -pi^2 x/3: PyTorch's and
TensorFlow's formulas divide by x^2, which underflows (0 or nan)."""

import math

import tensorflow as tf
import torch

for x0 in (5e-324, 1e-200, 1e-100):
    x = torch.tensor([x0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.sinc(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    t = tf.Variable([x0], dtype=tf.float64)
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.experimental.numpy.sinc(t)
        g1 = inner.gradient(y, t)
    g2 = outer.gradient(g1, t)
    print(f"x = {x0:g} float64: torch sinc'' {gg.item()}, tf sinc' {g1.numpy()[0]} sinc'' {g2.numpy()[0]}; exact sinc'' {-math.pi**2 / 3:.6f}")
