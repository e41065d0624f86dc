"""The derivative of angle(z) is i z / |z|^2 = i / conj(z) (PyTorch's convention), finite for every
z != 0: at z = 3e-160 + 4e-160j (complex128) it is -1.6e159 + 1.2e159j, and at z = -3.2e-38j
(complex64) it is 3.1e37 (real); the JVP along 1, Im(1 / z), is -1.6e159 and 3.1e37. But
|z|^2 underflows to 0 below the square root of the smallest normal (|z| < 1.5e-154 in complex128,
1.1e-19 in complex64), and PyTorch's angle_backward (grad * self / self.abs().pow(2)) and its JVP
give nan; JAX's gradient is -inf+infj and its JVP nan. TensorFlow's gives the values.
The overflow side (|z|^2 > the largest float) is the entries ...-angle-gradient-overflows-the-squared-modulus."""

import torch

for dtype, value in ((torch.complex128, 3e-160 + 4e-160j), (torch.complex64, -3.2e-38j)):
    z = torch.tensor([value], dtype=dtype, requires_grad=True)
    (grad,) = torch.autograd.grad(torch.angle(z), z, torch.ones(1, dtype=z.real.dtype))
    tangent = torch.func.jvp(torch.angle, (z.detach(),), (torch.ones(1, dtype=dtype),))[1]
    print(f"torch {dtype} angle at {value}: grad {complex(grad[0])}, jvp along 1 {float(tangent[0])}")
    print(f"  exact: grad {1j / complex(value).conjugate()}, jvp {(1 / complex(value)).imag}")
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    z = jnp.asarray([3e-160 + 4e-160j])
    grad = jnp.conj(jax.grad(lambda w: jnp.angle(w).sum())(z))  # in PyTorch's convention
    tangent = jax.jvp(jnp.angle, (z,), (jnp.asarray([1 + 0j]),))[1]
    print(f"jax complex128 angle at (3e-160+4e-160j): grad {complex(grad[0])}, jvp along 1 {float(tangent[0])}")
except ImportError:
    pass
