"""The special functions PyTorch does not have that jax.scipy.special and tf.math.special
differentiate, in ``reference.special`` under scipy.special's names (the names JAX uses):
``expi``, ``exp1``, ``expn`` (reference/ops/rules/special_expint.py), ``dawsn``
(reference/ops/rules/special_dawsn.py).

PyTorch has no spelling to follow, so these follow its unary special functions' conventions:
integer inputs promote to the default dtype, every floating dtype computes (float16 and bfloat16
through the float64 kernel, rounded once), every derivative order exact (docs/records.md)."""

from __future__ import annotations

import operator

from reference.autograd.dispatch import apply
from reference.autograd.tensor import default_dtype
from reference.backend import is_inexact
from reference.ops.api import R


def _unary(name, doc, rule=None, **params):
    primitive = getattr(R, rule or name)

    def op(input):
        cast = None if is_inexact(input.dtype) else default_dtype.value
        return apply(primitive, (input,), dict(params), cast=cast)

    op.__name__ = name
    op.__doc__ = doc
    return op


expi = _unary("expi", "Ei(x), the exponential integral (scipy.special.expi); exact derivatives.")
exp1 = _unary("exp1", "E_1(x) (scipy.special.exp1); exact derivatives.", rule="expn", n=1)

dawsn = _unary("dawsn", "Dawson's integral D(x) (scipy.special.dawsn); exact derivatives.")


def expn(n, x):
    """E_n(x) (scipy.special.expn): n a Python int (not differentiated), x a Tensor."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"expn(): n must be an int, got {n!r} ({type(n).__name__})") from None
    return _unary("expn", "", n=n)(x)


NAMESPACES = {"special": {"expi": expi, "exp1": exp1, "expn": expn, "dawsn": dawsn}}
