"""JAX's jax.scipy.special.rel_entr at a NaN argument: neither of its cases (x > 0 and y > 0; x = 0
and y >= 0) holds, so its where gives the 'otherwise' inf; scipy's rel_entr and the mathematics
give nan."""

import math

import scipy.special
from jax.scipy.special import rel_entr

print("rel_entr(nan, 1): jax", float(rel_entr(math.nan, 1.0)), "scipy", scipy.special.rel_entr(math.nan, 1.0))
print("rel_entr(1, nan): jax", float(rel_entr(1.0, math.nan)), "scipy", scipy.special.rel_entr(1.0, math.nan))
