"""logcumsumexp's gradient grad_k = sum_{j >= k} g_j exp(x_k - r_j) is linear in the cotangent g, so its
derivative in g_j is exp(x_k - r_j) whatever g_j is. PyTorch's logcumsumexp_backward and TensorFlow's
gradient evaluate it in log space, exp(lcse(log|g| - r) + x): at a zero cotangent element the derivative
t / g of log|g| makes the second order nan. JAX differentiates its scan and gets the exact value."""

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
