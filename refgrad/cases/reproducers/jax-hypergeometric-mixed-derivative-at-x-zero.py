"""JAX's mixed second derivatives d²/dp dx of hyp1f1 and hyp2f1 in a parameter p and x are 0 at
x = 0, where they are finite and nonzero: the parameter derivative is the series
S'(x) = Σ_{k>=1} t_k(x) d_k (t_k the k-th term, d_k its digamma differences), summed in a
lax.while_loop from S' = 0, t_1 = a b x / c while |t_k| / |S'| > eps (jax/_src/scipy/special.py,
_hyp2f1_b_derivative; 1F1's likewise); at x = 0 that test is 0 / 0 = nan > eps, false, so the loop
adds no term, S' is the constant 0, and its derivative in x misses t_1'(0) d_1 (2F1 in b:
(a b / c) (1 / b) = a / c; 1F1 in a: (a / b) (1 / a) = 1 / b).
Next to 0 (x = 1e-3) JAX agrees with the exact value. Prints JAX's d/dx of its d/dp (forward over
reverse) at x = 0 and 1e-3, and mpmath's."""

import jax

jax.config.update("jax_enable_x64", True)
import mpmath
from jax.scipy.special import hyp1f1, hyp2f1

a, b, c = -0.1867683985737898, 0.08106234778504615, -0.1941729795670103
for x in (0.0, 1e-3):
    jx = jax.jvp(lambda x: jax.grad(lambda b, x: hyp2f1(a, b, c, x))(b, x), (x,), (1.0,))[1]
    exact = mpmath.diff(lambda bb, xx: mpmath.hyp2f1(a, bb, c, xx), (b, x), (1, 1))
    print(f"jax {jax.__version__} hyp2f1({a:.4f}, {b:.4f}, {c:.4f}, x) d2/db dx at x = {x}: jax {float(jx):.4f} exact {float(exact):.4f}")
for x in (0.0, 1e-3):
    jx = jax.jvp(lambda x: jax.grad(lambda a, x: hyp1f1(a, 1.5, x))(0.5, x), (x,), (1.0,))[1]
    exact = mpmath.diff(lambda aa, xx: mpmath.hyp1f1(aa, 1.5, xx), (0.5, x), (1, 1))
    print(f"jax {jax.__version__} hyp1f1(0.5, 1.5, x) d2/da dx at x = {x}: jax {float(jx):.4f} exact {float(exact):.4f}")
