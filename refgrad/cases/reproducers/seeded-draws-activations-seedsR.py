"""Departures `refgrad run --ops activations --draws seeded --seed 3` (and seed 2) reached in regions
the known file's entries did not yet name (seedsR): each line prints a framework's value next to the
exact one (or, at NaN, next to the framework's own other kernel)."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import mpmath  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402

mpmath.mp.prec = 100
nan, inf = float("nan"), float("inf")

# PyTorch's CPU elu_backward at NaN depends on the element's position: its scalar loop takes the
# positive branch (x <= 0 is false for NaN: 1, and the double backward 0), its vectorised loop
# blends the exp branch in (nan). celu's second derivative, a NaN first of 16 (float64) or of 65
# (float16) elements: nan; of 2 elements: 0 (torch-elu-backward-at-nan-vectorised)
for n, dtype in ((2, torch.float64), (16, torch.float64), (65, torch.float16)):
    x = torch.tensor([nan] + [0.5] * (n - 1), dtype=dtype, requires_grad=True)
    (g,) = torch.autograd.grad(torch.nn.functional.celu(x, 2.0).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    print(f"torch celu'' at nan, first of {n} {str(dtype)[6:]}: {gg[0].item()}")

# PyTorch's in-place elu forms its forward-mode derivative from the result too (elu_'s JVP is
# elu_backward(is_result=True)): alpha (e^x - 1) + alpha cancels to 0 for x << 0
# (torch-inplace-elu-gradient-from-the-result-cancels)
x = torch.tensor([-58.59184628477378], dtype=torch.float64)
_, tangent = torch.func.jvp(lambda v: torch.nn.functional.elu(v * 1, 0.5, inplace=True), (x,), (torch.ones_like(x),))
exact = 0.5 * mpmath.exp(mpmath.mpf(-58.59184628477378))
print(f"torch F.elu(inplace=True) jvp float64 at -58.59, alpha 0.5: {tangent.item()} exact: {mpmath.nstr(exact, 8)}")


# TensorFlow's forward over forward of refgrad's prelu spelling tf.where(x > 0, x, m * x),
# m = tf.where(x > 0, 0, w): the second-order tangent of m * x is t1x t2w + t1w t2x whatever x is,
# but the ForwardAccumulator transposes mul's VJP, which reads x: 0 * inf = nan
# (tf-derivatives-at-non-numbers-seeded)
def prelu(x, w):
    return tf.where(x > 0, x, tf.where(x > 0, tf.zeros_like(x), w) * x)


x, w = tf.constant([-inf], tf.float64), tf.constant([0.25], tf.float64)
t1 = (tf.constant([1.126953125], tf.float64), tf.constant([-0.4873046875], tf.float64))
t2 = (tf.constant([-0.2025146484375], tf.float64), tf.constant([2.431869506835937e-05], tf.float64))
with tf.autodiff.ForwardAccumulator((x, w), t2) as outer:
    with tf.autodiff.ForwardAccumulator((x, w), t1) as inner:
        y = prelu(x, w)
    first = inner.jvp(y)
exact = 1.126953125 * 2.431869506835937e-05 + -0.4873046875 * -0.2025146484375
print(f"tf prelu jvp_jvp at x = -inf, w = 0.25: {outer.jvp(first).numpy()[0]} exact: {exact:.10g}")
