"""logcumsumexp's gradient grad_k = sum_{j >= k} g_j exp(x_k - r_j) is linear in the cotangent g, so its
derivative in g_j is exp(x_k - r_j) whatever g_j is. PyTorch's logcumsumexp_backward and TensorFlow's
gradient evaluate it in log space, exp(lcse(log|g| - r) + x): at a zero cotangent element the derivative
t / g of log|g| makes the second order nan; along a scan of one element it is 0 where the exact derivative
is exp(x_0 - r_0) = 1. JAX differentiates its scan and gets the exact value."""

import numpy as np

X, G = [0.0, 1.0, -0.5], [0.0, 1.0, 0.5]
r = np.log(np.cumsum(np.exp(X)))
print("exact d grad_0 / d g:", [float(v) for v in np.exp(X[0] - r)])

try:
    import torch

    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    g = torch.tensor(G, dtype=torch.float64, requires_grad=True)
    (gx,) = torch.autograd.grad(torch.logcumsumexp(x, 0), x, g, create_graph=True)
    (dg,) = torch.autograd.grad(gx[0], g)
    print("torch d grad_0 / d g:", dg.tolist())
    # forward over reverse (jvp_vjp), one element: 0 where the derivative of g -> grad is exactly 1
    vjp1 = lambda x1, g1: torch.func.vjp(lambda a: torch.logcumsumexp(a, 0), x1)[1](g1)[0]
    one = torch.func.jvp(vjp1, (torch.tensor([0.4589], dtype=torch.float64), torch.zeros(1, dtype=torch.float64)),
                         (torch.zeros(1, dtype=torch.float64), torch.ones(1, dtype=torch.float64)))[1]
    print("torch forward over reverse, one element, g = 0 (exact 1.0):", one.tolist())
except ImportError:
    print("torch not installed")

try:
    import tensorflow as tf

    x = tf.constant(X, tf.float64)
    g = tf.constant(G, tf.float64)
    with tf.GradientTape() as outer:
        outer.watch(g)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.math.cumulative_logsumexp(x, 0)
        gx = inner.gradient(y, x, output_gradients=g)[0]
    print("tensorflow d grad_0 / d g:", outer.gradient(gx, g).numpy().tolist())
    x1, g1 = tf.constant([0.4589], tf.float64), tf.zeros([1], tf.float64)
    with tf.autodiff.ForwardAccumulator(g1, tf.ones([1], tf.float64)) as acc:
        with tf.GradientTape() as inner:
            inner.watch(x1)
            y1 = tf.math.cumulative_logsumexp(x1, 0)
        gx1 = inner.gradient(y1, x1, output_gradients=g1)
    print("tensorflow forward over reverse, one element, g = 0 (exact 1.0):", acc.jvp(gx1).numpy().tolist())
except ImportError:
    print("tensorflow not installed")

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def grad_0(g):
        return jax.vjp(lambda z: jax.lax.cumlogsumexp(z, axis=0), jnp.array(X))[1](g)[0][0]

    print("jax d grad_0 / d g:", [float(v) for v in jax.grad(grad_0)(jnp.array(G))])
except ImportError:
    print("jax not installed")
