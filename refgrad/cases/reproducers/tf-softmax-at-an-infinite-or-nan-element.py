"""softmax of a column holding +inf or nan: PyTorch and JAX (and the reference, PyTorch's
convention) give nan in every element of the column (x - max(x) is inf - inf = nan at the +inf, and
the sum of the exponentials is nan); TensorFlow's kernel gives nan only at the +inf or nan element
and 0 at the finite ones."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
import torch

for label, column in (("+inf", [-2.035, np.inf, -1.353, -0.755]), ("nan", [-2.035, np.nan, -1.353])):
    x = np.array(column, dtype=np.float32)
    t = tf.nn.softmax(tf.constant(x), axis=0).numpy()
    p = torch.softmax(torch.tensor(x), 0).numpy()
    j = np.asarray(jax.nn.softmax(jnp.asarray(x), axis=0))
    print(f"softmax float32 of a column with {label}: tensorflow {t.tolist()}, torch {p.tolist()}, jax {j.tolist()}")
