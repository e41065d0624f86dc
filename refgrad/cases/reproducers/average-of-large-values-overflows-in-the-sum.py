"""Averages whose sum overflows the dtype: the mean of finite values is finite (here 3e38, within
float32's 3.4e38), but PyTorch, JAX and TensorFlow sum in the input's dtype (float32, or float32
accumulation for bfloat16) before dividing, so the result is inf. Each line prints the framework's
value next to the exact one."""

import numpy as np

big = np.float32(3e38)
x = np.full((1, 1, 2, 2, 2), big, dtype=np.float32)
exact = float(big)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

t = torch.from_numpy(x)
print("torch adaptive_avg_pool3d:", F.adaptive_avg_pool3d(t, 1).flatten().tolist(), "exact:", exact)
print("torch avg_pool2d:", F.avg_pool2d(t[0], 2).flatten().tolist(), "exact:", exact)
print("torch mean:", torch.mean(t).item(), "exact:", exact)
print("torch bfloat16 adaptive_avg_pool2d:", F.adaptive_avg_pool2d(t[0].bfloat16(), 1).float().flatten().tolist(), "exact:", exact)

import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

j = jnp.asarray(x[0, 0])
print("jax mean:", float(jnp.mean(j)), "exact:", exact)
print("jax reduce_window / 8:", float((lax.reduce_window(j, 0.0, lax.add, (2, 2, 2), (2, 2, 2), "VALID") / 8).ravel()[0]), "exact:", exact)

import tensorflow as tf  # noqa: E402

xt = np.transpose(x, (0, 2, 3, 4, 1))  # channels last
print("tf avg_pool3d:", tf.nn.avg_pool3d(xt, 2, 2, "VALID").numpy().ravel().tolist(), "exact:", exact)
print("tf reduce_mean:", float(tf.reduce_mean(xt)), "exact:", exact)
