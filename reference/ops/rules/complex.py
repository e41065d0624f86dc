"""Complex-number primitives: the views between a complex tensor and its float pairs, conjugation,
and the non-holomorphic functions (abs is in elementwise), with PyTorch's formulas.

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry. PyTorch's convention (docs/complex.md): the gradient of a real loss L with respect to a
complex z is ``dL/d(re z) + i dL/d(im z)`` (the conjugate Wirtinger derivative, times 2). A rule
whose formulas are the plain holomorphic derivatives gets it by conjugation (``Rule.complex_grads
= "conjugate"``, the default); the rules here are not holomorphic, so their formulas are
derivatives.yaml's own (``complex_grads="explicit"``), and so are their JVPs: for an op ``s(z)``
the JVP is ``ds/dz t + ds/dz* conj(t)`` and the VJP ``conj(ds/dz) g + ds/dz* conj(g)``.
"""

from __future__ import annotations

import numpy as np

from reference import errors
from reference.autograd import table
from reference.autograd.batching import view_rule
from reference.autograd.dispatch import apply_view
from reference.backend import namespace_of, xp_fn
from reference.ops import api as A
from reference.ops.functions import complex as F
from reference.ops.functions import pointwise as P
from reference.ops.rule import AUTO_LINEAR, BATCH_ELEMENTWISE, SAME_VIEW
from reference.ops.rules.registry import rule
from reference.scalar_types import scalar_type_name

# ---- views: a complex tensor and its (re, im) pairs ------------------------------------------------


def view_as_real_geometry(shape, stride, offset):
    """PyTorch's view_as_real: the float pairs of the same storage; strides and offset in floats."""
    return (tuple(shape) + (2,), tuple(2 * s for s in stride) + (1,), 2 * offset)


def view_as_complex_geometry(shape, stride, offset):
    """PyTorch's view_as_complex: the last dim (size 2, stride 1) becomes one complex element."""
    return (tuple(shape[:-1]), tuple(s // 2 for s in stride[:-1]), offset // 2)


def _view_as_real(shape, stride, offset, dtype):
    size, st, off = view_as_real_geometry(shape, stride, offset)
    return size, st, off, np.dtype(dtype)


def _view_as_complex(shape, stride, offset, dtype):
    size, st, off = view_as_complex_geometry(shape, stride, offset)
    return size, st, off, np.dtype(dtype)


def _view_as_complex_batch(b, params):
    """The view of the physical value, batch dim first; PyTorch's geometry checks apply to it (with
    the batch dim last, its last dim no longer has stride 1: torch.func.vmap raises there too)."""

    x = b.front(0)
    F.check_view_as_complex(x)
    return apply_view(b.rule, x, params), 0


rule(
    "view_as_real",
    "ViewAsRealBackward0",
    ("self",),
    view=_view_as_real,  # params: dtype, the value type of the input's complex dtype
    grads=(lambda c, g: F.view_as_complex(A.contiguous(g)),),
    complex_grads="explicit",
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: p),
)
rule(
    "view_as_complex",
    "ViewAsComplexBackward0",
    ("self",),
    view=_view_as_complex,  # params: dtype, the complex dtype of the input's float dtype
    grads=(lambda c, g: F.view_as_real(F.resolve_conj(A.contiguous(g))),),  # PyTorch's formula
    complex_grads="explicit",
    jvp=SAME_VIEW,
    batch=lambda b, params: _view_as_complex_batch(b, params),
)

# ---- conjugation -------------------------------------------------------------------------------------

# conj() of a complex tensor is PyTorch's lazy view: the same storage and geometry with the
# conjugate bit flipped (reference.autograd.tensor.LazyTensor resolves it on each read); _neg_view
# flips the negative bit (PyTorch's torch._neg_view, which imag of a conjugate view uses).
# Gradients: derivatives.yaml's ``grad.conj()`` and ``grad.neg()`` (conj() is a view there too).
rule(
    "conj",
    "ConjBackward0",
    ("self",),
    view=lambda shape, stride, offset: (shape, stride, offset, None, True, False),
    grads=(lambda c, g: F.conj(g),),
    complex_grads="explicit",
    jvp=SAME_VIEW,  # conj is real-linear: the conjugate view of the tangent
    batch=view_rule(lambda p, shape, n: p),
    # no rounding, and the input's error moves with the value (EXACT would drop it)
    error=errors.GATHER,
)
rule(
    "_neg_view",
    "NegViewBackward0",
    ("self",),
    view=lambda shape, stride, offset: (shape, stride, offset, None, False, True),
    grads=(lambda c, g: F._neg_view(g),),
    complex_grads="explicit",
    jvp=SAME_VIEW,
    batch=view_rule(lambda p, shape, n: p),
    error=errors.GATHER,
)
rule(
    "conj_physical",
    "ConjPhysicalBackward0",
    ("self",),
    forward=xp_fn("conjugate"),
    grads=(lambda c, g: F.conj_physical(g),),
    complex_grads="explicit",
    jvp=AUTO_LINEAR,  # conj is real-linear: the op applied to the tangent
    batch=BATCH_ELEMENTWISE,
    error=errors.GATHER,
)

# ---- non-holomorphic functions ------------------------------------------------------------------------


def _where_zero(z, value):
    """``value`` with 0 where ``z == 0`` (PyTorch's masked_fill_(abs == 0, 0) / where(self == 0, 0, ...))."""
    return A.where(z == 0, A.zeros_like(value), value)


def _angle_grad(c, g):
    """angle_backward: grad * i z / |z|^2 (0 at z = 0), computed as (z/|z|)/|z|; real inputs: zeros (angle
    is piecewise constant)."""
    z = c.self
    if z.dtype.kind != "c":
        return A.zeros_like(z)
    a = A.abs(z)
    return _where_zero(
        z, g * (z / a) / a * 1j
    )  # (z/a)/a: |z|^2 under- or overflows where the result does not


def _angle_jvp(c, t):
    """d angle = Im(t conj(z)) / |z|^2 (0 at z = 0); real inputs: zero."""
    z = c.self
    if z.dtype.kind != "c":
        return A.zeros_like(c.result)
    a = A.abs(z)
    return _where_zero(z, F.imag(t * F.conj_physical(z / a)) / a)


rule(
    "angle",
    "AngleBackward0",
    ("self",),
    forward=xp_fn("angle"),
    grads=(_angle_grad,),
    saves={"self": (0,)},
    complex_grads="explicit",
    jvp=(_angle_jvp,),
    batch=BATCH_ELEMENTWISE,
    error=errors.elementwise(1, "atan2 of the parts: glibc/SLEEF atan2 within 1 ulp"),
)


def _sgn_formula(z, x, s):
    """sgn_backward: (x - sgn^2 conj(x)) / (2|z|), 0 where z = 0; the VJP (x = grad) and the JVP
    (x = tangent) have the same form, ds/dz = 1/(2|z|), ds/dz* = -sgn^2/(2|z|). Real inputs: zero
    (PyTorch's sign derivative, nan inputs included)."""
    if z.dtype.kind != "c":
        return A.zeros_like(s)
    a = A.abs(z)
    value = (x - s * s * F.conj_physical(x)) / (a * 2.0)
    return _where_zero(z, value)


def _sgn_kernel(a):
    """z / |z| (0 at 0); for real inputs PyTorch's sign ((0 < a) - (a < 0)). The parts are first
    scaled by the power of 2 that brings the larger one into [1/2, 1) (exact, or a rounding below
    2^-1074 of a unit result), then each divided by their hypot: unscaled, a subnormal |z| is
    rounded to the subnormal grid (relative error up to 1 at 5e-324) and NumPy's complex division
    by it overflows (sgn(-2.556e-309i) was nan - inf i, not -i)."""
    if a.dtype.kind != "c":
        return A.R.sign.forward(a)
    xp = namespace_of(a)
    _, e = xp.frexp(xp.maximum(xp.abs(a.real), xp.abs(a.imag)))  # e = 0 at 0, inf and nan
    re, im = xp.ldexp(a.real, -e), xp.ldexp(a.imag, -e)
    r = xp.hypot(re, im)
    nz = r != 0
    r = xp.where(nz, r, 1)  # (CuPy's ufuncs take no where=)
    unit = xp.where(xp.isfinite(a), _complex_kernel(re / r, im / r), complex(xp.nan, xp.nan))  # as PyTorch
    return xp.where(nz, unit, 0).astype(a.dtype)


def _complex_kernel(re, im):
    """Exactly (re, im) as the parts (re + 1j*im would make nan of an infinite im times 0)."""
    xp = namespace_of(re, im)
    re, im = xp.broadcast_arrays(re, im)
    out = xp.empty(re.shape, dtype=A.to_complex(re.dtype))
    out.real = re
    out.imag = im
    return out


rule(
    "complex",
    "ComplexBackward0",
    ("real", "imag"),
    forward=_complex_kernel,
    grads=(lambda c, g: F.real(g), lambda c, g: F.imag(g)),
    complex_grads="explicit",
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
    error=errors.GATHER,  # the parts are moved: |dz| = |complex(d re, d im)|, the kernel on the errors
)


def _polar_kernel(r, theta):
    """r (cos theta + i sin theta), as PyTorch's polar kernel (two rounded products)."""
    xp = namespace_of(r, theta)
    r, theta = xp.broadcast_arrays(r, theta)
    out = xp.empty(r.shape, dtype=A.to_complex(r.dtype))
    out.real = r * xp.cos(theta)
    out.imag = r * xp.sin(theta)
    return out


def _polar_vjp(c, g):
    """grad_abs = Re(conj(g) e^{i angle}), grad_angle = Re(conj(g) i result). PyTorch's polar_backward
    writes e^{i angle} as sgn(result), which is 0 where abs is 0 (and nan where result is subnormal),
    where d result / d abs = e^{i angle} is not (known entry torch-polar-gradient-of-abs-at-zero)."""
    gc = F.conj_physical(g)
    ga = F.real(gc * F.complex(P.cos(c.angle), P.sin(c.angle))) if c.needs[0] else None
    gt = F.real(gc * (c.result * 1j)) if c.needs[1] else None
    return ga, gt


def _polar_jvp(c, ts):
    """d polar = complex(dr cos - r dtheta sin, dr sin + r dtheta cos) (derivatives.yaml's result)."""
    r, theta = c.abs, c.angle
    ta, tt = ts
    cos, sin = P.cos(theta), P.sin(theta)
    re = im = None
    if ta is not None:
        re, im = ta * cos, ta * sin
    if tt is not None:
        dre, dim = -(tt * r) * sin, (tt * r) * cos
        re = dre if re is None else re + dre
        im = dim if im is None else im + dim
    return F.complex(re, im)


rule(
    "polar",
    "PolarBackward0",
    ("abs", "angle"),
    forward=_polar_kernel,
    vjp=_polar_vjp,
    saves={"abs": (1,), "angle": (0,), "result": (0, 1)},
    complex_grads="explicit",
    jvp=_polar_jvp,
    batch=BATCH_ELEMENTWISE,
    error=errors.elementwise(
        2.5, "r cos(theta), r sin(theta): glibc/SLEEF sin/cos 1 ulp and one product each"
    ),
)


# ---- which primitives accept complex tensors -----------------------------------------------------------
# PyTorch defines most ops on complex tensors only where they are meaningful (no ordering, no
# max/min/clamp, no erf...); the reference refuses a complex input to any primitive whose rule does
# not accept one (Rule.complex_inputs, declared inline or by its family module's COMPLEX_INPUTS),
# with PyTorch's error where it has a specific one, so it never computes a value where PyTorch raises.
# Every primitive that accepts them is checked against torch in tests/autograd/test_torch_complex.py.

_CLAMP = (NotImplementedError, "clamp is not supported for complex types")
_REFUSED = {
    "maximum": (RuntimeError, "maximum not implemented for complex tensors."),
    "minimum": (RuntimeError, "minimum not implemented for complex tensors."),
    "clamp": _CLAMP,
    "clamp_tensor": _CLAMP,
    "clamp_min": _CLAMP,
    "clamp_max": _CLAMP,
    "relu": _CLAMP,
    "sign": (
        NotImplementedError,
        "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use torch.sgn instead.",
    ),
    "floor": (NotImplementedError, "floor is not supported for complex inputs"),
    "ceil": (NotImplementedError, "ceil is not supported for complex inputs"),
    "trunc": (NotImplementedError, "trunc is not supported for complex inputs"),
    "amax": (NotImplementedError, "\"max_values_cpu\" not implemented for '{}'"),
    "amin": (NotImplementedError, "\"min_values_cpu\" not implemented for '{}'"),
    "max": (NotImplementedError, "\"max_all\" not implemented for '{}'"),
    "min": (NotImplementedError, "\"min_all\" not implemented for '{}'"),
    "argmax": (RuntimeError, "argmax(): does not support complex input"),
    "argmin": (RuntimeError, "argmin(): does not support complex input"),
    "sort": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "sort_stable": (RuntimeError, " Sort does not support complex dtypes on CPU"),
    "topk": (RuntimeError, " topk does not support complex dtypes on CPU"),
}


def refuse_complex(rule, dtype):
    """Raise PyTorch's error for ``rule`` on a complex tensor of ``dtype``, unless it accepts one."""
    if rule.complex_inputs:
        return
    exc, msg = _REFUSED.get(
        rule.name, (NotImplementedError, f"\"{rule.name}_cpu\" not implemented for '{{}}'")
    )
    raise exc(msg.format(scalar_type_name(dtype)))


table.register(refuse_complex=refuse_complex)  # (dispatch refuses complex tensors with it)

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: every primitive of this family accepts complex tensors (PyTorch defines them on complex numbers)
COMPLEX_INPUTS = True
