"""Elementwise math and special functions with PyTorch's names, signatures, promotion and errors.

The rules (forward kernels, VJP, JVP, batch rule) are in :mod:`reference.ops.rules.pointwise`;
these functions normalise arguments the way PyTorch does and hand one rule to the dispatcher:

* unary floating ops (``sin``, ``erf``, ...) compute an integer or bool input in the default
  float dtype, as PyTorch's ``unary_float_op`` does;
* binary ops promote with PyTorch's ``result_type`` (Python numbers are wrapped numbers); the ops
  PyTorch computes only in floating point (``atan2``, ``xlogy``, ``logaddexp``, ``copysign``,
  ``hypot``...) promote an integer result to the default float dtype;
* rounding ops (``floor``, ``ceil``, ``round``, ``trunc``) on integer tensors return a copy, as
  PyTorch does.
"""

from __future__ import annotations

import numbers

import numpy as np

from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.tensor import Tensor, _make, bool_, float64
from reference.backend import is_floating
from reference.ops import api as A
from reference.ops import public as _public
from reference.ops.api import R
from reference.ops.functions._low_precision import no_kernel
from reference.ops.public import broadcast_check as _check
from reference.ops.public import check_broadcast3 as _check3
from reference.ops.public import float_kernel_only as _float_kernel_only
from reference.ops.public import promoted as _binary
from reference.ops.public import promoted_inplace as _binary_inplace
from reference.ops.public import scalar_other as _scalar_other
from reference.ops.public import scalar_self as _scalar_self
from reference.ops.public import unary_float as _unary_float
from reference.ops.public import unary_inplace as _unary_inplace
from reference.scalar_types import scalar_type_name

# ---- boolean helpers the formulas read (not differentiable; batched under vmap) ----------------------


def _plain_unary(fn, name):
    def op(input):
        out = A._batched_plain(op, (input,))
        if out is not None:
            return out
        return _make(fn(input._data))

    op.__name__ = name
    return op


_isnan = _plain_unary(lambda a: a != a, "isnan")
_isfinite = _plain_unary(lambda a: a - a == 0 if is_floating(a.dtype) else a == a, "isfinite")


# ---- argument normalisation: reference.ops.public's calling conventions (promoted, promoted_inplace, ...) ----


# ---- unary floating ops --------------------------------------------------------------------------------
# sin, cos, ..., erf, lgamma, i0, the torch.special ones (i0e, i1, ndtri, ...), sgn and their in-place
# twins and aliases (arcsin) are generated from reference.ops.rules.pointwise's EXPORTS
# (reference.ops.public); ``P.sin`` reads them through this module's __getattr__ (at the end).


def erfcx(input):
    """torch.special.erfcx (no torch.erfcx, no Tensor method). PyTorch's CPU kernel has no
    float16 / bfloat16 instance: the dispatch error, as PyTorch raises it."""

    no_kernel(input, "erfcx_cpu")
    return _unary_float(R.erfcx, input)


def ndtr(input):
    """torch.special.ndtr, Φ(x): PyTorch's composite (1 + erf(x·√½))·½ cancels in the left tail;
    here one primitive with the exact value (reference.ops.rules.pointwise), the composite's node."""
    return _unary_float(R.ndtr, input)


def polygamma(n, input):
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _unary_float(R.polygamma, input, {"n": int(n)})


def polygamma_(self, n):
    return _unary_inplace(R.polygamma_inplace, self, {"n": int(n)})


def mvlgamma(input, p):
    """PyTorch 2.13 no longer checks that every element exceeds (p - 1) / 2."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return _unary_float(R.mvlgamma, input, {"p": int(p)})


def mvlgamma_(self, p):
    return apply_inplace(R.mvlgamma, self, (), {"p": int(p)})


def logit(input, eps=None):
    return _unary_float(R.logit, input, {"eps": None if eps is None else float(eps)})


def logit_(self, eps=None):
    return _unary_inplace(R.logit, self, {"eps": None if eps is None else float(eps)})


def square(input):
    """``input * input`` as PyTorch spells it: ``pow(input, 2)`` (PowBackward0); bool promotes to int64."""
    if input.dtype == bool_:
        return A.pow(A.to(input, np.dtype(np.int64)), 2)
    return A.pow(input, 2)


def square_(self):
    return A.pow_(self, 2)


def positive(input):
    if input.dtype == bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def frac(input):
    if not is_floating(input.dtype):
        raise NotImplementedError(f"\"frac_cpu\" not implemented for '{scalar_type_name(input.dtype)}'")
    return apply(R.frac, (input,))


def frac_(self):
    frac(self.detach())  # the same dtype check
    return apply_inplace(R.frac, self, (), {})


def _rounding(name):
    def op(input):
        if input.dtype.kind == "c":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        if not is_floating(input.dtype):  # integers are already integral: PyTorch returns a copy
            return A.clone(input)
        return apply(getattr(R, name), (input,))

    def op_(self):
        if self.dtype.kind == "c":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        if not is_floating(self.dtype):
            return self
        return apply_inplace(getattr(R, name), self, (), {})

    op.__name__, op_.__name__ = name, name + "_"
    return op, op_


floor, floor_ = _rounding("floor")
ceil, ceil_ = _rounding("ceil")
trunc, trunc_ = _rounding("trunc")
fix, fix_ = trunc, trunc_


def round(input, *, decimals=0):
    if not is_floating(input.dtype):
        if decimals != 0:
            raise RuntimeError("round_cpu not implemented for integral types with decimals != 0")
        return A.clone(input)
    if decimals == 0:
        return apply(R.round, (input,))
    return apply(R.round_decimals, (input,), {"decimals": int(decimals)})


def round_(self, *, decimals=0):
    if not is_floating(self.dtype):
        return self
    if decimals == 0:
        return apply_inplace(R.round, self, (), {})
    return apply_inplace(R.round_decimals, self, (), {"decimals": int(decimals)})


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    if not is_floating(input.dtype):
        return A.clone(input)
    return apply(R.nan_to_num, (input,), {"nan": nan, "posinf": posinf, "neginf": neginf})


def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    if not is_floating(self.dtype):
        return self
    return apply_inplace(R.nan_to_num, self, (), {"nan": nan, "posinf": posinf, "neginf": neginf})


# ---- binary ops ------------------------------------------------------------------------------------------
# atan2 (arctan2), hypot, logaddexp2, copysign, xlogy, xlog1py, fmax, fmin, nextafter, their in-place
# twins, and addcmul/addcdiv are generated from reference.ops.rules.pointwise's MULTI_EXPORTS
# (reference.ops.public). The ones below stay hand-written: logaddexp's complex kernel, fmod's and
# remainder's integer division by zero (checked on the result dtype, their twins on self's),
# heaviside's dtype rule, float_power's float64 computation, lerp's dtype checks and weight overloads.


def logaddexp(input, other):
    if A.result_type(input, other).kind != "c":  # complex: ATen's complex kernel
        _float_kernel_only("logaddexp", input, other)
    return _binary(R.logaddexp, input, other)


def _int_zero_division(a, b):
    if isinstance(b, Tensor) and b.dtype.kind in "iu" and bool((b._data == 0).any()):
        raise RuntimeError("ZeroDivisionError")
    if isinstance(b, numbers.Integral) and not isinstance(b, bool) and b == 0:
        if not isinstance(a, Tensor) or a.dtype.kind in "iu":
            raise RuntimeError("ZeroDivisionError")


def fmod(input, other):
    if A.result_type(input, other).kind in "iu":
        _int_zero_division(input, other)
    if isinstance(input, Tensor) and not isinstance(other, Tensor):
        return _scalar_other(R.fmod_scalar, input, other)
    return _binary(R.fmod, input, other)


def fmod_(self, other):
    if self.dtype.kind in "iu":
        _int_zero_division(self, other)
    return _binary_inplace(R.fmod, self, other, scalar_rule=R.fmod_scalar)


def remainder(input, other):
    if A.result_type(input, other).kind in "iu":
        _int_zero_division(input, other)
    if not isinstance(input, Tensor) and isinstance(other, Tensor):  # remainder.Scalar_Tensor
        return _scalar_self(R.remainder_scalar_self, input, other)
    if isinstance(input, Tensor) and not isinstance(other, Tensor):
        return _scalar_other(R.remainder_scalar, input, other)
    return _binary(R.remainder, input, other)


def remainder_(self, other):
    if self.dtype.kind in "iu":
        _int_zero_division(self, other)
    return _binary_inplace(R.remainder, self, other, scalar_rule=R.remainder_scalar)


def heaviside(input, values):
    if not isinstance(values, Tensor):
        raise TypeError(f"heaviside(): argument 'values' must be Tensor, not {type(values).__name__}")
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _binary(R.heaviside, input, values)


def heaviside_(self, values):
    return _binary_inplace(R.heaviside, self, values)


def _float_power_dtype(*operands):
    """float_power's computation dtype: complex128 when either operand is complex (a complex
    tensor or a Python complex number), float64 otherwise (aten's float_power overloads)."""
    for x in operands:
        if isinstance(x, Tensor) and x.dtype.kind == "c" or isinstance(x, complex):
            return np.dtype(np.complex128)
    return float64


def float_power(input, exponent):
    """``pow`` computed in float64, or complex128 with a complex operand (PyTorch casts both
    operands to that dtype first)."""
    dtype = _float_power_dtype(input, exponent)
    if isinstance(input, Tensor) and input.dtype != dtype:
        input = A.to(input, dtype)
    if isinstance(exponent, Tensor) and exponent.dtype != dtype:
        exponent = A.to(exponent, dtype)
    return A.pow(input, exponent)


def float_power_(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    if self.dtype != dtype:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {scalar_type_name(self.dtype)} but the operation's "
            f"result requires dtype {scalar_type_name(dtype)}"
        )
    if isinstance(exponent, Tensor) and exponent.dtype != dtype:
        exponent = A.to(exponent, dtype)
    return A.pow_(self, exponent)


def true_divide(input, other):
    return A.div(input, other)


def true_divide_(self, other):
    return A.div_(self, other)


# ---- ternary ops -----------------------------------------------------------------------------------------


def lerp(input, end, weight):
    if not isinstance(end, Tensor):
        raise TypeError(f"lerp(): argument 'end' must be Tensor, not {type(end).__name__}")
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype != input.dtype and (name == "end" or t.ndim > 0):
            raise RuntimeError(
                f"expected dtype {scalar_type_name(input.dtype)} for `{name}` but got dtype "
                f"{scalar_type_name(t.dtype)}"
            )
    if isinstance(weight, Tensor):
        if weight.dtype != input.dtype:  # a 0-d weight of another float dtype
            weight = A.to(weight, input.dtype)
        return apply(R.lerp_tensor, (input, end, weight), {}, check=lambda: _check3(input, end, weight))
    return apply(R.lerp, (input, end), {"weight": weight}, check=_check(input, end))


def lerp_(self, end, weight):
    if isinstance(weight, Tensor):
        return apply_inplace(R.lerp_tensor, self, (end, weight), {})
    return apply_inplace(R.lerp, self, (end,), {"weight": weight})


# ---- clamp family (number bounds: ClampBackward1 in reference.ops.api; tensor bounds here) ----------


def clamp_min(input, min):
    if isinstance(min, Tensor):
        return _binary(R.clamp_min_tensor, input, min)
    dt = A.result_type(input, min)
    return apply(R.clamp_min, (input,), {"min": min}, cast=None if dt == input.dtype else dt)


def clamp_max(input, max):
    if isinstance(max, Tensor):
        return _binary(R.clamp_max_tensor, input, max)
    dt = A.result_type(input, max)
    return apply(R.clamp_max, (input,), {"max": max}, cast=None if dt == input.dtype else dt)


def clamp_min_(self, min):
    if isinstance(min, Tensor):
        return _binary_inplace(R.clamp_min_tensor, self, min)
    return apply_inplace(R.clamp_min, self, (), {"min": min})


def clamp_max_(self, max):
    if isinstance(max, Tensor):
        return _binary_inplace(R.clamp_max_tensor, self, max)
    return apply_inplace(R.clamp_max, self, (), {"max": max})


def clip(input, min=None, max=None):
    return A.clamp(input, min, max)


def clip_(self, min=None, max=None):
    return A.clamp_(self, min, max)


def masked_fill_(self, mask, value):
    return A.masked_fill_(self, mask, value)


masked_fill = A.masked_fill


def reciprocal(input):
    """``torch.reciprocal`` (rule ``reciprocal``; the method ``x.reciprocal()`` is the same)."""
    return input.reciprocal()


def reciprocal_(self):
    """In place (PyTorch refuses an integer tensor: its float result cannot be written back)."""
    return _unary_inplace(R.reciprocal, self)


def rsub(input, other, *, alpha=1):
    """``torch.rsub``: ``other - alpha * input``; a number ``other`` is aten's rsub with a Scalar,
    a tensor one an ordinary subtraction (PyTorch: RsubBackward1 / RsubBackward0, same gradients)."""
    if isinstance(other, Tensor):
        return A.sub(other, input, alpha=alpha)
    return A.rsub(input * alpha if alpha != 1 else input, other)


__all__ = (
    """polygamma mvlgamma logit logit_ square square_ positive frac frac_ floor floor_ ceil ceil_ trunc
    trunc_ fix fix_ round round_ nan_to_num nan_to_num_ logaddexp fmod remainder heaviside float_power
    true_divide lerp clamp_min clamp_max clamp_min_ clamp_max_ clip clip_ masked_fill""".split()
) + ["reciprocal", "reciprocal_", "rsub"]
_METHOD_NAMES = [n for n in __all__ if n not in ("masked_fill", "reciprocal", "rsub")] + (
    """polygamma_ mvlgamma_ fmod_ remainder_ heaviside_ float_power_ true_divide_ lerp_
    masked_fill_ square_""".split()
)
METHODS = {n: globals()[n] for n in dict.fromkeys(_METHOD_NAMES)}
METHODS["polygamma"] = lambda self, n: polygamma(n, self)
NAMESPACES = {
    "special": {  # (and the generated ones: erf, gammaln, i0e, xlogy, ...; rules.pointwise's exports)
        "erfcx": erfcx,
        "logit": logit,
        "polygamma": polygamma,
        "multigammaln": mvlgamma,
        "ndtr": ndtr,
        "round": round,
    }
}


def __getattr__(name):
    """The functions generated from ``reference.ops.rules.pointwise.EXPORTS`` (``sin``, ``erf_``,
    ``arcsin``, ...: :mod:`reference.ops.public`), read as this module's own."""
    return _public.family_function("pointwise", name)


def __dir__():
    return sorted(set(globals()) | set(_public.FUNCTIONS.get("pointwise", ())))
