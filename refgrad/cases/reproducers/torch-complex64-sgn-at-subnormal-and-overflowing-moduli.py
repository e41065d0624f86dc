"""PyTorch's complex64 sgn, z / |z|, is wrong in every kernel (a tensor of 1 and of 9 elements alike)
where |z| is subnormal, and 0 where |z| overflows float32 though z is finite (torch 2.13.0); the exact
value is a unit complex number. abs's JVP, Re(conj(sgn z) t), inherits the subnormal case."""

import torch

for z in (complex(1e-40, -1e-40), complex(0.0, -1e-45), complex(3e38, -3e38)):
    for n in (1, 9):
        s = torch.sgn(torch.full((n,), z, dtype=torch.complex64))[0].item()
        print(f"torch complex64 sgn({z!r}) in a tensor of {n}: {s!r}, exact {z / abs(z)!r}")
x = torch.full((1,), complex(1e-40, -1e-40), dtype=torch.complex64)
t = torch.full((1,), complex(1.0, 0.0), dtype=torch.complex64)
_, jvp = torch.func.jvp(torch.abs, (x,), (t,))
print(f"torch complex64 abs JVP at z = (1e-40-1e-40j), t = 1: {jvp.item()!r}, exact {2 ** -0.5!r}")
