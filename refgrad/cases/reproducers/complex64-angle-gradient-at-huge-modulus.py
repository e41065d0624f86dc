"""The gradient of angle(z) is i z / |z|^2 (PyTorch's convention): at z = 3e19 + 4e19j (complex64)
it is about -1.6e-20 + 1.2e-20j, representable in float32, but |z|^2 = 2.5e39 overflows float32, so
z / |z|^2 becomes 0 in PyTorch (angle_backward: grad * self / self.abs().pow(2)) and in JAX;
TensorFlow's complex64 gradient is the value."""

import torch

z = torch.tensor([3e19 + 4e19j], dtype=torch.complex64, requires_grad=True)
torch.angle(z).backward(torch.ones(1))
print("torch complex64 grad", z.grad.tolist())
w = torch.tensor([3e19 + 4e19j], dtype=torch.complex128, requires_grad=True)
torch.angle(w).backward(torch.ones(1))
print("torch complex128 grad", w.grad.tolist())
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    grad = jnp.conj(jax.grad(jnp.angle)(jnp.complex64(3e19 + 4e19j)))  # in PyTorch's convention
    print("jax complex64 grad", complex(grad))
except ImportError:
    pass
