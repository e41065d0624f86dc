"""PyTorch's pow backward for the base is masked where the exponent is 0 (exponent == 0 ? 0 :
grad * y * x**(y - 1)), so its derivative with respect to the exponent is 0 there, where the exact
mixed derivative d2(x**y)/dxdy = x**(y - 1)(1 + y log x) is 1/x. Prints PyTorch's value at
(x, y) = (0.3, 0) next to the exact 1/x (JAX and TensorFlow give 1/x)."""

import torch

x = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
y = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
(gx,) = torch.autograd.grad(x**y, x, create_graph=True)
(gxy,) = torch.autograd.grad(gx, y)
print(f"d2(x**y)/dxdy at (0.3, 0): {gxy.item()}; exact 1/x: {1 / 0.3}")
