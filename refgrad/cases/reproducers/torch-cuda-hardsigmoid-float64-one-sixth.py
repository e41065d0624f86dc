"""PyTorch's CUDA hardsigmoid and hardswish multiply by 1/6 rounded to float32, in float64 too.

aten/src/ATen/native/cuda/ActivationHard{sigmoid,swish}Kernel.cu: `const opmath_t one_sixth(1.0f / 6.0f)`:
the quotient is a float before it becomes a double, 1/6 * (1 + 2.98e-8). Run on a machine with CUDA."""

import torch

if not torch.cuda.is_available():
    raise SystemExit("no CUDA device here: this departure is in PyTorch's CUDA kernels")

x = torch.tensor([0.5, -1e-6, 2.0], dtype=torch.float64)
F = torch.nn.functional
print("torch", torch.__version__, torch.cuda.get_device_name())
for name, fn, exact in (
    ("hardsigmoid", F.hardsigmoid, (x + 3) / 6),
    ("hardswish", F.hardswish, x * (x + 3) / 6),
):
    y = fn(x.cuda()).cpu()
    print(f"{name} float64 cuda/exact - 1 = {((y / exact) - 1).abs().max().item():.3g}")  # 0 would be exact
g = torch.ones(3, dtype=torch.float64, device="cuda")
xc = x.cuda().requires_grad_()
(d,) = torch.autograd.grad(F.hardsigmoid(xc), xc, g)
print(f"hardsigmoid' float64 cuda * 6 - 1 = {(d.cpu() * 6 - 1).abs().max().item():.3g}")
print(f"float32(1/6) * 6 - 1 = {torch.tensor(1 / 6, dtype=torch.float32).double().item() * 6 - 1:.3g}")
