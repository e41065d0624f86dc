"""The derivatives of xlogy at an infinite argument (float64), where PyTorch's formulas (x / y,
log y) give an infinity and JAX's and TensorFlow's give nan (or the other way round): jax.grad of
xlogy in y at x = -inf, y = 1.8e308 is nan where torch's is -inf (x / y); TensorFlow's forward over
reverse at y = inf is nan where the reference (PyTorch's chain rule) is an infinity."""

import jax
import numpy as np
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)
import jax.scipy.special as jsp  # noqa: E402 (after jax_enable_x64)
import tensorflow as tf  # noqa: E402 (after jax_enable_x64)

x, y = -np.inf, 1.7976931348623157e308
xt, yt = (
    torch.tensor(x, dtype=torch.float64, requires_grad=True),
    torch.tensor(y, dtype=torch.float64, requires_grad=True),
)
print("torch grad_other:", torch.autograd.grad(torch.xlogy(xt, yt), yt)[0].item())
print("jax   grad_other:", float(jax.grad(jsp.xlogy, argnums=1)(jnp.float64(x), jnp.float64(y))))
xv, yv = tf.Variable(np.float64(0.7122812334588127)), tf.Variable(np.float64(np.inf))
with tf.autodiff.ForwardAccumulator(
    [xv, yv], [tf.constant(np.float64(1.0)), tf.constant(np.float64(0.1323017016886197))]
) as acc:
    with tf.GradientTape() as tape:
        z = tf.math.xlogy(xv, yv)
    g = tape.gradient(z, xv, output_gradients=tf.constant(np.float64(-1.3890337620263016)))
print("tf    jvp of grad_input at y = inf:", acc.jvp(g).numpy())
