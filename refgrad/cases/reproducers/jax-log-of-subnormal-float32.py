"""JAX's jitted float32 log of a positive subnormal is -103.97208 = log(2^-150) in some positions of
an array (the vectorised kernel) and -inf (the flushed reading, accepted) in others: neither is
the true value log(x), about -87.3 to -103.3. Exact value: math.log of the float32-exact input."""

import math

import jax
import numpy as np
from jax import lax

x = np.array([2.1, 1.65, 1.38, 0.765, 1.53, 2.88e-38, 0.148, 5.1e-39, 0.153, 0.249, 7.23e-39, 1.84e-38,
              0.433, 1.106e-40, 6.67e-39], dtype=np.float32)
out = np.asarray(jax.jit(lax.log)(x))
bad = [(float(v), float(o), math.log(float(v))) for v, o in zip(x, out) if 0 < v < 2.0**-126 and o > -np.inf
       and abs(o - math.log(float(v))) > 1e-3]
for v, o, e in bad:
    print(f"jax.jit(lax.log) at subnormal {v:.6g}: {o} (exact {e:.8g})")
print("subnormal log is log(2^-150):", any(abs(o + 103.97208) < 1e-4 for _, o, _ in bad))
