"""Departures `refgrad run --draws seeded --seed 1` reached in the families first run at seed 1 by
seedsI (linalg_solve, shape_ops, sampling, pooling, losses, distance, misc, sorting, masked): each
line prints what the framework computes next to the exact value."""

import numpy as np
import torch

f64 = torch.float64

# PyTorch's linalg_det gradient under torch.func is the SVD branch, accurate only normwise: for a 2 x 2
# matrix the gradient is the cofactor matrix [[d, -c], [-b, a]], exactly a[0, 0] at [1, 1]
a = np.array([[6.134226888762388e-04, 1.18726951223870e03], [1.01607196568012e03, 1.6476843784481504e-01]])
x = torch.tensor(a, requires_grad=True)
(eager,) = torch.autograd.grad(torch.linalg.det(x), x)
grad = torch.func.vjp(torch.linalg.det, torch.tensor(a))[1]
func = grad(torch.tensor(1.0, dtype=f64))[0]
# forward over reverse (the jvp_vjp check) differentiates the same backward; its primal is the gradient
in_jvp = torch.func.jvp(lambda q: torch.func.vjp(torch.linalg.det, q)[1](torch.tensor(1.0, dtype=f64))[0],
                        (torch.tensor(a),), (torch.zeros(2, 2, dtype=f64),))[0]
print(
    f"torch det gradient [1, 1] float64 (cond {np.linalg.cond(a):.2f}): eager {eager[1, 1].item()!r},"
    f" torch.func.vjp {func[1, 1].item()!r}, inside torch.func.jvp {in_jvp[1, 1].item()!r}, exact {float(a[0, 0])!r}"
)

# TensorFlow's bilinear resize: image_grad.py registers NotDifferentiable('ResizeBilinearGrad'), so every
# derivative taken through its gradient is silently zero; the resize is linear, and the forward over
# reverse (d/ds of the gradient at x + s t1 for the cotangent c + s tc) is the gradient for tc
import tensorflow as tf  # noqa: E402 (after the PyTorch lines, which need only torch)

x = tf.constant([[[[1.0], [2.0], [3.0]]]], tf.float32)  # NHWC, 1 x 1 x 3 x 1
c = tf.constant(np.random.RandomState(0).randn(1, 2, 6, 1).astype(np.float32))
tc = tf.constant(np.random.RandomState(1).randn(1, 2, 6, 1).astype(np.float32))
for name, resize in (
    ("tf.image.resize bilinear", lambda q: tf.image.resize(q, (2, 6), method="bilinear", antialias=False)),
    ("resize_bilinear align_corners", lambda q: tf.compat.v1.image.resize_bilinear(q, (2, 6), align_corners=True)),
):
    with tf.autodiff.ForwardAccumulator((x, c), (tf.ones_like(x), tc)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = resize(x)
        g = tape.gradient(y, x, output_gradients=c)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = resize(x)
    exact = [round(float(v), 4) for v in tape.gradient(y, x, output_gradients=tc).numpy().ravel()]
    print(f"tf {name} float32 forward over reverse: {acc.jvp(g)} (zero), exact {exact}")

# TensorFlow's float16 forward mode over the power x**3.0 at a subnormal base is nan: the tie elements of
# pnorm's a - b + 1e-6 are float16's subnormal 1.013e-6, where d/dx of the JVP 3 x^2 t is 6 x t (6.1e-6)
x = tf.constant([1e-6, 0.5], tf.float16)
t = tf.ones_like(x)
with tf.GradientTape() as tape:
    tape.watch(x)
    with tf.autodiff.ForwardAccumulator(x, t) as acc:
        y = x**3.0
    jvp = acc.jvp(y)
print(f"tf x**3.0 float16 reverse over forward at [1e-6, 0.5]: {tape.gradient(jvp, x).numpy().tolist()}, exact [6.1e-06, 3.0]")
with tf.autodiff.ForwardAccumulator(x, t) as outer:
    with tf.autodiff.ForwardAccumulator(x, t) as inner:
        y = x**3.0
    jvp = inner.jvp(y)
print(f"tf x**3.0 float16 forward over forward at [1e-6, 0.5]: {outer.jvp(jvp).numpy().tolist()}, exact [6.1e-06, 3.0]")
