"""Records of the Bessel functions (reference/ops/rules/special.py): torch.special.bessel_j0,
bessel_j1, bessel_y0, bessel_y1, modified_bessel_k0, modified_bessel_k1 and the scaled
scaled_modified_bessel_k0 = e^x K0, scaled_modified_bessel_k1 = e^x K1 (tf.math.special.bessel_k0e,
bessel_k1e).

TensorFlow differentiates all eight (tf.math.special.bessel_*, its registered gradients); JAX has
J0 and J1 only, through jax.scipy.special.bessel_jn (a recurrence; no Y or K); PyTorch computes them
but gives them no derivative: their results do not require grad, so a program that adds them to a
differentiable term gets a silently wrong gradient (the term counted as a constant), and
differentiating them alone raises. Its spelling runs the forward checks only (:func:`_torch`).

And the regularized incomplete gamma functions (reference/ops/rules/special_gamma.py), P =
torch.special.gammainc and Q = gammaincc (jax.scipy.special.gammainc/gammaincc, tf.math.igamma/
igammac), two records each: ``gammainc`` differentiates both a and x (JAX and TensorFlow, once: their
∂/∂a kernels have no derivative; PyTorch has no derivative in a, its forward checks run) and
``gammainc_x`` x alone (every check on every framework)."""

from __future__ import annotations

import math

from hypothesis import strategies as st

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._run import refuses
from conformance.ops.elementwise import _unary
from conformance.strategies import broadcast_shapes, value_kinds
from conformance.unsupported import Unsupported

FAMILY = "special"

#: finite value kinds: at ±inf PyTorch's bessel_j0/j1/y0/y1 say nan where the limit is 0
#: (docs/records.md)
_FINITE = ("normal", "wide", "ties", "large", "tiny")

# the first zeros of each function (relative accuracy there), the pole of Y and K at 0
_J0 = D.domain("whole line: J0", -math.inf, math.inf, D.Point("zero 2.40483", 2.404825557695773),
               D.Point("zero 5.52008", 5.520078110286311), gate="any")  # fmt: skip
_J1 = D.domain("whole line: J1", -math.inf, math.inf, D.Point("zero 0", 0.0),
               D.Point("zero 3.83171", 3.8317059702075125), gate="any")  # fmt: skip
_Y0 = D.domain("(0, inf): Y0", 0.0, math.inf, D.Point("pole 0", 0.0, "above"),
               D.Point("zero 0.893577", 0.8935769662791675), D.Point("zero 3.95768", 3.957678419314858),
               gate="pos")  # fmt: skip
_Y1 = D.domain("(0, inf): Y1", 0.0, math.inf, D.Point("pole 0", 0.0, "above"),
               D.Point("zero 2.19714", 2.197141326031017), gate="pos")  # fmt: skip
_K = D.domain("(0, inf): K", 0.0, math.inf, D.Point("pole 0", 0.0, "above"), gate="pos")

_NO_TORCH_DERIVATIVE = (
    "PyTorch gives torch.special.{} no derivative (its result does not require grad: autograd raises "
    "'element 0 of tensors does not require grad', and in a larger program the term is silently a "
    "constant); the forward checks run"
)


def _torch(name):
    def no_derivative(case, check):
        return None if check in ("forward", "vmap", "error") else _NO_TORCH_DERIVATIVE.format(name)

    @refuses(no_derivative)
    def fn(T, x):
        if x.dtype in (T.bfloat16, T.float16):  # CPU: "<name>_cpu" not implemented for 'Half', 'BFloat16'
            raise Unsupported(f"torch (CPU) has no float16 or bfloat16 {name} kernel")
        return getattr(T.special, name)(x)

    return fn


def _tf(op):
    def fn(tf, x):
        if x.dtype == tf.bfloat16:  # no BesselJ0 ... kernel registered for DT_BFLOAT16
            raise Unsupported(f"tf.math.special.{op} has no bfloat16 kernel")
        return getattr(tf.math.special, op)(x)

    return fn


def _jax_jn(n):
    def fn(J, x):
        import jax.scipy.special

        return jax.scipy.special.bessel_jn(x, v=1)[n]  # rows J0, J1 of the recurrence

    return fn


_NO_JAX = "JAX has no {} (jax.scipy.special: i0, i0e, i1, i1e and bessel_jn, J of integer order)"

for _name, _tf_name, _jax, _domain in (
    ("bessel_j0", "bessel_j0", _jax_jn(0), _J0),
    ("bessel_j1", "bessel_j1", _jax_jn(1), _J1),
    ("bessel_y0", "bessel_y0", _NO_JAX.format("Y0"), _Y0),
    ("bessel_y1", "bessel_y1", _NO_JAX.format("Y1"), _Y1),
    ("modified_bessel_k0", "bessel_k0", _NO_JAX.format("K0"), _K),
    ("modified_bessel_k1", "bessel_k1", _NO_JAX.format("K1"), _K),
    # e^x K: finite and exact at every x > 0 (K0e(700) = 0.0474, K0e(1e300) = 1.25e-150) where K
    # itself underflows past x = 705
    ("scaled_modified_bessel_k0", "bessel_k0e", _NO_JAX.format("scaled K0 (k0e)"), _K),
    ("scaled_modified_bessel_k1", "bessel_k1e", _NO_JAX.format("scaled K1 (k1e)"), _K),
):
    record(
        _name,
        FAMILY,
        inputs=("input",),
        sample=_unary(_FINITE),
        fn=lambda T, x, name=_name: getattr(T.special, name)(x),
        torch=_torch(_name),
        jax=_jax,
        tf=_tf(_tf_name),
        domains={"input": _domain},
    )

# the derivative primitive all eight share (reference.ops.rules.special.bessel_derivative)
not_fuzzed(
    "bessel_derivative",
    FAMILY,
    "internal: the exact k-th derivative of a Bessel function; reached by the eight Bessel records' vjp, "
    "vjp_vjp, jvp, the second-order forward checks and vmap_vjp",
)

# ---- the regularized incomplete gamma functions (reference/ops/rules/special_gamma.py) ----------
# P(a, x) = gammainc, Q = gammaincc: a (input) on (0, inf), x (other) on [0, inf); at a = 0 and x = 0
# their limits (P(0, x) = 1, P(a, 0) = 0; (0, 0) is nan in PyTorch); the gate draws both positive.
_SHAPE = D.domain("(0, inf): a", 0.0, math.inf, D.Point("a -> 0", 0.0, "above"), D.Point("a = 1", 1.0),
                  gate="pos")  # fmt: skip
_GAMMA_X = D.domain("[0, inf): x", 0.0, math.inf, D.Point("x = 0", 0.0, "above"), gate="pos")

#: the mpmath kernels take 1 ms (a, x < 10) to 0.3 s (a near x near 1e4) per element: at most 24
#: elements a case
_GAMMA_SIZE = 24


def _gamma_sample(values=None):
    @st.composite
    def sample(draw):
        a, b = draw(broadcast_shapes(max_rank=2, max_size=_GAMMA_SIZE))
        return {"values": draw(value_kinds(values))}, {"input": a, "other": b}

    return sample


_NO_TORCH_A = (
    "PyTorch has no derivative of torch.special.{} in its first argument a ('the derivative for "
    "'{}: input' is not implemented'); the forward checks run (the record {}_x checks its derivative "
    "in x)"
)
#: the checks that differentiate twice: JAX's igamma_grad_a and TensorFlow's IgammaGradA have no
#: derivative of their own
_TWICE = ("vjp_vjp", "jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")
_NOT_TWICE = {
    "jax": "JAX differentiates {} in a once: 'Differentiation rule for 'igamma_grad_a' not implemented'",
    "tensorflow": "TensorFlow differentiates {} in a once: 'gradient registry has no entry for: IgammaGradA'",
}


#: the checks that run PyTorch's forward mode
_FORWARD_MODE = ("jvp", "jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")
_NO_TORCH_FORWARD = (
    "PyTorch has no forward-mode derivative of {} ('Trying to use forward AD with {} that does not "
    "support it because it has not been implemented yet')"
)


def _torch_gamma(name, kernel, both):
    def refused(case, check):
        if both and check not in ("forward", "vmap", "error"):
            return _NO_TORCH_A.format(name, kernel, name)
        if check in _FORWARD_MODE:
            return _NO_TORCH_FORWARD.format(name, kernel)
        return None

    @refuses(refused)
    def fn(T, a, x):
        return getattr(T.special, name)(a, x)

    return fn


def _torch_spelling(name, kernel, fn):
    return refuses(
        lambda case, check: _NO_TORCH_FORWARD.format(name, kernel) if check in _FORWARD_MODE else None
    )(fn)


def _once(framework, name, fn):
    return refuses(lambda case, check: _NOT_TWICE[framework].format(name) if check in _TWICE else None)(fn)


def _tf_gamma(op, name, once):
    def refused(case, check):
        if case.dtype in ("float16", "bfloat16"):  # "Could not find device for node: Igamma[T=DT_HALF]"
            return f"tf.math.{op} has no float16 or bfloat16 kernel"
        return _NOT_TWICE["tensorflow"].format(name) if once and check in _TWICE else None

    return refuses(refused)(lambda tf, a, x: getattr(tf.math, op)(a, x))


def _jax_gamma(name):
    def fn(J, a, x):
        import jax.scipy.special

        return getattr(jax.scipy.special, name)(a, x)

    return fn


for _name, _kernel, _tf_name in (("gammainc", "igamma", "igamma"), ("gammaincc", "igammac", "igammac")):
    _common = dict(
        inputs=("input", "other"),
        sample=_gamma_sample(),
        fn=lambda T, a, x, name=_name: getattr(T.special, name)(a, x),
        domains={"input": _SHAPE, "other": _GAMMA_X},
        rules=(_kernel,),
    )
    # both arguments differentiated: JAX and TensorFlow, once; PyTorch's forward only
    record(
        _name,
        FAMILY,
        torch=_torch_gamma(_name, _kernel, True),
        jax=_once("jax", _name, _jax_gamma(_name)),
        tf=_tf_gamma(_tf_name, _name, True),
        **_common,
    )
    # x alone (a not differentiated): every check on every framework, each public spelling
    record(
        f"{_name}_x",
        FAMILY,
        torch=_torch_gamma(_name, _kernel, False),
        jax=_jax_gamma(_name),
        tf=_tf_gamma(_tf_name, _name, False),
        nondiff=("input",),
        spellings={
            "torch": {
                f"torch.{_kernel}": _torch_spelling(
                    _name, _kernel, lambda T, a, x, k=_kernel: getattr(T, k)(a, x)
                ),
                f"Tensor.{_kernel}": _torch_spelling(
                    _name, _kernel, lambda T, a, x, k=_kernel: getattr(a, k)(x)
                ),
            },
            # lax takes operands of one shape: users broadcast them first
            "jax": {
                f"lax.{_kernel}": lambda J, a, x, k=_kernel: getattr(J.lax, k)(*J.jnp.broadcast_arrays(a, x))
            },
        },
        **_common,
    )

# the derivative primitives of both (reference.ops.rules.special_gamma)
not_fuzzed(
    "igamma_grad_a",
    FAMILY,
    "internal: ∂P/∂a of the incomplete gamma functions; reached by the gammainc and gammaincc records' "
    "vjp, jvp and vmap_vjp (JAX's igamma_grad_a, TensorFlow's IgammaGradA)",
)
not_fuzzed(
    "igamma_derivative",
    FAMILY,
    "internal: ∂_a^i ∂_x^j P of the incomplete gamma functions; reached by the gammainc_x and "
    "gammaincc_x records' vjp, jvp, the second-order checks and vmap_vjp",
)

# ---- the Hurwitz zeta function (reference/ops/rules/special_zeta.py) ----------------------------
# ζ(s, q) = torch.special.zeta(x, q) (jax.scipy.special.zeta, tf.math.zeta): s (input) on (1, inf),
# its pole at 1 (the gate draws s >= 1.5), q (other) on (0, inf), ζ's pole at q = 0.
_ZETA_S = D.domain("(1, inf): s", 1.0, math.inf, D.Point("pole s = 1", 1.0, "above"),
                   gate=D.domain("[1.5, inf)", 1.5))  # fmt: skip
_ZETA_Q = D.domain("(0, inf): q", 0.0, math.inf, D.Point("pole q = 0", 0.0, "above"), D.Point("q = 1", 1.0),
                   gate="pos")  # fmt: skip

_NO_TORCH_S = (
    "PyTorch has no derivative of torch.special.zeta in its first argument x ('the derivative for "
    "'zeta' is not implemented'); the forward checks run (the record zeta_q checks its derivative in q)"
)
_NO_TF_S = (
    "TensorFlow's gradient of tf.math.zeta in x is None (math_grad.py _ZetaGrad: 'TODO: Add "
    "derivative with respect to x'); the forward checks run (the record zeta_q checks its derivative "
    "in q)"
)
_NO_TORCH_ZETA_FORWARD = (
    "PyTorch has no forward-mode derivative of zeta ('Trying to use forward AD with special_zeta that "
    "does not support it because it has not been implemented yet')"
)
_NO_LAX_ZETA = "lax.zeta has no derivative ('Differentiation rule for 'zeta' not implemented')"
_DERIVATIVE_FREE = ("forward", "vmap", "error")


def _half(framework):
    """torch's and TensorFlow's zeta have no float16 or bfloat16 kernel: "zeta_cpu" not implemented
    for 'Half' / "Value for attr 'T' of half is not in the list of allowed values: float, double"."""
    return f"{framework} has no float16 or bfloat16 zeta kernel"


def _zeta_refusal(framework, s_differentiated):
    def refused(case, check):
        if framework != "jax" and case.dtype in ("float16", "bfloat16"):
            return _half(framework)
        if s_differentiated and framework != "jax" and check not in _DERIVATIVE_FREE:
            return _NO_TORCH_S if framework == "torch" else _NO_TF_S
        if framework == "torch" and check in _FORWARD_MODE:
            return _NO_TORCH_ZETA_FORWARD
        return None

    return refused


def _jax_zeta(J, s, q):
    import jax.scipy.special

    return jax.scipy.special.zeta(s, q)


#: lax.zeta: operands of one shape (users broadcast them first), and no derivative of its own
_LAX_ZETA = refuses(lambda case, check: None if check in _DERIVATIVE_FREE else _NO_LAX_ZETA)(
    lambda J, s, q: J.lax.zeta(*J.jnp.broadcast_arrays(s, q))
)

for _name, _both in (("zeta", True), ("zeta_q", False)):
    _only_q = {} if _both else {"nondiff": ("input",), "spellings": {"jax": {"lax.zeta": _LAX_ZETA}}}
    record(
        _name,
        FAMILY,
        inputs=("input", "other"),
        sample=_gamma_sample(),
        fn=lambda T, s, q: T.special.zeta(s, q),
        torch=refuses(_zeta_refusal("torch", _both))(lambda T, s, q: T.special.zeta(s, q)),
        jax=_jax_zeta,
        tf=refuses(_zeta_refusal("tensorflow", _both))(lambda tf, s, q: tf.math.zeta(s, q)),
        domains={"input": _ZETA_S, "other": _ZETA_Q},
        rules=("zeta",),
        **_only_q,
    )

not_fuzzed(
    "zeta_derivative",
    FAMILY,
    "internal: ∂_s^i ∂_q^j of the Hurwitz zeta function; reached by the zeta and zeta_q records' vjp, "
    "jvp, the second-order checks and vmap_vjp",
)

#: The differentiable special functions of torch.special, jax.scipy.special / jax.nn and tf.math /
#: tf.math.special that have no record yet, each with why (docs/records.md renders this table).
MISSING = {
    "modified_bessel_i0, modified_bessel_i1, spherical_bessel_j0, airy_ai (torch.special)": "PyTorch "
    "gives them no derivative (results that do not require grad) and JAX and TensorFlow have no other "
    "spelling of the last two: a record would run the forward checks only; i0/i1 are records already "
    "(torch.special.i0, i1), these would be further PyTorch spellings of them",
    "chebyshev_polynomial_*, shifted_chebyshev_polynomial_*, hermite_polynomial_*, "
    "laguerre_polynomial_l, legendre_polynomial_p (torch.special)": "no derivative in PyTorch and no JAX "
    "or TensorFlow function: nothing to differentiate against",
    "wofz (jax.scipy.special; no PyTorch or TensorFlow function: torch.special, tf.math and "
    "tf.math.special have none)": "not written yet, JAX alone differentiates it (jax 0.10.2): "
    "wofz(z) = e^(-z²) erfc(-iz) is complex-valued, holomorphic, with JAX's custom JVP "
    "w' = -2z w + 2i/√π (a complex record, docs/complex.md)",
    "bernoulli, comb, sph_harm_y (jax.scipy.special)": "bernoulli(n) takes an integer (the first n "
    "Bernoulli numbers): nothing to differentiate; comb(N, k) is exp(gammaln(N + 1) - gammaln(k + 1) "
    "- gammaln(N - k + 1)) (the lgamma record's kernel) and sph_harm_y(n, m, theta, phi) is complex "
    "with integer n, m: not written yet (no PyTorch or TensorFlow function to compare with)",
    "identity, one_hot, dot_product_attention, scaled_matmul, scaled_dot_general, "
    "get_scaled_dot_general_config (jax.nn)": "not special functions: identity is x itself, one_hot "
    "is integer-valued (no derivative), dot_product_attention composes the matmul and softmax "
    "records (reference/ops/functions/attention.py, no record of its own yet), and the scaled_* "
    "entry points are block-quantized matmuls of configurable precision (no exact value to judge)",
}
