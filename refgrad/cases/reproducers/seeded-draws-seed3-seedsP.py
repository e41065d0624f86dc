"""What `refgrad run --ops pointwise --draws seeded --seed 3 --known builtin` (seedsP) reached that no
earlier entry described; each line prints the framework's number beside the exact one (mpmath)."""

import jax
import jax.numpy as jnp
import mpmath as mp
import numpy as np
import torch

jax.config.update("jax_enable_x64", True)
mp.mp.dps = 40

# acosh'(x) = 1/sqrt(x^2 - 1): in float16 x^2 overflows for x > 255.9 (65504), so the derivative is
# 1/sqrt(inf) = 0 where it is 1/x (acosh-e8ac8eca0146, jvp, x = 297, tangent 0.4705)
t = 0.470458984375
exact = mp.nstr(t / mp.sqrt(mp.mpf(297) ** 2 - 1), 6)
x16 = torch.tensor(297.0, dtype=torch.float16)
torch_jvp = torch.func.jvp(torch.acosh, (x16,), (torch.tensor(t, dtype=torch.float16),))[1].item()
print(f"torch acosh jvp float16 at 297: {torch_jvp} exact: {exact}")
jax_jvp = float(jax.jvp(jnp.arccosh, (jnp.float16(297.0),), (jnp.float16(t),))[1])
print(f"jax acosh jvp float16 at 297: {jax_jvp} exact: {exact}")

# XLA's float64 cosh: 14 ulps at x = 33.1447438344495 (cosh-de12e7e61b05, vmap)
v = 33.1447438344495
print(f"jax cosh float64 at {v}: {float(jnp.cosh(jnp.float64(v))):.17g} exact: {mp.nstr(mp.cosh(mp.mpf(v)), 20)}")

# PyTorch's vectorised float32/bfloat16 sinh and cosh form exp(x) and overflow for x > 88.72,
# where sinh and cosh stay finite up to 89.41 (float32 max 3.4028e38); a lone element takes the
# scalar path and is right (sinh-e87a328a8e30, reverse over forward in bfloat16 at x = 89)
for dtype in (torch.float32, torch.bfloat16):
    vec = torch.sinh(torch.full((64,), 89.0, dtype=dtype))[0].item()
    one = torch.sinh(torch.tensor(89.0, dtype=dtype)).item()
    print(f"torch sinh {str(dtype)[6:]} at 89.0, a 64-vector: {vec} one element: {one:.6g} exact: {mp.nstr(mp.sinh(89), 6)}")

# PyTorch's addcmul backward is grad * (tensor2 * value): the product overflows before the
# cotangent scales it (addcmul-c31ec328e5c6, vjp_vjp float64 'special', value 2)
t1 = torch.tensor([-2.1267981365497843], dtype=torch.float64, requires_grad=True)
t2 = torch.tensor([-1.7976931348623157e308], dtype=torch.float64)
a = torch.tensor([0.3], dtype=torch.float64)
(g_t1,) = torch.autograd.grad(torch.addcmul(a, t1, t2, value=2.0), t1, torch.tensor([0.4], dtype=torch.float64))
print(f"torch addcmul gradient in tensor1 at tensor2 = -1.80e308, value 2, cotangent 0.4: {g_t1.item()} exact: {mp.nstr(mp.mpf(0.4) * 2 * mp.mpf(-1.7976931348623157e308), 6)}")

# XLA:CPU flushes subnormal float32 results to zero: i1e's reverse over forward at x = -0.0077 with
# a cotangent of -3.8e-38 (i1e-a2a6c0775d05, 'special') cancels terms of which one was flushed
xi, c, tt = -0.007697590626776218, -3.7987320825306667e-38, 1.0918468236923218
f = lambda x: jax.jvp(jax.scipy.special.i1e, (x,), (jnp.float32(tt),))[1]
got = float(jax.vjp(f, jnp.float32(xi))[1](jnp.float32(c))[0])
d2 = mp.diff(lambda z: mp.besseli(1, z) * mp.exp(-abs(z)), mp.mpf(xi), 2)
print(f"jax i1e reverse over forward float32 at {xi}, cotangent {c}: {got:.5g} exact: {mp.nstr(c * tt * d2, 5)}")
print(f"jax float32 {c} * 0.01: {float(jnp.float32(c) * jnp.float32(0.01))} (exact -3.8e-40, subnormal)")
# the same in float64 for sinc (sinc-009369b72798): x = 0.0409, tangent 0.2289, cotangent 4.06e-308
xs, ts, cs = 0.04093155762095717, 0.22888117742683045, 4.06247589859831e-308
fs = lambda x: jax.jvp(jnp.sinc, (x,), (jnp.float64(ts),))[1]
got = float(jax.vjp(fs, jnp.float64(xs))[1](jnp.float64(cs))[0])
d2 = mp.diff(lambda z: mp.sin(mp.pi * z) / (mp.pi * z), mp.mpf(xs), 2)
print(f"jax sinc reverse over forward float64 at {xs}, cotangent {cs}: {got:.5g} exact: {mp.nstr(cs * ts * d2, 5)}")
