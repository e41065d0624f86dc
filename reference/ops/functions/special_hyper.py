"""jax.scipy.special's hypergeometric functions, which PyTorch and TensorFlow lack, under scipy.special's
names in ``reference.special``: ``hyp1f1(a, b, x)`` and ``hyp2f1(a, b, c, x)``
(reference/ops/rules/special_hyper.py).

The operands promote and broadcast as PyTorch's n-ary pointwise ops do (an integer or bool result
computes in the default float dtype, a Python number is a wrapped number); every argument is
differentiated, every order exact."""

from __future__ import annotations

import itertools

from reference.autograd.dispatch import apply
from reference.ops import api as A
from reference.ops.api import R
from reference.ops.promotion import _operand, check_broadcast
from reference.ops.public import float_dtype


def _nary(name, doc):
    primitive = getattr(R, name)

    def op(*args):
        dt = float_dtype(A.result_type(*args))
        operands = tuple(_operand(v, dt) for v in args)
        cast = None if all(v.dtype == dt for v in operands) else dt

        def check():
            for u, v in itertools.combinations(operands, 2):
                check_broadcast(u, v)

        return apply(primitive, operands, {}, cast=cast, check=check)

    op.__name__ = name
    op.__doc__ = doc
    return op


_hyp1f1 = _nary("hyp1f1", "")
_hyp2f1 = _nary("hyp2f1", "")


def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) = Σ (a)_k/(b)_k x^k/k! (scipy.special.hyp1f1):
    exact derivatives of every order in a, b and x."""
    return _hyp1f1(a, b, x)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) = Σ (a)_k (b)_k/(c)_k x^k/k!
    (scipy.special.hyp2f1; nan past its branch point x > 1 but for a polynomial): exact derivatives of
    every order in a, b, c and x."""
    return _hyp2f1(a, b, c, x)


NAMESPACES = {"special": {"hyp1f1": hyp1f1, "hyp2f1": hyp2f1}}
