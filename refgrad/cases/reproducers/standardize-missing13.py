"""What `refgrad run --ops standardize --draws seeded --seed 1 --known builtin` (missing13) reached
that no earlier entry described: JAX's float16 standardize squares in float16."""

import jax
import jax.numpy as jnp

# the variance squares x ("fast": E[x²] - E[x]²) or x - E[x] ("stable") in the input's dtype, and
# 529.5² = 280370 overflows float16 (65504): the fast variance is inf - inf = nan; the exact
# standardization of [529.5, 540] with epsilon 0.5 is [-0.99106, 0.99106] (variance 27.5625)
x = jnp.array([529.5, 540.0], jnp.float16)
for algorithm in ("fast", "stable"):
    y, vjp = jax.vjp(lambda v: jax.nn.standardize(v, epsilon=0.5, algorithm=algorithm), x)
    print(f"jax standardize([529.5, 540.0], epsilon=0.5, algorithm={algorithm!r}) float16: {y.tolist()}, "
          f"vjp of [1, 0]: {vjp(jnp.array([1.0, 0.0], jnp.float16))[0].tolist()}")
wide = jnp.array([0.0535, 14416.0], jnp.float16)  # (x - mean)² = 7208² overflows in the stable form too
print(f"jax standardize([0.0535, 14416.0], algorithm='stable') float16: "
      f"{jax.nn.standardize(wide, epsilon=0.5, algorithm='stable').tolist()} (exact [-1.0, 1.0] to 8e-9)")
