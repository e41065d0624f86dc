"""PyTorch's atan2 and hypot derivatives at extreme magnitudes. atan2's gradient is
other / (self² + other²) (derivatives.yaml): self² + other² overflows past 1.3e154 (the gradient
comes out 0) and underflows below 1.5e-154 (inf, or nan in the second derivative), where the exact
partials are ordinary numbers; in float16 the second derivative's recip² overflows once
self² + other² < 0.004. hypot's second derivative, autograd of self / result, is
1/r - self²/r³: r³ overflows past 5.6e102 and the difference cancels where other << self. The exact
values (mpmath, 50 digits) at the float inputs: atan2_a = b / (a² + b²), atan2_aa = -2ab / (a² + b²)²,
hypot_aa = b² / (a² + b²)^(3/2)."""

import mpmath
import torch

mpmath.mp.dps = 50


def derivatives(fn, a, b, dtype):
    x = torch.tensor([a], dtype=dtype, requires_grad=True)
    y = torch.tensor([b], dtype=dtype)
    (d1,) = torch.autograd.grad(fn(x, y).sum(), x, create_graph=True)
    (d2,) = torch.autograd.grad(d1.sum(), x)
    return d1.item(), d2.item()


departs = []
for a, b in ((1e200, 3e200), (3e-160, 4e-160)):
    got = derivatives(torch.atan2, a, b, torch.float64)[0]
    exact = mpmath.mpf(b) / (mpmath.mpf(a) ** 2 + mpmath.mpf(b) ** 2)
    print(f"torch atan2 d/da at ({a}, {b}) float64: {got!r}, exact {mpmath.nstr(exact, 17)}")
    departs.append(abs(got - exact) > 1e-3 * abs(exact))
a, b = -0.00813, 0.0329  # float16 inputs (rounded below)
a16, b16 = (float(torch.tensor(v, dtype=torch.float16)) for v in (a, b))
got = derivatives(torch.atan2, a16, b16, torch.float16)[1]
exact = -2 * mpmath.mpf(a16) * b16 / (mpmath.mpf(a16) ** 2 + mpmath.mpf(b16) ** 2) ** 2
print(f"torch atan2 d2/da2 at ({a16}, {b16}) float16: {got!r}, exact {mpmath.nstr(exact, 8)}")
departs.append(abs(got - exact) > 1e-2 * abs(exact))
a, b = 1e103, 1e50
got = derivatives(torch.hypot, a, b, torch.float64)[1]
exact = mpmath.mpf(b) ** 2 / (mpmath.mpf(a) ** 2 + mpmath.mpf(b) ** 2) ** 1.5
print(f"torch hypot d2/da2 at ({a}, {b}) float64: {got!r}, exact {mpmath.nstr(exact, 17)}")
departs.append(abs(got - exact) > 1e-3 * max(abs(exact), 1e-300))
print("departs:", all(departs))
