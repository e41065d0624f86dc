"""PyTorch's float64 bessel_j0, bessel_j1, bessel_y0 and bessel_y1 (CPU) are accurate to about
1e-7 absolute on 4 < x < 10 and 1e-11 by x = 25, where float64's rounding is 1e-17: at x = 5.05
bessel_j0 is off by 3.5e-7 (2.2e9 ulps). TensorFlow's tf.math.special.bessel_j0 (the same Cephes
algorithm) is within a few ulps. Prints each error against mpmath (30 digits)."""

import mpmath
import torch

mpmath.mp.dps = 30
for name, exact in (
    ("bessel_j0", lambda x: mpmath.besselj(0, x)),
    ("bessel_j1", lambda x: mpmath.besselj(1, x)),
    ("bessel_y0", lambda x: mpmath.bessely(0, x)),
    ("bessel_y1", lambda x: mpmath.bessely(1, x)),
):
    x = 5.05
    got = getattr(torch.special, name)(torch.tensor(x, dtype=torch.float64)).item()
    print(f"torch.special.{name}({x}) float64 off by {float(abs(got - exact(x))):.2e}")
