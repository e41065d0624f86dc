"""Second derivatives whose intermediates or results are subnormal (or at the edge of overflow)
lose digits that the reference's error bound does not allow: a subnormal partial product early in
the framework's chain rule, then scaled up (float32 erf'' at x = -9.8, where exp(-x^2) is 2e-42);
1/x^2 of a subnormal float64 x."""

import jax
import mpmath
import numpy as np
import torch

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402 (after jax_enable_x64)

mpmath.mp.prec = 200


def second(fn, x, go, gg, dtype):
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    (g,) = torch.autograd.grad(fn(xt), xt, torch.tensor(go, dtype=dtype), create_graph=True)
    return torch.autograd.grad(g, xt, torch.tensor(gg, dtype=dtype))[0].item()


x, go, gg = -9.805289268493652, -0.07045479863882065, 0.5549585819244385
exact = go * gg * mpmath.diff(mpmath.erf, mpmath.mpf(x), 2)
print(
    f"torch erf'' float32 at {x}: {second(torch.erf, x, go, gg, torch.float32):.6g} exact {float(exact):.6g}"
)
x, go, gg = 1.524313845621724e-309, 0.44295207944455156, 0.4398968443089101
# d/d(grad_output) of the double backward of log10: gg / (x ln 10)
xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
got = torch.tensor(go, dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(torch.log10(xt), xt, got, create_graph=True)
(ggo,) = torch.autograd.grad(g, got, torch.tensor(gg, dtype=torch.float64))
print(
    f"torch log10 double backward (grad_output's) float64 at subnormal {x}: {ggo.item()!r} exact {float(gg / (mpmath.mpf(x) * mpmath.log(10)))!r}"
)
x, t = np.float32(2.827522039413452), np.float32(-4.2312364075715856e-38)
print(
    "jax atan2 second derivative, float32, other = -4.2e-38 (its square underflows):",
    float(jax.grad(lambda y: jax.grad(jnp.arctan2, 1)(x, y))(t)),
    "exact",
    float(mpmath.diff(lambda v: mpmath.atan2(float(x), v), float(t), 2)),
)
