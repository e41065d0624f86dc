"""Inductor's compiled backward of torch.linalg.qr's Q on a complex matrix differs from eager's
(aot_eager, the same graphs run by eager kernels, agrees with eager; real matrices agree; R alone
agrees)."""
import numpy as np
import torch

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
g = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))


def q(x):
    return torch.linalg.qr(x)[0]


def gradient(fn, a, g):
    x = torch.tensor(a, requires_grad=True)
    return torch.autograd.grad(fn(x), x, torch.tensor(g))[0].numpy()


for name, a, gq in [("complex128", A, g), ("float64", A.real.copy(), g.real.copy())]:
    eager = gradient(q, a, gq)
    for backend in ("aot_eager", "inductor"):
        got = gradient(torch.compile(q, backend=backend), a, gq)
        print(f"{name} {backend}: same as eager: {np.allclose(got, eager, rtol=1e-10)} (max |diff| {np.abs(got - eager).max():.3g})")
