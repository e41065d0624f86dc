"""Samples for jax.scipy.special's two-argument functions PyTorch lacks
(reference/ops/functions/special_scipy.py): beta and poch with both arguments positive (``pp``),
one of them shifted across 0 where the other keeps a + b, z + m off the poles, and their derivative
primitives at the orders the checks use (∂_0, ∂_0∂_1, ∂_1²); rel_entr and kl_div inside x, y > 0,
and their derivative primitives (∂_x², ∂_x∂_y, ∂_y²); boxcox and boxcox1p with λ across 0 (``pa``:
x positive, λ of both signs), and their derivative primitives (∂_λ, ∂_x∂_λ, ∂_λ²); xdivy with
both signs and y kept off 0 (``ap``), and its derivative primitive (∂_y², ∂_x∂_y); jax.nn's
squareplus with x of both signs and b > 0, and its derivative primitive (∂_x², ∂_x∂_b, ∂_b², and
∂_x∂_b with its multiplier w differentiated)."""

import reference as T
from reference.ops.rules.jax_activations import squareplus_derivative
from reference.ops.rules.special_boxcox import boxcox1p_derivative, boxcox_derivative
from reference.ops.rules.special_entropy import kl_div_derivative, rel_entr_derivative
from reference.ops.rules.special_gamma_ratio import beta_derivative, poch_derivative
from reference.ops.rules.special_owens_t import owens_t_derivative
from reference.ops.rules.special_xdivy import xdivy_derivative

S = T.special

RECORDS = {
    "beta": [
        ("both", lambda a, b: S.beta(a * 2, b), [(3,), (3,)], "pp"),
        ("negative_a", lambda a, b: S.beta(a * 0.4 - 1.5, b + 2), [(3,), (3,)], "pp"),
    ],
    "beta_derivative": [
        ("a_order1", lambda a, b: beta_derivative(a, b * 3, 1, 0), [(2,), (2,)], "pp"),
        ("mixed", lambda a, b: beta_derivative(a * 2, b, 1, 1), [(2,), (2,)], "pp"),
        ("b_order2", lambda a, b: beta_derivative(a, b, 0, 2), [(2,), (2,)], "pp"),
    ],
    "poch": [
        ("both", lambda z, m: S.poch(z * 2, m), [(3,), (3,)], "pp"),
        ("negative_m", lambda z, m: S.poch(z + 3, m * 0.5 - 1.25), [(3,), (3,)], "pp"),
    ],
    "poch_derivative": [
        ("z_order1", lambda z, m: poch_derivative(z, m * 3, 1, 0), [(2,), (2,)], "pp"),
        ("mixed", lambda z, m: poch_derivative(z * 2, m, 1, 1), [(2,), (2,)], "pp"),
        ("m_order2", lambda z, m: poch_derivative(z, m, 0, 2), [(2,), (2,)], "pp"),
    ],
    "rel_entr": [("both", lambda x, y: S.rel_entr(x * 2, y), [(3,), (3,)], "pp")],
    "rel_entr_derivative": [
        ("x_order2", lambda x, y: rel_entr_derivative(x, y * 3, 2, 0), [(2,), (2,)], "pp"),
        ("mixed", lambda x, y: rel_entr_derivative(x * 2, y, 1, 1), [(2,), (2,)], "pp"),
        ("y_order2", lambda x, y: rel_entr_derivative(x, y, 0, 2), [(2,), (2,)], "pp"),
    ],
    "kl_div": [("both", lambda x, y: S.kl_div(x * 2, y), [(3,), (3,)], "pp")],
    "kl_div_derivative": [
        ("x_order1", lambda x, y: kl_div_derivative(x, y * 3, 1, 0), [(2,), (2,)], "pp"),
        ("y_order1", lambda x, y: kl_div_derivative(x * 2, y, 0, 1), [(2,), (2,)], "pp"),
    ],
    "boxcox": [("both", lambda x, lam: S.boxcox(x * 2, lam), [(3,), (3,)], "pa")],
    "boxcox_derivative": [
        ("lmbda_order1", lambda x, lam: boxcox_derivative(x, lam, 0, 1), [(2,), (2,)], "pa"),
        ("mixed", lambda x, lam: boxcox_derivative(x * 2, lam, 1, 1), [(2,), (2,)], "pa"),
        ("lmbda_order2", lambda x, lam: boxcox_derivative(x, lam * 0.5, 0, 2), [(2,), (2,)], "pa"),
    ],
    "boxcox1p": [("both", lambda x, lam: S.boxcox1p(x, lam), [(3,), (3,)], "pa")],
    "boxcox1p_derivative": [
        ("x_order2", lambda x, lam: boxcox1p_derivative(x, lam, 2, 0), [(2,), (2,)], "pa"),
        ("mixed", lambda x, lam: boxcox1p_derivative(x, lam, 1, 1), [(2,), (2,)], "pa"),
    ],
    "owens_t": [("both", lambda h, a: S.owens_t(h, a), [(3,), (3,)], "aa")],
    "owens_t_derivative": [
        ("h_order1", lambda h, a: owens_t_derivative(h, a, 1, 0), [(2,), (2,)], "aa"),
        ("mixed", lambda h, a: owens_t_derivative(h, a, 1, 1), [(2,), (2,)], "aa"),
        ("a_order2", lambda h, a: owens_t_derivative(h, a, 0, 2), [(2,), (2,)], "aa"),
    ],
    "xdivy": [("both", lambda x, y: S.xdivy(x, y + 0.5), [(3,), (3,)], "ap")],
    "xdivy_derivative": [
        ("y_order2", lambda x, y: xdivy_derivative(x, y + 0.5, 0, 2), [(2,), (2,)], "ap"),
        ("mixed", lambda x, y: xdivy_derivative(x, y * 2, 1, 1), [(2,), (2,)], "ap"),
    ],
    "squareplus": [("both", lambda x, b: T.nn.functional.squareplus(x * 3, b), [(3,), (3,)], "ap")],
    "squareplus_derivative": [
        ("x_order2", lambda x, b: squareplus_derivative(x, b, 2, 0), [(2,), (2,)], "ap"),
        ("mixed", lambda x, b: squareplus_derivative(x * 2, b, 1, 1), [(2,), (2,)], "ap"),
        ("b_order2", lambda x, b: squareplus_derivative(x, b * 0.5, 0, 2), [(2,), (2,)], "ap"),
        # the multiplier differentiated too (w·∂_x∂_b: its gradient in w is ∂_x∂_b)
        ("times", lambda x, b, w: squareplus_derivative(x, b, 1, 1, multiplier=w), [(2,), (2,), (2,)], "apa"),
    ],
}
