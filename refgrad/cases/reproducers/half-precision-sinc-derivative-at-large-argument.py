"""The derivative of sinc in float16 and bfloat16 at a large argument: PyTorch, JAX and TensorFlow
evaluate sinc'(x) = (pi x cos(pi x) - sin(pi x)) / (pi x^2) with pi x rounded to the dtype, whose
rounding error (up to half an ulp of pi x: 8 at pi x = 3192 in bfloat16, 1 at 3145 in float16) moves
the angle by radians; the exact derivative at an integer n is cos(pi n) / n. In float32 all three
give it (-0.000999001 at 1001)."""

import jax
import jax.numpy as jnp
import tensorflow as tf
import tensorflow.experimental.numpy as tnp
import torch

for dtype, x in (("bfloat16", 1016.0), ("float16", 1001.0)):
    exact = (-1.0) ** int(x) / x  # sinc'(n) = cos(pi n) / n at an integer n
    t = torch.tensor(x, dtype=getattr(torch, dtype))
    _, d_torch = torch.func.jvp(torch.sinc, (t,), (torch.ones_like(t),))
    d_jax = jax.grad(jnp.sinc)(jnp.asarray(x, dtype=getattr(jnp, dtype)))
    line = f"{dtype} x = {x:g}: torch {float(d_torch):.3g}, jax {float(d_jax):.3g}"
    if dtype == "float16":  # (tnp.sinc raises on bfloat16: entry tf-numpy-bfloat16-astype)
        v = tf.Variable(tf.constant(x, tf.float16))
        with tf.GradientTape() as tape:
            y = tnp.sinc(v)
        line += f", tf {float(tape.gradient(y, v)):.3g}"
    print(f"{line}, exact {exact:.6g}")
