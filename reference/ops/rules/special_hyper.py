"""The confluent and Gauss hypergeometric functions (jax.scipy.special's ``hyp1f1(a, b, x)`` and
``hyp2f1(a, b, c, x)``, scipy's definitions; PyTorch and TensorFlow have neither):

    1F1(a; b; x) = Σ_k (a)_k/(b)_k x^k/k!,   2F1(a, b; c; x) = Σ_k (a)_k (b)_k/(c)_k x^k/k!

Part of the one derivative table (:mod:`reference.ops.rules`). JAX differentiates both in every
argument (its custom JVPs: the termwise series Σ term·(ψ(a + k) - ψ(a)) in a parameter, the
contiguous relation in x), so the reference does too, every order one exact primitive
``<name>_derivative`` (params ``orders``: a tuple, one order per argument in scipy's order, their
sum >= 1; its VJP in an argument is the same primitive one order up there).

The kernel (:func:`hyper_exact`) is mpmath's ``hyper`` (which raises its precision where the sum
cancels) at 30 digits plus 10 per order, rounded once:

* ∂_x^k pFq(a; b; x) = Π(a_i)_k/Π(b_j)_k · pFq(a + k; b + k; x) (DLMF 16.3.1), 0 where (a_i)_k is
  (a terminating series of degree m < k);
* the parameter derivatives of that by mpmath's central differences (where f = 1 + T with T's
  first term Πa·x/Πb far below 1, at that many more bits: the differences must resolve T beside
  the 1) at its raised precision
  (mpmath.diff: (prec + 20)(n + 1) bits for order n), one parameter at a time, each with a step
  2^-(prec + 10) times the parameter's distance to the nearest pole of the function in it (a lower
  parameter's nonpositive integers; 1 for an upper one, entire): the truncation is (h/δ)² and the
  cancellation of the differences is paid for by the raised precision, so the result is the
  derivative to about 2^-(prec + 20)·|f near the point|, 60 bits below a float64 ulp of it.

Special values (the limits where they exist, nan where the limit depends on the direction): nan at
nan and at an infinite upper parameter; at an infinite lower parameter (x finite, below 2F1's
branch point) the terms after the first vanish: f = 1, its derivatives 0. A terminating series (an upper parameter a nonpositive integer -m)
is its polynomial, also where a lower parameter is a nonpositive integer -n with n >= m (mpmath's
and scipy's convention, the limit along the polynomial; JAX's 1F1(0; 0; x) = 1); elsewhere a lower parameter at a nonpositive integer is a pole: at ±0 the value is ±inf times
the sign of its residue a·x·1F1(a + 1; 2; x) (2F1: a·b·x·2F1(a + 1, b + 1; 2; x)), the sign of
C99's Γ(±0) = ±inf; at a negative integer nan (the sign flips across), and every derivative nan.
At x = ±inf the value's limits (1F1(a; b; x) ~ Γ(b)/Γ(a) e^x x^(a-b) at +inf and Γ(b)/Γ(b - a)
(-x)^-a at -inf; 2F1 at -inf: 0 where a, b > 0; a polynomial by its leading term), nan where the
limit needs more than those leading terms, and nan derivatives but 1F1's at +inf (the leading
term's: ±inf, each ∂_b flipping the sign, -ln x). 2F1 at x > 1 (past its branch
point: the value is complex) is nan but for a polynomial; at x = 1 the value is Gauss's
Γ(c)Γ(c-a-b)/(Γ(c-a)Γ(c-b)) where c - a - b > 0 and ±inf (the sign of the leading term of its
divergence, Γ(c)Γ(a+b-c)/(Γ(a)Γ(b))) where c - a - b <= 0, its x-derivatives the same at the
shifted parameters, its parameter derivatives those of Gauss's formula where it converges.

Reach: where mpmath's series do not converge within :data:`_MAX_TERMS` terms (parameters past about
1e4: the uniform expansions in a large parameter are not written) the kernel answers nan; the
records do not draw such parameters (conformance/ops/special_hyper.py).
"""

from __future__ import annotations

import functools
import math

from reference.autograd.dispatch import apply
from reference.ops.rule import AUTO_ELEMENT_WISE, BATCH_ELEMENTWISE
from reference.ops.rules._sign_cache import sign_aware_cache
from reference.ops.rules._times import rounded
from reference.ops.rules.registry import RULES, rule
from reference.ops.rules.special_beta import _host_kernel

#: mpmath's working digits before 10 per order are added
_DPS = 30
#: mpmath's hypergeometric series give up after this many terms (NoConvergence: nan)
_MAX_TERMS = 20_000
#: and after raising their precision to this many bits
_MAX_PREC = 4_000


def _nonpos_int(v):
    return math.isfinite(v) and v <= 0 and v == math.floor(v)


def _degree(upper):
    """m where the series terminates (an upper parameter -m, the smallest such m), or None."""
    ms = [int(-a) for a in upper if _nonpos_int(a)]
    return min(ms) if ms else None


def _signed_cache(exact):
    """``exact(*floats, orders)`` cached per element through the shared sign-aware cache (a plain
    lru_cache takes -0.0 for 0.0: 1F1(a; -0; x) would answer 1F1(a; +0; x)'s sign); ``orders``
    may be any sequence."""
    cached = sign_aware_cache(exact)

    @functools.wraps(exact)
    def wrapper(*args):
        *values, orders = args
        return cached(*values, tuple(orders))

    return wrapper


def _sign(v):
    return 0.0 if v == 0 else math.copysign(1.0, v)


# ---- the series and their x-derivatives --------------------------------------------------------


def _pfq(mp, upper, lower, x):
    return mp.hyper(upper, lower, x, maxterms=_MAX_TERMS, maxprec=_MAX_PREC)


def _x_derivative(mp, upper, lower, x, k):
    """∂_x^k pFq = Π(a_i)_k/Π(b_j)_k · pFq(a + k; b + k; x); 0 where a terminating series's degree < k."""
    if k == 0:
        return _pfq(mp, upper, lower, x)
    num = mp.fprod(mp.rf(a, k) for a in upper)
    if num == 0:
        return mp.zero
    return num / mp.fprod(mp.rf(b, k) for b in lower) * _pfq(mp, [a + k for a in upper], [b + k for b in lower], x)


def _step_scale(v, is_lower):
    """The distance on which the function varies in a parameter: 1 for an upper one (entire), the
    distance to the nearest pole (a nonpositive integer) for a lower one, at most max(|v|, 1)."""
    if not is_lower:
        return max(abs(v), 1.0)
    pole_distance = v if v > 0 else abs(v - round(v)) if round(v) <= 0 else abs(v)
    return min(max(abs(v), 1.0), pole_distance)


def _partial(mp, f, point, orders, lower_flags):
    """∂^orders f at ``point`` (mpf), one parameter at a time by mpmath.diff with its own step."""

    def nested(i, args):
        if i == len(point):
            return f(*args)
        if orders[i] == 0:
            return nested(i + 1, args + [point[i]])
        h = mp.ldexp(mp.mpf(_step_scale(float(point[i]), lower_flags[i])), -(mp.prec + 10))
        return mp.diff(lambda t: nested(i + 1, args + [t]), point[i], orders[i], h=h)

    return nested(0, [])


# ---- special values ------------------------------------------------------------------------------


def _at_infinity(upper, lower, x, m):
    """The value's limit at x = ±inf, or nan where it needs more than the leading terms."""
    from mpmath import mp

    if m is not None:  # a polynomial: its leading term (Π(a)_m/Π(b)_m/m!) x^m
        if m == 0:
            return 1.0
        lead = mp.fprod(mp.rf(a, m) for a in upper) / mp.fprod(mp.rf(b, m) for b in lower)
        return math.copysign(math.inf, float(lead) * (_sign(x) ** m))
    if len(upper) == 1:
        (a,), (b,) = upper, lower
        if x > 0:  # Γ(b)/Γ(a) e^x x^(a-b)
            return math.copysign(math.inf, float(mp.gamma(b) * mp.rgamma(a)))
        if _nonpos_int(b - a):  # e^x times a polynomial
            return 0.0
        if a > 0:  # Γ(b)/Γ(b - a) (-x)^-a
            return 0.0
        return math.copysign(math.inf, float(mp.gamma(b) * mp.rgamma(b - a)))
    a, b = upper
    if x < 0 and a > 0 and b > 0:  # Γ(c)Γ(b-a)/(Γ(b)Γ(c-a)) (-x)^-a + (a <-> b)
        return 0.0
    return math.nan


def _at_lower_pole(upper, lower, x, orders):
    """A lower parameter at a nonpositive integer, the series not terminating before it."""
    (b,) = lower
    if b != 0 or sum(orders) or not math.isfinite(x) or x == 0:
        return math.nan
    from mpmath import mp

    with mp.workdps(_DPS):
        residue = mp.fprod(upper) * x * _pfq(mp, [a + 1 for a in upper], [2], x)
    if not isinstance(residue, type(mp.mpf(0))) or residue == 0:
        return math.nan  # 2F1 past its branch point: complex
    return math.copysign(math.inf, float(residue)) * math.copysign(1.0, b)


def _at_one(mp, upper, lower, k):
    """∂_x^k 2F1 at x = 1 (no parameter derivative): Gauss's value at the shifted parameters, or
    ±inf where c - a - b - k <= 0 (the leading term Γ(c)Γ(a+b-c)/(Γ(a)Γ(b)) (1-x)^(c-a-b) or
    -Γ(a+b)/(Γ(a)Γ(b)) ln(1 - x), at the shifted parameters)."""
    (a, b), (c,) = upper, lower
    pre = mp.rf(a, k) * mp.rf(b, k) / mp.rf(c, k) if k else mp.one
    if pre == 0:
        return mp.zero
    a, b, c = a + k, b + k, c + k
    excess = c - a - b
    if excess > 0:
        return pre * mp.gammaprod([c, excess], [c - a, c - b])
    lead = mp.gammaprod([c, a + b - c], [a, b]) if excess < 0 else mp.gammaprod([a + b], [a, b])
    if lead == 0:
        return mp.nan
    return pre * lead * mp.inf


def _tail_bits(upper, lower, x, orders):
    """The bits the parameter derivatives of f = 1 + T need beyond those of f: T's first term
    Πa·x/Πb, with a differentiated upper parameter's factor at its step's scale max(|a|, 1), is
    what they move; where it is 2^-e of the 1 the differences of f lose e more bits (B(a, b) the
    same: ∂_b 1F1(4e-308; 3e-308; 5e-308) = -2 beside f = 1 + 6e-308). None where T is 0 (f = 1)."""
    if x == 0:
        return None
    log = math.log2(abs(x))
    for i, a in enumerate(upper):
        scale = max(abs(a), 1.0) if orders[i] else abs(a)
        if scale == 0:
            return None
        log += math.log2(scale)
    log -= sum(math.log2(abs(b)) for b in lower)
    return min(max(0.0, -log), 3 * _MAX_PREC)


# ---- the kernel ----------------------------------------------------------------------------------


def _exact(p, *args):
    """∂^orders pFq at the floats (upper..., lower..., x), orders one per argument."""
    *values, orders = args
    upper, lower, x = list(values[:p]), list(values[p:-1]), values[-1]
    if any(math.isnan(v) for v in values) or any(math.isinf(v) for v in upper):
        return math.nan
    order, dx = sum(orders), orders[-1]
    m = _degree(upper)
    if any(math.isinf(b) for b in lower):  # every term but the first -> 0: f -> 1, its derivatives -> 0
        return math.nan if math.isinf(x) or (p == 2 and x > 1 and m is None) else float(order == 0)
    # a differentiated upper parameter terminates no series: ∂_a (a)_k at a = -m is the product of the
    # other k - 1 factors, nonzero for k > m too, so a lower pole past m is the derivative's pole
    kept = _degree([a for a, o in zip(upper, orders) if not o])
    poles = [b for b in lower if _nonpos_int(b) and (kept is None or kept > -b)]
    if poles:
        return _at_lower_pole(upper, lower, x, orders)
    if math.isinf(x):
        if order == 0:
            return _at_infinity(upper, lower, x, m)
        if p == 1 and x > 0 and m is None:  # Γ(b)/Γ(a) e^x x^(a-b): each ∂_a adds ln x, each ∂_b -ln x
            return _at_infinity(upper, lower, x, m) * (-1.0) ** orders[1]
        return math.nan
    if p == 2 and x > 1 and m is None:
        return math.nan  # past 2F1's branch point: complex
    if m is not None and order == dx and dx > m:
        return 0.0  # a polynomial of degree m
    extra = 0
    if dx == 0 and order:  # the parameters move only the tail f - 1: its digits must survive beside the 1
        extra = _tail_bits(upper, lower, x, orders)
        if extra is None:
            return 0.0  # f = 1 whatever the differentiated parameters (x = 0, or an undifferentiated a = 0)
    from mpmath import mp

    try:
        with mp.workdps(_DPS + 10 * order + int(extra * 0.30103) + 1):
            point = [mp.mpf(v) for v in upper + lower]
            mx = mp.mpf(x)
            if p == 2 and x == 1 and m is None:
                if order != dx:
                    value = _partial(mp, lambda *ps: _at_one(mp, list(ps[:2]), list(ps[2:]), dx), point,
                                     orders[:-1], [False, False, True])  # fmt: skip
                else:
                    value = _at_one(mp, point[:2], point[2:], dx)
                    if mp.isinf(value):
                        return math.copysign(math.inf, float(mp.sign(value)))
            else:
                value = _partial(
                    mp, lambda *ps: _x_derivative(mp, list(ps[:p]), list(ps[p:]), mx, dx), point, orders[:-1],
                    [False] * p + [True] * len(lower),
                )  # fmt: skip
            if not isinstance(value, type(mp.mpf(0))) or mp.isnan(value):
                return math.nan
            return rounded(value)
    except (ZeroDivisionError, mp.NoConvergence, ValueError):
        return math.nan


hyp1f1_exact = _signed_cache(functools.partial(_exact, 1))
hyp2f1_exact = _signed_cache(functools.partial(_exact, 2))


# ---- the rules ----------------------------------------------------------------------------------


def _order_up(orders, i):
    return tuple(o + (j == i) for j, o in enumerate(orders))


def hyper_rules(name, exact, inputs):
    """Declare ``name`` and ``<name>_derivative`` (param ``orders``: one per input) over
    ``exact(*floats, orders)``; returns ``derivative(*tensors, orders)``."""
    derivative_name = f"{name}_derivative"

    def derivative(*args):
        *tensors, orders = args
        return apply(RULES[derivative_name], tuple(tensors), {"orders": tuple(orders)})

    def grads(orders_of):
        def grad(i):
            return lambda c, g: g * derivative(*(getattr(c, n) for n in inputs), _order_up(orders_of(c), i))

        return tuple(grad(i) for i in range(len(inputs)))

    saves = {n: tuple(range(len(inputs))) for n in inputs}
    rule(
        derivative_name,
        "".join(p.capitalize() for p in derivative_name.split("_")) + "Backward0",
        inputs,  # orders: one per input, their sum >= 1
        forward=lambda *args, orders: _host_kernel(exact, tuple(orders))(*args),
        grads=grads(lambda c: c.orders),
        saves=saves,
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )
    rule(
        name,
        "".join(p.capitalize() for p in name.split("_")) + "Backward0",  # (no PyTorch node: jax.scipy.special's)
        inputs,
        forward=_host_kernel(exact, (0,) * len(inputs)),
        grads=grads(lambda c: (0,) * len(inputs)),
        saves=saves,
        jvp=AUTO_ELEMENT_WISE,
        batch=BATCH_ELEMENTWISE,
    )
    return derivative


hyp1f1_derivative = hyper_rules("hyp1f1", hyp1f1_exact, ("a", "b", "x"))
hyp2f1_derivative = hyper_rules("hyp2f1", hyp2f1_exact, ("a", "b", "c", "x"))


# ---- error declarations (reference/errors): how the frameworks' kernels round ------------------
# JAX sums the Taylor series (1F1: an asymptotic series for |x| >= 100; 2F1: a transformation to 1 -
# x above x = 0.9) and its parameter derivatives as the termwise series Σ term·(ψ(a + k) - ψ(a)):
# rounding of terms that cancel (x < 0) is not a bounded number of ulps of the result. The
# declaration is the one of a mixed-stable kernel, 2 ulps in the mixed sense (the exact function of
# inputs each off by 2 ulps, which carries the condition number |a ∂_a f| + |b ∂_b f| + ... of the
# inputs' own rounding); a departure past it is the framework's algorithm, classified as a known
# departure, not absorbed by the bound.
from reference import errors as _E  # noqa: E402

for _name in ("hyp1f1", "hyp2f1"):
    RULES[_name].error = _E.exact_elementwise(2.0, "a mixed-stable kernel of the hypergeometric series (2 ulps)")
    RULES[f"{_name}_derivative"].error = _E.exact_elementwise(
        2.0, "a mixed-stable kernel of the exact derivative (2 ulps): JAX's termwise digamma series"
    )
