"""jax.scipy.special.hyp2f1 (JAX 0.10.2) does not return where an element of a is infinite.

hyp2f1 picks its method per element with lax.select_n, which computes every branch for every
element; one branch is the terminating series of a nonpositive integer a, a lax.fori_loop from 1 to
|a| + 1 counted in a's dtype. At |a| = inf the count never ends (nor where i + 1 == i first: 2^8 in
bfloat16, 2^11 in float16, 2^24 in float32), whichever method the element takes. The mathematics:
an infinite upper parameter has no value (the reference gives nan). A finite a returns at once."""

import os
import threading

import jax
import jax.numpy as jnp
from jax.scipy.special import hyp2f1

jax.config.update("jax_enable_x64", True)
print("hyp2f1(0.5, 0.8, 1.5, 0.45):", float(hyp2f1(0.5, 0.8, 1.5, 0.45)), flush=True)
result = []
worker = threading.Thread(target=lambda: result.append(float(hyp2f1(jnp.inf, 0.8, 1.5, 0.45))), daemon=True)
worker.start()
worker.join(30.0)
print("hyp2f1(inf, 0.8, 1.5, 0.45):", result[0] if result else "no result after 30 s", flush=True)
os._exit(0)  # the loop is still running: end without waiting for it
