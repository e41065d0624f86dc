"""jax.scipy.special's functions of two arguments that PyTorch lacks, under scipy.special's names in
``reference.special``: the beta function ``beta(a, b)`` and the Pochhammer symbol ``poch(z, m)``
(reference/ops/rules/special_gamma_ratio.py), scipy's elementwise relative entropy ``rel_entr(x, y)``
and Kullback-Leibler divergence ``kl_div(x, y)`` (reference/ops/rules/special_entropy.py), the
Box-Cox transformations ``boxcox(x, lmbda)`` and ``boxcox1p(x, lmbda)`` (reference/ops/rules/special_boxcox.py).

The operands promote and broadcast as PyTorch's binary ops do (an integer or bool result computes
in the default float dtype, a Python number is a wrapped number); both arguments are
differentiated, every order exact."""

from __future__ import annotations

from reference.autograd.dispatch import apply
from reference.ops import api as A
from reference.ops.api import R
from reference.ops.promotion import _operand
from reference.ops.public import broadcast_check, float_dtype


def _binary(name, doc):
    primitive = getattr(R, name)

    def op(u, v):
        dt = float_dtype(A.result_type(u, v))
        u, v = _operand(u, dt), _operand(v, dt)
        cast = None if u.dtype == v.dtype == dt else dt
        return apply(primitive, (u, v), {}, cast=cast, check=broadcast_check(u, v))

    op.__name__ = name
    op.__doc__ = doc
    return op


beta = _binary("beta", "B(a, b) = Γ(a)Γ(b)/Γ(a + b) (scipy.special.beta): exact derivatives in both.")
poch = _binary("poch", "(z)_m = Γ(z + m)/Γ(z) (scipy.special.poch): exact derivatives in both.")
rel_entr = _binary("rel_entr", "x ln(x/y) (scipy.special.rel_entr, its edge values): exact derivatives.")
kl_div = _binary("kl_div", "x ln(x/y) - x + y (scipy.special.kl_div, its edge values): exact derivatives.")

boxcox = _binary("boxcox", "(x^λ - 1)/λ, ln x at λ = 0 (scipy.special.boxcox): exact derivatives in both.")
boxcox1p = _binary("boxcox1p", "((1 + x)^λ - 1)/λ, ln(1 + x) at λ = 0 (scipy.special.boxcox1p): exact derivatives.")
owens_t = _binary("owens_t", "Owen's T function T(h, a) (scipy.special.owens_t): exact derivatives in both.")

# TensorFlow's tf.math.xdivy (neither scipy's nor JAX's: the one function of this module only TensorFlow has)
xdivy = _binary("xdivy", "x/y, 0 where x == 0 (tf.math.xdivy, reference/ops/rules/special_xdivy.py): exact derivatives.")

# jax.nn.squareplus (reference/ops/rules/jax_activations.py), reference.nn.functional.squareplus
_squareplus = _binary("squareplus", "(x + √(x² + b))/2 (jax.nn.squareplus): exact derivatives in x and b.")


def squareplus(x, b=4.0):
    """(x + √(x² + b))/2, b = 4 by default as jax.nn.squareplus's (reference/ops/rules/jax_activations.py)."""
    return _squareplus(x, b)


NN_FUNCTIONAL = {"squareplus": squareplus}

NAMESPACES = {
    "special": {
        "beta": beta,
        "poch": poch,
        "rel_entr": rel_entr,
        "kl_div": kl_div,
        "boxcox": boxcox,
        "boxcox1p": boxcox1p,
        "owens_t": owens_t,
        "xdivy": xdivy,
    }
}
