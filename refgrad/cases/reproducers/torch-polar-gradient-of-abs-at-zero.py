"""d polar(abs, angle) / d abs = e^{i angle}, so the gradient of abs is Re(conj(g) e^{i angle}): with
g = 1 and angle = 0.5 it is cos(0.5) = 0.8776 at every abs >= 0. PyTorch's polar_backward writes
e^{i angle} as result.sgn(), which is 0 at abs = 0 and nan at a subnormal abs (float32 1e-40)."""

import torch

r = torch.tensor([0.0, 1e-40, 2.0], requires_grad=True)
angle = torch.tensor([0.5, 0.5, 0.5])
torch.polar(r, angle).backward(torch.ones(3, dtype=torch.complex64))
print(
    "torch grad of abs at 0, 1e-40, 2:", r.grad.tolist(), "cos(0.5) =", round(torch.cos(angle[0]).item(), 4)
)
