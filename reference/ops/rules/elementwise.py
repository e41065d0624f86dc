"""Elementwise primitives: arithmetic, unary math, comparisons' masks, casts, and the
in-place-only primitives (copy_, fill_, zero_).

Part of the one derivative table (:mod:`reference.ops.rules`); see its docstring for how to read
an entry."""

from __future__ import annotations

import cmath
import math

import numpy as np

from reference import errors
from reference.autograd.dispatch import apply
from reference.autograd.tensor import _make, bfloat16
from reference.backend import namespace_of, to_device, xp_fn
from reference.errors import REFERENCE_U
from reference.ops import api as A
from reference.ops import kernels as K
from reference.ops.functions import complex as _CF
from reference.ops.functions import pointwise as P
from reference.ops.promotion import check_sub
from reference.ops.rule import (
    AUTO_ELEMENT_WISE,
    AUTO_LINEAR,
    BATCH_ELEMENTWISE,
    BILINEAR,
    Export,
    MultiExport,
)
from reference.ops.rules import _smooth as S
from reference.ops.rules.pointwise import binary_on_host, exact_from_input, on_host
from reference.ops.rules.registry import RULES, rule

# ---- rounding-error declarations (reference.errors): an op not listed rounds once, correctly ----
_EXP_LOG_ERROR = errors.elementwise(
    2,
    f"{errors.SLEEF_U10}; {errors.GLIBC}; XLA and Eigen use their own polynomial exp/log, for which "
    "no figure is stated: c = 2, twice SLEEF's bound (a stated choice; the exp/log record campaigns "
    "on JAX and TensorFlow are its check)",
)
_TANH_ERROR = errors.elementwise(
    3,
    "Eigen's generic_fast_tanh_float (the rational approximation XLA's EmitFastTanh also uses): "
    "'accurate up to a couple of ulp in the range [-9, 9]', taken as 2, plus 1 for XLA's tanh(x) = x "
    "below |x| < 4e-4 (relative error x^2/3 < 6e-8); SLEEF tanhf_u10: 1 ulp",
)
_SIGMOID_ERROR = errors.elementwise(
    3,
    "no framework states a bound: 1/(1+exp(-x)) (PyTorch) rounds exp (2 ulp, as exp), the add and "
    "the division (0.5 each); XLA's logistic expander may use 0.5 + 0.5*tanh(x/2), whose error is "
    "absolute: 0.5*(tanh's 3 ulp of 1) + 2 roundings of 1 = 4u",
    absolute=4,
)
_ALPHA_ERROR = errors.elementwise(
    lambda p: 0.5 if p.get("alpha", 1) == 1 else 1.0,
    "a + b rounds once (IEEE); a + alpha*b rounds the product and the sum (an FMA rounds once)",
)
_SELECT_ERROR = errors.elementwise(
    0.5,
    "a selection is exact, but frameworks compute selections and their derivatives as blends: "
    "PyTorch's maximum/minimum JVP is other_t + mask*(self_t - other_t) (derivatives.yaml), whose "
    "rounding is relative to |self_t| + |other_t|, not to the selected value: 0.5 ulp of the inputs",
    input_ulps=0.5,
)
_POW_ERROR = errors.elementwise(
    2,
    "glibc pow/powf <= 1 ulp, SLEEF pow_u10 1.0 ulp; integer exponents by repeated multiplication "
    "(XLA's integer_pow, exponents |n| <= 3 here): <= 2 roundings; c = 2",
)


def _to_device(a, device):
    """``x.to(device)``: the explicit transfer to ``device`` (None: stay)."""
    return a if device is None else to_device(a, device.type, device.index)


# ---- elementwise ---------------------------------------------------------------------------------

rule(
    "add",
    "AddBackward0",
    ("self", "other"),
    forward=lambda a, b, alpha=1: a + b if alpha == 1 else a + alpha * b,
    grads=(lambda c, g: g, lambda c, g: g * c.params["alpha"] if "alpha" in c.params else g),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
    error=_ALPHA_ERROR,
)
rule(
    "sub",
    "SubBackward0",
    ("self", "other"),
    forward=lambda a, b, alpha=1: a - b if alpha == 1 else a - alpha * b,
    grads=(lambda c, g: g, lambda c, g: g * -c.params["alpha"] if "alpha" in c.params else -g),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
    error=_ALPHA_ERROR,
)
rule(
    "rsub",
    "RsubBackward1",
    ("self",),  # other - self, other: a Python number
    forward=lambda a, other: namespace_of(a).asarray(other, dtype=a.dtype) - a,
    grads=(lambda c, g: -g,),
    jvp=(lambda c, t: -t,),
    batch=BATCH_ELEMENTWISE,
    layout="iterator_scalar",  # PyTorch wraps the number as a 0-d operand
)
rule(
    "mul",
    "MulBackward0",
    ("self", "other"),
    forward=xp_fn("multiply"),
    grads=(lambda c, g: g * c.other, lambda c, g: g * c.self),
    saves={"self": (1,), "other": (0,)},
    jvp=BILINEAR,
    batch=BATCH_ELEMENTWISE,
)


def _div_jvp(c, ts):
    """d(a/b) = (t_a - t_b·(a/b)) / b, fused where both inputs have a tangent: PyTorch's partial
    tangents t_a/b and -t_b·(result/b), summed, are inf - inf = nan at a tiny b where each
    overflows and their difference does not ((1e10 - 4.03e7) / 1e-300 with t_b·result = 1e10:
    -4.03e307). One tangent alone: PyTorch's partial (derivatives.yaml), in its order: t_b·result
    first, then / b (result / b first overflows where the tangent is finite: t_b = 1.456e-308,
    result = 2.03e307, b = 5.92e-309 gives -4.99e307, not -inf)."""
    ta, tb = ts
    if tb is None:
        out = None if ta is None else ta / c.other
    elif ta is None:
        out = -(tb * c.result) / c.other
    else:
        out = (ta - tb * c.result) / c.other
    if out is not None and out.shape != c.result.shape:
        out = A.broadcast_to(out, c.result.shape)
    return out


rule(
    "div",
    "DivBackward0",
    ("self", "other"),
    forward=xp_fn("divide"),
    grads=(lambda c, g: g / c.other, lambda c, g: -g * ((c.self / c.other) / c.other)),
    saves={"self": (1,), "other": (0, 1)},
    jvp=_div_jvp,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "neg",
    "NegBackward0",
    ("self",),
    forward=xp_fn("negative"),
    grads=(lambda c, g: -g,),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)


def _power(a, b):
    """a ** b with IEEE 754's pow special values (C99 Annex F.10.4.4). NumPy computes x ** 0.5 as
    sqrt(x), which says sqrt(-inf) = nan and sqrt(-0) = -0 where pow(-inf, y) = +inf and
    pow(-0, y) = +0 for every y > 0 that is not an odd integer; its other special values are C99's
    (PyTorch's pow by a Python 0.5 or -0.5 takes sqrt and rsqrt the same way: its departure)."""
    xp = namespace_of(a)
    out = xp.power(a, b)
    if out.dtype.kind != "f":
        return out
    half = b == 0.5
    out = xp.where(half & (a == -math.inf), xp.asarray(math.inf, dtype=out.dtype), out)
    return xp.where(half & (a == 0), xp.zeros_like(out), out)


rule(
    "pow",
    "PowBackward0",
    ("self",),  # exponent: a Python number
    forward=lambda a, exponent: _power(a, namespace_of(a).asarray(exponent, dtype=a.dtype)).astype(
        a.dtype, copy=False
    ),
    grads=(
        lambda c, g: A.zeros_like(g) if c.exponent == 0 else g * (c.exponent * A.pow(c.self, c.exponent - 1)),
    ),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_POW_ERROR,
)
rule(
    "pow_tensor",
    "PowBackward1",
    ("self", "exponent"),
    forward=lambda a, b: _power(a, b).astype(a.dtype, copy=False),
    grads=(lambda c, g: _pow_times_partial(c, g, 0), lambda c, g: _pow_times_partial(c, g, 1)),
    saves={"self": (0, 1), "exponent": (0, 1), "result": (1,)},
    jvp=(lambda c, t: _pow_times_partial(c, t, 0), lambda c, t: _pow_times_partial(c, t, 1)),
    batch=BATCH_ELEMENTWISE,
    error=_POW_ERROR,
)


def _pow_times_partial(c, g, i):
    """g times ∂/∂self (i = 0) or ∂/∂exponent (i = 1) of self ** exponent. Real dtypes: the
    primitives pow_partial_self and pow_partial_exponent (below), exact at positive finite x, whose
    derivatives are primitives again, so the second derivatives are rounded once from the exact
    value. Complex dtypes: PyTorch's formulas (pow_backward_self, pow_backward_exponent)."""
    x, y = c.self, c.exponent
    if x.dtype.kind == "c" or y.dtype.kind == "c":
        if i == 0:
            return A.where(y == 0, 0.0, g * (y * A.pow(x, y - 1)))
        return g * A.where(_zero_base(c), 0.0, c.result * A.log(c.self))
    out = g * _pow_partial(("pow_partial_self", "pow_partial_exponent")[i], x, y)
    if i == 1:
        return out
    # PyTorch's where(exponent == 0, 0, ...) answers +0 whatever g's sign; "+ 0.0" does that
    # without a mask, whose derivative in y would be 0 (not the mixed partial 1/x)
    return A.where(y == 0, out + 0.0, out)


def _pow_partial(name, x, y, **params):
    return apply(RULES[name], (x, y), params)


# pow's partials and their derivatives (real dtypes), each a primitive of (self, exponent) with an
# exact float64 kernel (_smooth.pow_partial_*: x^(y - k) with y - k's rounding corrected, 0·inf
# avoided at y = 0, mpmath where 1 + y·log x cancels); the third derivatives are the plain formulas
# (no check differentiates three times). Each is judged by the composite of PyTorch's formula, as
# the formula was (docs/accuracy.md).
def _log_or_one(x, y):
    """log x, read as 0 where x = 0 and y >= 0 (PyTorch's pow_backward_exponent mask)."""
    zero_base = A.logical_and(A.eq(x, 0.0), y >= 0)
    return A.where(zero_base, 0.0, A.log(A.where(zero_base, 1.0, x)))


_POW_PARTIALS = {
    # name: (∂/∂x, ∂/∂y, PyTorch's formula, its description)
    "pow_partial_self": (
        lambda x, y: _pow_partial("pow_partial_self_self", x, y),
        lambda x, y: _pow_partial("pow_partial_mixed", x, y, via="self"),
        lambda x, y: A.where(y == 0, 0.0, y * A.pow(x, y - 1)),
        "PyTorch pow_backward_self: exponent * self^(exponent - 1), 0 where exponent == 0",
    ),
    "pow_partial_exponent": (
        lambda x, y: _pow_partial("pow_partial_mixed", x, y, via="exponent"),
        lambda x, y: _pow_partial("pow_partial_exponent", x, y) * A.log(x),  # 0·log 0 = nan: PyTorch's
        lambda x, y: A.pow(x, y) * _log_or_one(x, y),
        "PyTorch pow_backward_exponent: result * log(self), 0 where self == 0 and exponent >= 0",
    ),
    "pow_partial_self_self": (
        lambda x, y: y * (y - 1) * (y - 2) * A.pow(x, y - 3),
        lambda x, y: A.pow(x, y - 2) * ((2 * y - 1) + y * (y - 1) * A.log(x)),
        lambda x, y: A.where(y == 0, 0.0, y * A.where(y - 1 == 0, 0.0, (y - 1) * A.pow(x, y - 2))),
        "autograd of PyTorch's pow_backward_self in self: exponent (exponent - 1) self^(exponent - 2)",
    ),
    "pow_partial_mixed": (  # via: the route PyTorch's value takes outside the exact region
        lambda x, y, via: A.pow(x, y - 2) * ((y - 1) * (1 + y * A.log(x)) + y),
        lambda x, y, via: A.pow(x, y - 1) * A.log(x) * (2 + y * A.log(x)),
        lambda x, y, via: A.pow(x, y - 1) * (1 + y * _log_or_one(x, y - 1)),
        "autograd of PyTorch's pow_backward_self in exponent (or pow_backward_exponent in self): "
        "self^(exponent - 1) (1 + exponent log(self))",
    ),
}
for _name, (_dx, _dy, _pytorch, _why) in _POW_PARTIALS.items():
    rule(
        _name,
        f"{''.join(w.title() for w in _name.split('_'))}Backward0",
        ("self", "exponent"),
        forward=binary_on_host(getattr(S, _name)),
        grads=(
            lambda c, g, _dx=_dx: g * _dx(c.self, c.exponent, **c.params),
            lambda c, g, _dy=_dy: g * _dy(c.self, c.exponent, **c.params),
        ),
        saves={"self": (0, 1), "exponent": (0, 1)},
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
        error=errors.composite(_pytorch, _why),
    )


def _zero_base(c):
    """Where d(self ** exponent)/d exponent is taken as 0: self == 0 and a real exponent >= 0
    (PyTorch's pow_backward_exponent; a complex exponent counts when its imaginary part is 0)."""
    e = c.exponent
    if e.dtype.kind == "c":
        return (c.self == 0) & (_CF.imag(e) == 0) & (_CF.real(e) >= 0)
    return (c.self == 0) & (e >= 0)


def _pow_scalar_base_grad(c, g):
    """d(base ** exponent)/d exponent = result * log(base); 0 where base == 0 and exponent >= 0."""
    if isinstance(c.self, complex) or c.result.dtype.kind == "c":  # a complex base: its principal log
        if c.self == 0:
            return g * A.where(
                (_CF.imag(c.exponent) == 0) & (_CF.real(c.exponent) >= 0), 0.0, c.result * -math.inf
            )
        return g * (c.result * cmath.log(c.self))
    log_base = math.log(c.self) if c.self > 0 else (-math.inf if c.self == 0 else math.nan)
    if c.self == 0:
        return g * A.where(c.exponent >= 0, 0.0, c.result * log_base)
    return g * (c.result * log_base)


rule(
    "pow_scalar_base",
    "PowBackward2",
    ("exponent",),  # self (the base): a Python number
    forward=lambda b, self: namespace_of(b).power(namespace_of(b).asarray(self, dtype=b.dtype), b),
    grads=(_pow_scalar_base_grad,),
    saves={"exponent": (0,), "result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_POW_ERROR,
    layout="contiguous",  # pow.Scalar's meta function allocates row-major
)
rule(
    "exp",
    "ExpBackward0",
    ("self",),
    forward=xp_fn("exp"),
    grads=(lambda c, g: g * c.result,),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_EXP_LOG_ERROR,
)
rule(
    "log",
    "LogBackward0",
    ("self",),
    forward=xp_fn("log"),
    grads=(lambda c, g: g / c.self,),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_EXP_LOG_ERROR,
)
rule(
    "sqrt",
    "SqrtBackward0",
    ("self",),
    forward=xp_fn("sqrt"),
    grads=(lambda c, g: g / (2 * c.result),),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "tanh",
    "TanhBackward0",
    ("self",),
    forward=xp_fn("tanh"),
    # PyTorch's tanh_backward(g, y), a primitive of its own (below) so that its error declaration
    # can cover JAX's formula too (docs/conformance.md, "Cancellation in a formula the reference
    # short-cuts"). PyTorch saves the result, and so does the reference (in-place semantics, hooks);
    # its value is the exact g·sech²(x) from x, read unsaved (Rule.reads): PyTorch's 1 − y² is 0
    # where tanh rounds to ±1 (tanh'(20) = 1.7e-17)
    grads=(lambda c, g: _tanh_backward(g, c.result, c.self),),
    saves={"result": (0,)},
    reads=("self",),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_TANH_ERROR,
)


def _tanh_backward(g, y, x=None):
    return apply(RULES["tanh_backward"], (g, y, x))


def _tanh_backward_output_grad(gg, g, y):
    return apply(RULES["tanh_backward_output_grad"], (gg, g, y))


def _tanh_backward_kernel(g, y, x):
    """aten tanh_backward, g·(1 − y²); g·sech²(x) rounded once from the exact value where the
    forward's float64 input x is known (issue 38, docs/accuracy.md)."""
    if exact_from_input(x, g):
        return g * on_host(S.tanh_d1)(x)
    return g * (1 - y * y)


# tanh's VJP and the derivative of that VJP in y, each a primitive whose value is PyTorch's formula
# (exact from x where x is known: its derivatives are the formula's in y, so the second derivative
# −2·y·g·sech²(x) is a product of accurate factors) and whose error is the larger of PyTorch's
# formula's and JAX's (errors.composite alternatives).
# JAX's tanh JVP is (g + g·y)·(1 − y) (jax._src.lax.lax, tanh_p); its derivative in y,
# g·(1 − y) − (g + g·y) = −2·g·y in real arithmetic, cancels where y ≈ 0 and leaves the rounding of
# its O(|g|) terms (under jax.jit XLA contracts it into an FMA): −1.22e-08 at x = 0, g = 0.7342,
# gg = −1.2911 in float32, where −2·g·y·gg is exactly 0. PyTorch's −2·y·g rounds relative to its
# (tiny) value, so a bound composed along PyTorch's formula alone is ~0 there.
rule(
    "tanh_backward",
    "TanhBackwardBackward0",
    ("grad_output", "output", "self"),  # self: tanh's input, hidden (None: PyTorch's formula)
    forward=_tanh_backward_kernel,
    grads=(
        lambda c, gg: _tanh_backward(gg, c.output, c.self),
        lambda c, gg: _tanh_backward_output_grad(gg, c.grad_output, c.output),
        None,
    ),
    saves={"output": (0, 1), "grad_output": (1,)},
    reads=("self",),
    hidden=("self",),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=errors.composite(
        lambda g, y, x=None: g * (1 - y * y),
        "PyTorch tanh_backward: g·(1 − y²); JAX's tanh JVP (g + g·y)·(1 − y) rounds in other places",
        alternatives=(lambda g, y, x=None: (g + g * y) * (1 - y),),
    ),
)
# JAX's second-order orders of (g + g·y)·(1 − y) in y (its tanh JVP, and the VJP JAX transposes
# from it, g·(1 − y) + (g·(1 − y))·y): a double backward forms gg·(g·(1 − y)) − (gg + gg·y)·g, reverse
# over forward (gg·(1 − y))·g − gg·(g + g·y). The partial products gg·y and gg·(1 − y) come first:
# where they are subnormal their rounding (eta) is multiplied by g. JAX's float16 vjp_vjp of tanh at
# x = 0.5493, g = 1e4, gg = 2.98e-7 (gg·y subnormal) is -0.0020123 for the exact -0.0022352
# (mpmath), 8.5 times PyTorch's one-product bound gg·(−2·y·g) (tan's orders, tan_backward_output_grad).
def _tanh_backward_output_grad_jax_vjp_vjp(gg, g, y):
    return gg * (g * (1 - y)) - (gg + gg * y) * g


def _tanh_backward_output_grad_jax_vjp_jvp(gg, g, y):
    return (gg * (1 - y)) * g - gg * (g + g * y)


rule(
    "tanh_backward_output_grad",
    "MulBackward0",  # PyTorch writes it inline in TanhBackwardBackward0's formula: a product
    ("grad", "grad_output", "output"),
    # derivatives.yaml, tanh_backward's output: grad * (-2 * output * grad_output)
    forward=lambda gg, g, y: gg * (-2 * y * g),
    grads=(
        lambda c, w: w * (-2 * c.output * c.grad_output),
        lambda c, w: w * c.grad * (-2 * c.output),
        lambda c, w: w * c.grad * (-2 * c.grad_output),
    ),
    saves={"grad": (1, 2), "grad_output": (0, 2), "output": (0, 1)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=errors.composite(
        lambda gg, g, y: gg * (-2 * y * g),
        "PyTorch: gg·(−2·y·g); JAX differentiates (g + g·y)·(1 − y) in y: gg·(g·(1 − y) − (g + g·y)), "
        "which cancels where y ≈ 0 (rounding ~u·|g·gg|, not u·|2·g·y·gg|); its double backward "
        "gg·(g·(1 − y)) − (gg + gg·y)·g and reverse over forward (gg·(1 − y))·g − gg·(g + g·y) form "
        "gg·y, gg·(1 − y) first (a subnormal partial product's rounding multiplied by g)",
        alternatives=(
            lambda gg, g, y: gg * (g * (1 - y) - (g + g * y)),
            _tanh_backward_output_grad_jax_vjp_vjp,
            _tanh_backward_output_grad_jax_vjp_jvp,
        ),
    ),
)
def _sigmoid_kernel(a):
    """1/(1 + e^-a); of a complex a near the poles i(2k + 1)pi, where 1 + e^-a cancels (|1 + e^-a| <
    1/2), (1 + tanh(a/2))/2, whose |tanh(a/2)| >= 3 there does not: at a = 1.79e-13 - i pi (complex128)
    the plain formula is 3.1e-4 off (mpmath), this one within an ulp (tanh is accurate at its poles).
    A complex a with Re a < 0 takes e^a/(1 + e^a): e^-a overflows past Re a = -709 to an infinity
    whose other part is inf·sin(Im a), and 1/(1 + e^-a) was nan at -2361.6 + 4e-38i where sigmoid
    is e^a (mpmath: 1e-1026, 0 in float64; JAX and TensorFlow answer 0)."""
    xp = namespace_of(a)
    if a.dtype.kind != "c":
        return (1 / (1 + xp.exp(-a))).astype(a.dtype, copy=False)
    with np.errstate(all="ignore"):
        left = a.real < 0
        e = xp.exp(xp.where(left, a, -a))  # |e| <= 1
        den = 1 + e
        out = xp.where(left, e / den, 1 / den)
        out = xp.where(xp.abs(den) < 0.5, (1 + xp.tanh(a / 2)) / 2, out)
    return out.astype(a.dtype, copy=False)


rule(
    "sigmoid",
    "SigmoidBackward0",
    ("self",),
    forward=_sigmoid_kernel,
    # PyTorch's sigmoid_backward(grad, result), one primitive as in derivatives.yaml (one node and
    # one kernel per backward instead of three Tensor ops; its error declaration below covers the
    # JAX and TensorFlow formulas too). The result is saved as in PyTorch; x, read unsaved
    # (Rule.reads), makes the value exact: s·(1 − s) is 0 where s rounds to 1
    grads=(lambda c, g: _sigmoid_backward(g, c.result, c.self),),
    saves={"result": (0,)},
    reads=("self",),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_SIGMOID_ERROR,
)


def _sigmoid_backward(g, y, x=None):
    return apply(RULES["sigmoid_backward"], (g, y, x))


def _sigmoid_backward_kernel(g, y, x=None):
    """aten sigmoid_backward: grad_output * (1 - output) * output, each operation rounded to the
    dtype, except bfloat16's, computed in float32 and rounded once (torch 2.13's CPU kernel: float16
    rounds each operation; tests/autograd/test_torch_pointwise.py compares them bit for bit).
    Where sigmoid's float64 input x is known: g·s(x)·s(−x) rounded once from the exact value."""
    if exact_from_input(x, g):
        return g * on_host(S.sigmoid_d1)(x)
    if g.dtype == bfloat16:  # (not dtype.name: NumPy computes that in Python, microseconds per call)
        f32 = namespace_of(g).float32
        return (g.astype(f32) * (1 - y.astype(f32)) * y.astype(f32)).astype(g.dtype)
    return g * (1 - y) * y


def _sigmoid_backward_output_grad(c, gg):
    """d/dy of (g·(1 − y))·y: gg·g·(−2y + 1), Tensor ops as PyTorch writes it; where x is known,
    the factor 1 − 2y (which cancels near y = 1/2) is the primitive sigmoid_one_minus_twice, exact
    from x with the derivative −2 in y."""
    if c.self is None:
        return gg * c.grad_output * (-2 * c.output + 1)
    return gg * c.grad_output * apply(RULES["sigmoid_one_minus_twice"], (c.output, c.self))


# sigmoid's VJP, a primitive whose value is PyTorch's kernel's, (g·(1 − y))·y (BinaryOpsKernel.cpp,
# sigmoid_backward_kernel; complex: g·conj((1 − y)·y), which the "conjugate" convention of the
# plain formula gives), exact from x where x is known. Its derivatives are derivatives.yaml's: in
# grad_output sigmoid_backward(gg, y) (node SigmoidBackwardBackward0 again), in output
# gg·g·(−2y + 1), written as PyTorch writes it, Tensor ops whose outermost is a product
# (MulBackward0). JAX's logistic JVP is g·(y·(1 − y))
# (jax._src.lax.lax, logistic_p; g·(y·σ(−x)) only under AccuracyMode.HIGHEST, which has no
# cancellation where y → 1 and so lies within the bound of the 1 − y formulas), TensorFlow's
# SigmoidGrad (Eigen scalar_sigmoid_gradient_op) (g·y)·(1 − y), or g·(y·(1 − y)) vectorised: the
# same three operations rounded in other orders, declared as alternatives. Their derivatives in y
# (JAX: g·((1 − y) − y)) round where y ≈ 1/2 by ~u·|g·gg| absolutely, which y's own declared error
# (sigmoid's absolute 4u, carried as 2·|g·gg|·e_y) exceeds: unlike tanh's (exact at y ≈ 0), it
# needs no primitive of its own.
rule(
    "sigmoid_backward",
    "SigmoidBackwardBackward0",
    ("grad_output", "output", "self"),  # self: sigmoid's input, hidden (None: PyTorch's formula)
    forward=_sigmoid_backward_kernel,
    grads=(lambda c, gg: _sigmoid_backward(gg, c.output, c.self), _sigmoid_backward_output_grad, None),
    saves={"output": (0, 1), "grad_output": (1,)},
    reads=("self",),
    hidden=("self",),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=errors.composite(
        lambda g, y, x=None: g * (1 - y) * y,
        "PyTorch sigmoid_backward: (g·(1 − y))·y; JAX's logistic JVP and TensorFlow's vectorised "
        "SigmoidGrad g·(y·(1 − y)), TensorFlow's scalar SigmoidGrad (g·y)·(1 − y): the same three "
        "operations rounded in other orders",
        alternatives=(lambda g, y, x=None: g * (y * (1 - y)), lambda g, y, x=None: g * y * (1 - y)),
    ),
)
# 1 − 2y of y = s(x), exactly −tanh(x/2) from x (1 − 2y cancels near x = 0, where sigmoid'' is
# s'·(1 − 2s)); linear in y: its derivative −2 (MulBackward0, as PyTorch's −2·y + 1)
rule(
    "sigmoid_one_minus_twice",
    "MulBackward0",
    ("output", "self"),
    # (+ 0.0: +0 at x = ±0, as 1 − 2·(1/2))
    forward=lambda y, x: -namespace_of(x).tanh(x / 2) + 0.0 if exact_from_input(x, y) else 1 - 2 * y,
    grads=(lambda c, g: g * -2.0, None),
    hidden=("self",),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "relu",
    "ReluBackward0",
    ("self",),
    forward=lambda a: namespace_of(a).maximum(a, 0).astype(a.dtype, copy=False),
    grads=(lambda c, g: A.threshold_backward(g, c.result, 0.0),),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "threshold_backward",
    "ThresholdBackwardBackward0",
    ("grad_output", "self"),
    forward=lambda g, a, threshold: namespace_of(g).where(
        a <= threshold, namespace_of(g).zeros((), g.dtype), g
    ),
    grads=(lambda c, g: A.threshold_backward(g, c.self, c.threshold), lambda c, g: A.zeros_like(g)),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    operands=(1, 0),  # PyTorch's kernel: self, then grad_output
)
rule(
    "abs",
    "AbsBackward0",
    ("self",),
    forward=xp_fn("abs"),
    grads=(lambda c, g: g * (P.sgn(c.self) if c.self.dtype.kind == "c" else A.sign(c.self)),),
    saves={"self": (0,)},
    complex_grads="explicit",  # derivatives.yaml: grad * self.sgn(); JVP: Re(conj(t) * sgn(self))
    jvp=(
        lambda c, t: (
            _CF.real(_CF.conj_physical(t) * P.sgn(c.self))
            if c.self.dtype.kind == "c"
            else t * A.sign(c.self)
        ),
    ),
    batch=BATCH_ELEMENTWISE,
)


def _sign(a):
    """(0 < a) - (a < 0), as PyTorch's kernel: sign(nan) = 0 (NumPy's np.sign gives nan) and
    sign(-0.0) = +0.0; so the gradient of abs (grad * sign) is 0 at nan, as in PyTorch."""
    if a.dtype == np.bool_:
        return a.copy()
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)


rule(
    "sign",
    "SignBackward0",
    ("self",),
    forward=_sign,
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
def _reciprocal_grad(c, g):
    """-g·y² (y = 1/x), PyTorch's -g·(y·y). Where y is finite and y·y overflows (|x| below 2^-511 in
    float64: the smallest normals, 1e-200) the exact product is finite for a tiny g and 0 for a
    zero one, where -g·(y·y) is -inf or nan: those elements take -(g·y)·y. Only there: at x = 0 or
    ±inf (y infinite or 0) PyTorch's order keeps its nan/inf patterns, which JAX shares (ordering
    the product so everywhere moved the second-order checks away from both: 3a072c2)."""
    y = c.result
    square = y * y
    if y.dtype.kind != "f":
        return -g * square
    xp = namespace_of(y._data)
    overflowed = xp.isfinite(y._data) & xp.isinf(square._data)
    if not bool(overflowed.any()):
        return -g * square
    over = _make(overflowed)
    one = A.ones((), dtype=y.dtype, device=y.device)
    y_over, y_rest = A.where(over, y, one), A.where(over, one, y)  # each branch reads 1 in the other's
    return A.where(over, -(g * y_over) * y_over, -g * (y_rest * y_rest))


rule(
    "reciprocal",
    "ReciprocalBackward0",
    ("self",),
    forward=lambda a: (1 / a).astype(a.dtype, copy=False),
    grads=(_reciprocal_grad,),
    saves={"result": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "masked_fill",
    "MaskedFillBackward0",
    ("self", "mask"),  # value: a Python number
    forward=lambda a, mask, value: namespace_of(a).where(
        mask, namespace_of(a).asarray(value, dtype=a.dtype), a
    ),
    grads=(lambda c, g: A.where(c.mask, 0.0, g), None),
    saves={"mask": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_SELECT_ERROR,
    layout="contiguous",  # masked_fill is clone(contiguous_format) + masked_fill_
)
rule(
    "masked_fill_tensor",
    "MaskedFillBackward1",
    ("self", "mask", "value"),  # value: a 0-d tensor
    forward=lambda a, mask, value: namespace_of(a).where(mask, value.astype(a.dtype), a),
    grads=(lambda c, g: A.where(c.mask, 0.0, g), None, lambda c, g: A.sum(A.where(c.mask, g, 0.0))),
    saves={"mask": (0, 2)},
    jvp=(
        lambda c, t: A.where(c.mask, 0.0, t),
        None,
        lambda c, t: A.where(c.mask, A.expand(t, c.result.shape), 0.0),
    ),
    batch=BATCH_ELEMENTWISE,
    layout="contiguous",  # masked_fill is clone(contiguous_format) + masked_fill_
)


def _div_mode(a, b, rounding_mode):
    """div with rounding: trunc(a / b) or PyTorch's floor division (NumPy's floor_divide uses the
    same fmod-based algorithm for floats); integers divide exactly, rounding toward zero or down."""
    xp = namespace_of(a, b)
    if a.dtype.kind in "iu":
        if rounding_mode == "floor":
            return xp.floor_divide(a, b)
        q = xp.abs(a) // xp.abs(b)
        return xp.where((a < 0) != (b < 0), -q, q).astype(a.dtype, copy=False)
    if rounding_mode == "floor":
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.floor_divide(a, b).astype(a.dtype, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.trunc(a / b).astype(a.dtype, copy=False)


def _div_mode_bound(p, arrays, errs, params, outs):
    """div(a, b, rounding_mode="trunc" | "floor"): an integer-valued step function of q = a / b that a
    framework evaluates from a rounded quotient: trunc(fl(a / b)) (PyTorch's div_trunc; in float16
    the quotient is rounded to float16 first, so -0.2556 / 0.01504 = -16.9986 becomes -17.0 and
    truncates to -17), or PyTorch's floor division (a - fmod(a, b)) / b with its floor correction:
    two roundings. So the framework's quotient is within 2u|q| + (e_a + |q|·e_b) / |b| of the
    reference's exact q (first order in the inputs' errors e_a, e_b), and its result may differ by
    one for every integer within that distance of q (a jump crossed; fmod's JVP t_a - t_b·trunc(a/b)
    and remainder's VJP -g·floor(a/b) carry it, times the tangent or cotangent). Exact elsewhere;
    integer division is exact."""

    a, b = (np.asarray(v) for v in arrays[:2])
    if not (np.issubdtype(a.dtype, np.inexact) or np.issubdtype(b.dtype, np.inexact)):
        return [np.zeros(np.shape(outs[0]))]
    a, b = a.astype(np.float64), b.astype(np.float64)
    u = p.u + REFERENCE_U
    with np.errstate(all="ignore"):
        q = a / b
        slack = 2 * u * np.abs(q)
        if errs[0] is not None:
            slack = slack + np.asarray(errs[0], dtype=np.float64) / np.abs(b)
        if errs[1] is not None:
            slack = slack + np.abs(q) * np.asarray(errs[1], dtype=np.float64) / np.abs(b)
    return [np.broadcast_to(errors.jumps_within(q, slack), np.shape(outs[0])).copy()]


rule(
    "div_mode",
    "DivBackward2",
    ("self", "other"),
    forward=_div_mode,
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.zeros_like(g)),
    jvp=(lambda c, t: A.zeros_like(c.result), lambda c, t: A.zeros_like(c.result)),
    batch=BATCH_ELEMENTWISE,
    error=errors.derived_bound(
        _div_mode_bound,
        "analysis: one unit per integer within the rounded quotient's error (2u|q| and the inputs') of a / b",
    ),
)


def _clamp_tensor(x, lo, hi):
    xp = namespace_of(x, lo, hi)
    if lo is not None:
        x = xp.maximum(x, lo)
    if hi is not None:
        x = xp.minimum(x, hi)
    return xp.array(xp.broadcast_to(x, xp.broadcast_shapes(*(v.shape for v in (x, lo, hi) if v is not None))))


def _clamp_self_mask(c):
    """clamp_backward_min_max: self gets the gradient where min <= self <= max."""
    ok = None
    if c.min is not None:
        ok = A.ge(c.self, c.min)
    if c.max is not None:
        le = A.le(c.self, c.max)
        ok = le if ok is None else A.logical_and(ok, le)
    return ok


def _clamp_min_mask(c):
    """min gets it where self < min (and min < max when both are given: then max wins)."""
    m = A.lt(c.self, c.min)
    return m if c.max is None else A.logical_and(m, A.lt(c.min, c.max))


def _clamp_max_mask(c):
    """max gets it where self > max, or everywhere max < min (the result is max there)."""
    m = A.gt(c.self, c.max)
    return m if c.min is None else A.logical_or(m, A.lt(c.max, c.min))


rule(
    "clamp_tensor",
    "ClampBackward0",
    ("self", "min", "max"),  # tensor bounds, either may be None
    forward=_clamp_tensor,
    grads=(
        lambda c, g: A.where(_clamp_self_mask(c), g, 0.0),
        lambda c, g: A.where(_clamp_min_mask(c), g, 0.0),
        lambda c, g: A.where(_clamp_max_mask(c), g, 0.0),
    ),
    saves={"self": (0, 1, 2), "min": (0, 1, 2), "max": (0, 1, 2)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "clamp",
    "ClampBackward1",
    ("self",),  # min, max: Python numbers or None
    forward=K.clamp,
    grads=(lambda c, g: A.where(A.clamp_mask(c.self, c.min, c.max), g, 0.0),),
    saves={"self": (0,)},
    jvp=AUTO_ELEMENT_WISE,
    batch=BATCH_ELEMENTWISE,
    error=_SELECT_ERROR,
)
rule(
    "where",
    "WhereBackward0",
    ("condition", "self", "other"),
    forward=xp_fn("where"),
    grads=(None, lambda c, g: A.where(c.condition, g, 0.0), lambda c, g: A.where(c.condition, 0.0, g)),
    saves={"condition": (1, 2)},
    jvp=(None, lambda c, t: A.where(c.condition, t, 0.0), lambda c, t: A.where(c.condition, 0.0, t)),
    batch=BATCH_ELEMENTWISE,
    error=_SELECT_ERROR,
)
rule(
    "maximum",
    "MaximumBackward0",
    ("self", "other"),
    forward=xp_fn("maximum"),
    grads=(
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self < c.other, 0.0),
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self > c.other, 0.0),
    ),
    saves={"self": (0, 1), "other": (0, 1)},
    # PyTorch: other_t + where(self == other, 0.5, self > other) * (self_t - other_t): where neither
    # compares (a NaN operand) the tangent is other's
    jvp=(
        lambda c, t: A.where(c.self > c.other, t, A.where(c.self == c.other, t / 2, 0.0)),
        lambda c, t: A.where(c.self > c.other, 0.0, A.where(c.self == c.other, t / 2, t)),
    ),
    batch=BATCH_ELEMENTWISE,
    error=_SELECT_ERROR,
)
rule(
    "minimum",
    "MinimumBackward0",
    ("self", "other"),
    forward=xp_fn("minimum"),
    grads=(
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self > c.other, 0.0),
        lambda c, g: A.where(c.self == c.other, g / 2, g).masked_fill(c.self < c.other, 0.0),
    ),
    saves={"self": (0, 1), "other": (0, 1)},
    # PyTorch: other_t + where(self == other, 0.5, self < other) * (self_t - other_t)
    jvp=(
        lambda c, t: A.where(c.self < c.other, t, A.where(c.self == c.other, t / 2, 0.0)),
        lambda c, t: A.where(c.self < c.other, 0.0, A.where(c.self == c.other, t / 2, t)),
    ),
    batch=BATCH_ELEMENTWISE,
    error=_SELECT_ERROR,
)
rule(
    "to",
    "ToCopyBackward0",
    ("self",),
    forward=lambda a, dtype, device=None, source=None: _to_device(
        (a.real if a.dtype.kind == "c" and dtype.kind != "c" else a).astype(dtype), device
    ),
    grads=(lambda c, g: A.to(g, dtype=c.dtypes[0], device=c.params.get("source")),),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
    layout="preserve",  # _to_copy: empty_like's rule
)
rule(
    "clone",
    "CloneBackward0",
    ("self",),
    forward=lambda a: a.copy(),
    grads=(lambda c, g: g,),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
    layout="preserve",  # empty_like's rule (clone(memory_format=...) relayouts it)
    # a copy: the values moved, their errors with them, nothing rounded (no underflow term: a copy
    # of 6.27e-308i under flush-to-zero is itself; a subnormal input is the flushed reading's)
    error=errors.GATHER,
)

# ---- in-place-only primitives (copy_, fill_, zero_): the old value of self gets no gradient -----


def _fill_tensor_batch(b, params):
    """x.fill_(value) with a batched value: copy the value, aligned, into the batched x."""
    return apply(RULES["copy"], (b.expanded(0), b.aligned(1, len(b.inputs[0].shape))), {}), 0


rule(
    "copy",
    "torch::autograd::CopyBackwards",
    ("self", "src"),
    forward=lambda a, src: namespace_of(a).broadcast_to(src, a.shape).astype(a.dtype),
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.to(g, c.dtypes[1])),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)
rule(
    "fill",
    "FillBackward2",
    ("self",),
    forward=lambda a, value: namespace_of(a).full_like(a, value),  # value: a number
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=(lambda c, t: A.zeros_like(t),),
    batch=BATCH_ELEMENTWISE,
)
rule(
    "fill_tensor",
    "FillBackward3",
    ("self", "value"),  # value: a 0-d tensor (also x[i] = number)
    forward=lambda a, value: namespace_of(a).full_like(a, value),
    grads=(lambda c, g: A.zeros_like(g), lambda c, g: A.sum(g)),
    jvp=AUTO_LINEAR,
    batch=_fill_tensor_batch,
    error=errors.GATHER,  # every element is the value, moved: its error, no rounding
)
rule(
    "zero",
    "ZeroBackward0",
    ("self",),
    forward=xp_fn("zeros_like"),
    grads=(lambda c, g: A.zeros_like(g),),
    jvp=AUTO_LINEAR,
    batch=BATCH_ELEMENTWISE,
)

# ---- public functions (reference.ops.public generates them; read as A.tanh, ...) -------------------------
# The other primitives here have hand-written functions in reference.ops.api: their signatures take
# more than the tensor or their operands (div's rounding_mode, pow's number base and exponent), or they
# check more than their rule (neg's bool).
EXPORTS = {
    "exp": Export(reference="exp", methods="exp exp_", inplace="kernel"),
    "log": Export(reference="log", methods="log log_", inplace="kernel"),
    "sqrt": Export(reference="sqrt", methods="sqrt sqrt_", inplace="kernel"),
    "tanh": Export(reference="tanh", methods="tanh tanh_", nn_functional="tanh", inplace="kernel"),
    "sigmoid": Export(
        reference="sigmoid",
        methods="sigmoid sigmoid_",
        nn_functional="sigmoid",
        special="expit",
        inplace="kernel",
    ),
    "relu": Export(reference="relu", methods="relu relu_", call="same", inplace="kernel"),  # F.relu: inplace=
    "abs": Export(reference="abs", methods="abs", call="same"),  # abs_: reference.ops.api
    "sign": Export(reference="sign", methods="sign sign_", call="same", inplace="kernel"),
    "neg": Export(methods="neg_", inplace="kernel"),  # neg: reference.ops.api
}

# the binary ones (reference.ops.public; x + y, 2 * x and x -= y are these functions too; x - y's
# reflected __rsub__ is reference.ops.methods': a number goes to aten's rsub)
MULTI_EXPORTS = {
    "add": MultiExport(reference="add", methods="add add_ __add__ __radd__ __iadd__", call="arith", alpha=True),
    "sub": MultiExport(
        reference="sub", methods="sub sub_ __sub__ __isub__", call="arith", alpha=True, check=check_sub
    ),
    "mul": MultiExport(reference="mul", methods="mul mul_ __mul__ __rmul__ __imul__", call="arith"),
    "maximum": MultiExport(reference="maximum", methods="maximum", call="arith"),
    "minimum": MultiExport(reference="minimum", methods="minimum", call="arith"),
}

# ---- complex tensors (Rule.complex_inputs, applied by reference.ops.rules; docs/complex.md) ---------
#: the primitives of this family that accept complex tensors (each checked against torch in
#: tests/autograd/test_torch_complex.py); the others refuse them with PyTorch's error
COMPLEX_INPUTS = """
    abs add clone copy div exp fill fill_tensor log masked_fill masked_fill_tensor mul neg pow
    pow_scalar_base pow_tensor reciprocal rsub sigmoid sigmoid_backward sigmoid_one_minus_twice sqrt
    sub tanh tanh_backward tanh_backward_output_grad to where zero
"""
