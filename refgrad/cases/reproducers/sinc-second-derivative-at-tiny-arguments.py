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

# float16: its special points 6e-8 and 6.1e-5 (the smallest subnormal and normal) square to 0, so the
# cotangent's derivative of sinc_backward, num / (pi x x), is 0/0 (its exact value: sinc'(x) = -pi^2 x / 3)
for x0 in (6.103515625e-05, 5.960464477539063e-08):
    x = torch.tensor([x0], dtype=torch.float16, requires_grad=True)
    g = torch.ones(1, dtype=torch.float16, requires_grad=True)
    (gx,) = torch.autograd.grad(torch.sinc(x), x, g, create_graph=True)
    (dg,) = torch.autograd.grad(gx.sum(), g)
    print(f"x = {x0:.5g} float16: torch d/dg of g sinc' {dg.item()} (pi x x = {(x * x * math.pi).item()}); exact {-math.pi**2 * x0 / 3:.4g}")
