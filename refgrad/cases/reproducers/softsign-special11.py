"""What `refgrad run --ops softsign --draws seeded --seed 1 --known builtin` (special11) reached that
no earlier entry described; each line prints the framework's number beside the exact one."""

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
import torch

jax.config.update("jax_enable_x64", True)

# softsign'(x) = 1/(1 + |x|)^2, whose limit at +-inf is 0: TensorFlow's SoftsignGrad gives the
# limit, PyTorch's composite x / (1 + |x|) (DivBackward0: 1/(1 + |x|) - x·sgn(x)/(1 + |x|)^2)
# inf/inf = nan (softsign-d2c1020b3d74, float32 'nonfinite')
x = tf.Variable([np.inf, -np.inf], dtype=tf.float32)
with tf.GradientTape() as tape:
    y = tf.math.softsign(x)
tf_grad = tape.gradient(y, x, output_gradients=tf.constant([0.5, 0.5])).numpy().tolist()
xt = torch.tensor([np.inf, -np.inf], requires_grad=True)
(torch_grad,) = torch.autograd.grad(torch.nn.functional.softsign(xt), xt, torch.tensor([0.5, 0.5]))
print(f"tf softsign gradient at +-inf: {tf_grad} torch: {torch_grad.tolist()} limit: [0.0, 0.0]")

# jax.nn.soft_sign is x / (|x| + 1) differentiated by JAX's div rule, whose divisor term
# x·t / y^2 squares y = 1 + |x|: in float16 y^2 overflows (65504) for |x| > 254.9, the term is 0,
# and the derivative is 1/(1 + |x|) where it is 1/(1 + |x|)^2 (softsign-5bc2864f93b9, jvp_vjp
# 'wide', x = 555.5: the tangent-cotangent 0.71 times the first derivative)
d1 = float(jax.grad(jax.nn.soft_sign)(jnp.float16(555.5)))
print(f"jax soft_sign derivative float16 at 555.5: {d1:.4g} exact: {1 / 556.5**2:.4g}")

# at a negative float32 subnormal XLA:CPU reads -0 and JAX's abs JVP select(x >= 0, t, -t) takes
# +t (jax-abs-gradient-at-flushed-subnormal): softsign''(x) = -2·sgn(x)/(1 + |x|)^3 comes out
# with the wrong sign (softsign-1c0d0059c08b, jvp_vjp 'tiny')
x = jnp.float32(-1e-39)
d2 = float(jax.grad(jax.grad(jax.nn.soft_sign))(x))
print(f"jax soft_sign second derivative float32 at -1e-39: {d2} exact: 2.0")
