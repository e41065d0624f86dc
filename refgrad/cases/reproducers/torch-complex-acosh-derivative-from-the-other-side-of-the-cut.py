"""On acosh's cut between -1 and 1, acosh(x - 0j) is the value from below (-1.0472j at x = 0.5:
C99's cacosh, NumPy, PyTorch's own forward); its derivative there is the limit from below,
i / sqrt(1 - x^2) = +1.1547j (central differences at 0.5 - 1e-9 j). PyTorch's derivatives are the
ones from above: torch.func.jvp gives -1.1547j and the VJP of 1 (conj(f') in PyTorch's convention,
-1.1547j) gives +1.1547j. TensorFlow's VJP and the reference follow the value's side."""

import torch

z = torch.tensor([complex(0.5, -0.0)], dtype=torch.complex128)
print("torch.acosh(0.5 - 0j) =", torch.acosh(z).item())
print("torch.func.jvp tangent =", torch.func.jvp(torch.acosh, (z,), (torch.ones_like(z),))[1].item(), "(exact: +1.1547j)")
fd = (torch.acosh(z - 1e-9j) - torch.acosh(z - 2e-9j)) / 1e-9j  # one-sided, below the cut
print("difference quotient below the cut =", fd.item())
