"""The regularized incomplete beta function ``betainc(a, b, x)`` (jax.scipy.special's and
tf.math's name and argument order; PyTorch has none) and the log-beta function ``betaln(a, b)``
over the exact rules of :mod:`reference.ops.rules.special_beta`: the reference goes beyond PyTorch here, in
``reference.special``, so that one program text runs on the reference where JAX and TensorFlow
differentiate a function PyTorch lacks.

The operands promote and broadcast as PyTorch's TensorIterator does for its ternary ops (an
integer or bool result computes in the default float dtype, a Python number is a wrapped number);
betainc's a and b are not differentiated (JAX raises for their gradient, TensorFlow's is None)."""

from __future__ import annotations

from reference.autograd.dispatch import apply
from reference.ops import api as A
from reference.ops.api import R
from reference.ops.promotion import _operand
from reference.ops.public import broadcast_check, check_broadcast3, float_dtype


def betainc(a, b, x):
    """I_x(a, b) = ∫_0^x t^(a-1) (1-t)^(b-1) dt / B(a, b): exact derivatives of every order in x."""
    dt = float_dtype(A.result_type(a, b, x))
    a, b, x = (_operand(v, dt) for v in (a, b, x))
    cast = None if a.dtype == b.dtype == x.dtype == dt else dt
    return apply(R.betainc, (a, b, x), {}, cast=cast, check=lambda: check_broadcast3(a, b, x))


NAMESPACES = {"special": {"betainc": betainc}}


def betaln(a, b):
    """ln|B(a, b)| = ln|Γ(a)| + ln|Γ(b)| - ln|Γ(a + b)| (jax.scipy.special.betaln; TensorFlow's
    tf.math.lbeta of the pair): exact derivatives of every order in both."""
    dt = float_dtype(A.result_type(a, b))
    a, b = _operand(a, dt), _operand(b, dt)
    cast = None if a.dtype == b.dtype == dt else dt
    return apply(R.betaln, (a, b), {}, cast=cast, check=broadcast_check(a, b))


NAMESPACES["special"]["betaln"] = betaln
