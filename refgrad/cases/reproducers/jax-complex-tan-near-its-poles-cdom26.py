"""JAX's complex tan next to its real poles +-pi/2 (cdom26): the imaginary part of tan(z) is off by ~10%
where PyTorch and TensorFlow give the exact value (mpmath)."""

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402

mpmath.mp.dps = 50
for dtype, z in (("complex64", complex(1.5707963705062866, 7.490140774280007e-07)),
                 ("complex128", complex(1.5707963267948966, 1.3951473992034527e-15))):  # fmt: skip
    j = complex(jnp.tan(jnp.asarray(z, dtype=dtype)))
    t = complex(torch.tan(torch.tensor(z, dtype=getattr(torch, dtype))))
    f = complex(tf.math.tan(tf.constant(z, dtype=getattr(tf, dtype))).numpy())
    exact = complex(mpmath.tan(mpmath.mpc(np.real(z), np.imag(z))))
    print(f"tan {dtype} at {z!r}: imaginary part jax {j.imag:.7g} torch {t.imag:.7g} tensorflow {f.imag:.7g} exact {exact.imag:.7g}")
