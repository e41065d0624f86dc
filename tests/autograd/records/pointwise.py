"""Samples for the pointwise family (:mod:`reference.ops.rules.pointwise`) and the elementwise
rules added with it (masked_fill with a tensor value, div with rounding_mode, clamp with tensor
bounds). Kinds: ``a`` any, ``p`` positive (>= 0.5), ``f`` 0.05 <= |x| <= 0.95 away from 0 and +-0.5."""

import reference as T
from tests.autograd.records.activations import _derivative

S = T.special


def _step(a):
    """0.75 where a > 0, else -0.25: a batched value with no gradient or tangent."""
    return (a > 0).to(a.dtype) - 0.25


def _u(fn, kind="a", shape=(2, 3)):
    return [("unary", lambda a: fn(a), [shape], kind)]


RECORDS = {
    "sin": _u(T.sin),
    "cos": _u(lambda a: a.cos()),
    "tan": _u(T.tan, "f"),
    "asin": _u(T.asin, "f"),
    "acos": _u(T.arccos, "f"),
    "atan": _u(lambda a: a.atan()),
    "sinh": _u(T.sinh),
    "cosh": _u(T.cosh),
    "asinh": _u(T.asinh),
    "acosh": _u(lambda a: T.acosh(a + 1), "p"),
    "atanh": _u(T.atanh, "f"),
    "deg2rad": _u(T.deg2rad),
    "rad2deg": _u(T.rad2deg),
    "sinc": _u(T.sinc),
    "log1p": _u(T.log1p, "p"),
    "expm1": _u(T.expm1),
    "log2": _u(T.log2, "p"),
    "log10": _u(T.log10, "p"),
    "exp2": _u(T.exp2),
    "rsqrt": _u(T.rsqrt, "p"),
    "erf": _u(T.erf),
    "erfc": _u(S.erfc),
    "erfcx": _u(S.erfcx) + [("wide", lambda a: S.erfcx(a * 8), [(4,)], "a")],
    "erfinv": _u(T.erfinv, "f"),
    "lgamma": _u(T.lgamma, "p"),
    "digamma": _u(T.digamma, "p"),
    "polygamma": [
        ("n1", lambda a: T.polygamma(1, a), [(3,)], "p"),
        ("n2_method", lambda a: a.polygamma(2), [(3,)], "p"),
    ],
    "mvlgamma": [("p3", lambda a: T.mvlgamma(a + 1, 3), [(3,)], "p")],
    "ndtri": [("of_sigmoid", lambda a: S.ndtri(a.sigmoid()), [(3,)], "a")],
    "ndtr": _u(S.ndtr),
    "log_ndtr": _u(S.log_ndtr),
    "i0": _u(T.i0),
    "i0e": _u(S.i0e, "f"),
    "i1": _u(S.i1),
    "i1e": _u(S.i1e, "f"),
    "entr": _u(S.entr, "p"),
    "logit": [
        ("unit_interval", lambda a: T.logit(a * 0.4 + 0.5), [(4,)], "f"),
        ("eps", lambda a: T.logit(a * 0.4 + 0.5, eps=0.2), [(4,)], "f"),
    ],
    "sgn": [("times_x", lambda a: a.sgn() * a, [(4,)], "f")],
    "floor": [("times_x", lambda a: T.floor(a * 3) * a, [(4,)], "f")],
    "ceil": [("times_x", lambda a: T.ceil(a * 3) * a, [(4,)], "f")],
    "trunc": [("times_x", lambda a: T.trunc(a * 3) * a, [(4,)], "f")],
    "round": [("times_x", lambda a: T.round(a * 3) * a, [(4,)], "f")],
    "round_decimals": [("one", lambda a: T.round(a * 3, decimals=1) * a, [(4,)], "f")],
    "frac": [("times_x", lambda a: T.frac(a * 3) * a, [(4,)], "f")],
    "nan_to_num": [("finite", lambda a: T.nan_to_num(a, posinf=1.0), [(4,)], "a")],
    "atan2": [("broadcast", lambda a, b: T.atan2(a, b), [(2, 3), (3,)], "aa")],
    "hypot": [("broadcast", lambda a, b: T.hypot(a, b), [(2, 3), (2, 1)], "aa")],
    "logaddexp": [("broadcast", lambda a, b: T.logaddexp(a, b), [(2, 3), (3,)], "aa")],
    "logaddexp2": [("same", lambda a, b: T.logaddexp2(a, b), [(3,), (3,)], "aa")],
    "copysign": [("tensor", lambda a, b: T.copysign(a, b), [(4,), (4,)], "ff")],
    "copysign_scalar": [("number", lambda a: T.copysign(a, -1.0) * a, [(4,)], "f")],
    "xlogy": [("broadcast", lambda a, b: T.xlogy(a, b), [(2, 3), (3,)], "ap")],
    "xlogy_scalar_self": [("number_self", lambda b: T.xlogy(2.0, b), [(3,)], "p")],
    "xlogy_scalar_other": [("number_other", lambda a: T.xlogy(a, 3.0), [(3,)], "a")],
    "xlog1py": [("tensor", lambda a, b: S.xlog1py(a, b), [(3,), (3,)], "ap")],
    "fmod": [("tensor", lambda a, b: T.fmod(a * 3, b), [(4,), (4,)], "fp")],
    "remainder": [("tensor", lambda a, b: T.remainder(a * 3, b), [(4,), (4,)], "fp")],
    "fmod_scalar": [("number", lambda a: T.fmod(a * 3, 0.7), [(4,)], "f")],
    "remainder_scalar": [("number", lambda a: a.remainder(0.7) * a, [(4,)], "f")],
    "fmax": [("broadcast", lambda a, b: T.fmax(a, b), [(2, 4), (4,)], "ff")],
    "fmin": [("same", lambda a, b: T.fmin(a, b), [(4,), (4,)], "ff")],
    # Ops whose derivatives raise (as PyTorch's do, in reverse and forward mode): samples run them
    # on values derived from the input through a comparison (batched under vmap, but carrying no
    # gradient or tangent), so forward values and batch rules are checked, derivatives never asked.
    "heaviside": [
        ("on_mask", lambda a, b: T.where(T.heaviside(_step(a), _step(b)) > 0.5, a, b * b), [(4,), (4,)], "fa")
    ],
    "nextafter": [("identity_grad", lambda a, b: T.nextafter(a, b) * b, [(4,), (4,)], "aa")],
    "remainder_scalar_self": [("on_mask", lambda a: T.remainder(2.0, _step(a) + 1.5) * a, [(4,)], "f")],
    "asinh_inplace": [("on_mask", lambda a: _step(a).asinh_() * a, [(4,)], "f")],
    "acosh_inplace": [("on_mask", lambda a: (_step(a) + 1.5).acosh_() * a, [(4,)], "f")],
    "atanh_inplace": [("on_mask", lambda a: (_step(a) * 0.5).atanh_() * a, [(4,)], "f")],
    "polygamma_inplace": [("n1", lambda a: (a * 1).polygamma_(1), [(3,)], "p")],
    "lerp": [
        ("small_weight", lambda a, b: T.lerp(a, b, 0.3), [(2, 3), (3,)], "aa"),
        ("large_weight", lambda a, b: a.lerp(b, 0.8), [(3,), (3,)], "aa"),
    ],
    "lerp_tensor": [("weights", lambda a, b, w: T.lerp(a, b, w), [(2, 3), (3,), (2, 3)], "aaf")],
    "addcmul": [("value", lambda a, b, c: T.addcmul(a, b, c, value=-1.5), [(2, 3), (3,), (2, 1)], "aaa")],
    "addcdiv": [("value", lambda a, b, c: T.addcdiv(a, b, c, value=0.5), [(3,), (3,), (3,)], "aap")],
    "clamp_min": [("number", lambda a: T.clamp_min(a, 0.2) * a, [(4,)], "f")],
    "clamp_max": [("number", lambda a: a.clamp_max(0.2) * a, [(4,)], "f")],
    "clamp_min_tensor": [("tensor", lambda a, b: T.clamp_min(a, b), [(4,), (4,)], "ff")],
    "clamp_max_tensor": [("tensor", lambda a, b: T.clamp_max(a, b), [(2, 4), (4,)], "ff")],
    "clamp_tensor": [
        ("min_only", lambda a, b: T.clamp(a, b), [(4,), (4,)], "ff"),
        ("both", lambda a, b, c: T.clamp(a, b, c), [(2, 4), (4,), (2, 1)], "fff"),
        ("max_only", lambda a, c: T.clamp(a, max=c), [(4,), (4,)], "ff"),
    ],
    "masked_fill_tensor": [
        ("value_grad", lambda a, v: T.masked_fill(a, a > 0, v[0]) * a, [(4,), (2,)], "fa")
    ],
    "div_mode": [
        ("floor", lambda a, b: T.div(a * 3, b, rounding_mode="floor") * a, [(4,), (4,)], "fp"),
        ("trunc", lambda a, b: T.div(a * 3, b, rounding_mode="trunc") + b, [(4,), (4,)], "fp"),
        ("number", lambda a: a.div(0.3, rounding_mode="trunc") * a, [(4,)], "f"),
    ],
}


# the exact derivative primitives <name>_d1, _d2, _d3 of sinc, logit, erfinv and the inverse
# trigonometric and hyperbolic functions, and exp_square and its VJP exp_square_backward
# (reference.ops.rules.pointwise): _dk runs in the backward of the (k-1)-th derivative, as for the
# activations' (tests/autograd/records/activations.py)
def _derivative_records():
    out = {}
    for name, fn, kind in (
        ("sinc", T.sinc, "a"),
        ("logit", lambda a: T.logit(a * 0.4 + 0.5), "f"),
        ("erfinv", T.erfinv, "f"),
        ("asin", T.asin, "f"),
        ("atanh", T.atanh, "f"),
        ("atan", T.atan, "a"),
        ("asinh", T.asinh, "a"),
    ):
        for k in (1, 2, 3):
            opts = (
                {"first_order_only": "the third derivative has no derivative of its own (no fourth)"}
                if k == 3
                else {}
            )
            out[f"{name}_d{k}"] = [(f"derivative_{k - 1}", _derivative(fn, k - 1), [(2, 3)], kind, opts)]
    out["exp_square"] = [("erf_derivative", _derivative(T.erf, 1), [(2, 3)], "a")]
    # exp_square's VJP (the second derivative's primitive) runs in the backward of erf''
    out["exp_square_backward"] = [("erf_second_derivative", _derivative(T.erf, 2), [(2, 3)], "a")]
    # the VJPs of the ops PyTorch saves the result of, exact from the input (result_backward)
    for name, fn in (("expm1", T.expm1), ("ndtri", lambda a: S.ndtri(a.sigmoid()))):
        out[f"{name}_backward"] = [
            (
                f"via_{name}",
                lambda a, b, fn=fn: T.autograd.grad(fn(a), a, b, create_graph=True)[0],
                [(3,), (3,)],
                "aa",
            )
        ]
    # tan's VJP (PyTorch's formula from the result; the error declares TensorFlow's from the input too)
    out["tan_backward"] = [
        ("via_tan", lambda a, b: T.autograd.grad(T.tan(a), a, b, create_graph=True)[0], [(3,), (3,)], "fa")
    ]
    # the derivative of tan's VJP in the result (its error: the frameworks' orders of gg·2gy)
    out["tan_backward_output_grad"] = [
        (
            "via_tan",
            lambda a, b, c: T.autograd.grad(
                T.autograd.grad(T.tan(a), a, b, create_graph=True)[0], a, c, create_graph=True
            )[0],
            [(3,), (3,), (3,)],
            "faa",
        )
    ]
    # 1 - 2s of sigmoid's result, in the derivative of its VJP in the result
    out["sigmoid_one_minus_twice"] = [
        (
            "via_sigmoid",
            lambda a, b, c: T.autograd.grad(
                T.autograd.grad(a.sigmoid(), a, b, create_graph=True)[0], a, c, create_graph=True
            )[0],
            [(3,), (3,), (3,)],
            "aaa",
        )
    ]
    # erfcx's, ndtr's, log_ndtr's and the Bessel functions' exact derivative primitives, as the inverse
    # functions' (i0e and i1e away from their kink at 0)
    for name, fn, kind in (
        ("erfcx", S.erfcx, "a"),
        ("ndtr", S.ndtr, "a"),
        ("log_ndtr", S.log_ndtr, "a"),
        ("i0e", S.i0e, "f"),
        ("i1", S.i1, "a"),
        ("i1e", S.i1e, "f"),
    ):
        for k in (1, 2, 3):
            opts = {"first_order_only": "the third derivative has no derivative of its own"} if k == 3 else {}
            out[f"{name}_d{k}"] = [(f"derivative_{k - 1}", _derivative(fn, k - 1), [(2, 3)], kind, opts)]
    # the partials of atan2, hypot, logaddexp and pow (primitives of both inputs): the first in the
    # backward of the op, the next in the backward of its gradient
    for fn, first, second in (
        (T.atan2, ("atan2_partial",), ("atan2_partial_pq", "atan2_partial_diff")),
        (T.hypot, ("hypot_partial",), ("hypot_partial_pq", "hypot_partial_qq")),
        (T.logaddexp, ("logaddexp_weight",), ("logaddexp_weight_d1",)),
        (T.pow, ("pow_partial_self", "pow_partial_exponent"), ("pow_partial_self_self", "pow_partial_mixed")),
    ):
        for names, order in ((first, 0), (second, 1)):
            for name in names:
                out[name] = [(f"order_{order}", _binary_derivative(fn, order), [(2, 3), (3,)], "pp")]
    return out


def _binary_derivative(fn, order):
    """``fn(a, b)`` (order 0) or the sum of its two partial derivatives (order 1), as a
    differentiable program: its backward runs the next derivative primitives."""

    def prog(a, b):
        a = a if a.requires_grad else a.clone().requires_grad_()
        b = b if b.requires_grad else b.clone().requires_grad_()
        out = fn(a, b)
        if order:
            da, db = T.autograd.grad(out, (a, b), T.ones_like(out), create_graph=True)
            out = da + db
        return out

    return prog


RECORDS.update(_derivative_records())
