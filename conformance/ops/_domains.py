"""The mathematical domain of an op's argument, and the points in it where accuracy is hard.

A record declares, per input, a :class:`Domain`: the interval where the function is defined (log
on [0, inf), log1p on [-1, inf), acos on [-1, 1], lgamma on the whole line minus its poles, which
are points of the domain's closure where the value is +inf) and its :class:`Point` s: the zeros,
poles, branch points and removable singularities where a kernel's relative accuracy is at stake
(log near 1, sin near a multiple of pi far from 0, tan near pi/2, lgamma between its negative
poles, acosh at its branch point 1).

Two campaigns draw from it. The gate's (``refgrad run``, what the known-departures file is written
for) places the bulk draws by each domain's ``gate`` placement: the coarse domain the record had
before ("pos", "unit"). ``refgrad run --domains whole`` (a case's ``params["domain"] = "whole"``)
draws the whole domain and the ``near`` kind:

* Every value kind but ``special`` and ``near`` is placed in the domain by :meth:`Domain.place`
  (the whole line: as drawn; a half line: ``lo + |a|``; an interval: its centre plus
  ``0.9 tanh(a)`` of its half-width, which keeps the interval's edges out of the bulk draws).
* The ``near`` kind (:meth:`Domain.near`) draws half of the elements at a declared point or at
  2**-k of its scale from it (k from 4 to the dtype's mantissa width plus two: the last ulps
  before the point are where cancellation is), on the side the domain allows.
* ``special`` draws IEEE's special values over the whole real line (conformance.ops), whatever the
  domain says: a framework must say log(-1) is nan too.

The reach table (conformance.coverage) has two cells per point (:data:`CELLS`): ``at``, where some
element of the input is the point itself (its value in the case's dtype: pi's float32 rounding),
and ``near``, where some other element lies within :data:`NEAR` of it (relative to ``max(|p|, 1)``),
on its allowed side. They are apart because a function's value or derivative *at* a zero, pole or
branch point is often a rule of its own (TensorFlow's xdivy gradient masks x != 0), which no draw
next to the point evaluates.

A point may move with the op's drawn parameters (:class:`Point`'s ``param``): hardtanh's kinks are
its ``min_val`` and ``max_val``, hardshrink's ``-lambd`` and ``lambd``, threshold's step its
``threshold``. Such a point's value is ``at + scale * params[param]`` of the case being drawn or
judged (:meth:`Point.value`); a case whose parameter is None (clamp without a max) has no such
point. Its ``at`` cell is, as for a fixed point, the parameter's rounding to the case's dtype
(:func:`in_dtype`). A case has its moving points' parameters rounded to its dtype, a drawn one
(conformance.coverage.record_strategy; one past the dtype's range is redrawn) and one read from a
case or results file alike (conformance.ops.params_in_dtype; one past the range is a CaseError),
through one function (conformance.ops.moving_params_in_dtype), so the framework (which takes the
parameter in the input's dtype) and the reference compute at one kink, and the record's
conventions at the kink (at_params: ``x == params[name]``) hold at the element on it. The records
draw parameters every real dtype represents (tests/conformance/test_domains.py), so no drawn case
changes; a case file's 0.1 in float16 becomes 0.0999755859375.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

#: An element is *near* a point p where |x - p| <= NEAR * max(|p|, 1) (the reach table's region).
NEAR = 2.0**-4
#: The explicit mantissa bits of each real dtype: ``near`` offsets go down to 2**-(bits + 2).
MANTISSA_BITS = {"float64": 52, "float32": 23, "float16": 10, "bfloat16": 7, "tf32": 10}
#: The reach table's cells of a point: an element exactly at it, another element near it.
AT, NEAR_CELL = "at", "near"
CELLS = (AT, NEAR_CELL)


def in_dtype(at: float, dtype: str) -> float:
    """The point ``at`` rounded to the nearest value of ``dtype`` (ties to even), the value an element
    drawn "exactly at" it holds: ``at`` itself where the dtype represents it (0, 1, -9), else its
    rounding (pi in float32). Rounds the significand to the dtype's bits; the declared points are
    normal numbers of every dtype (no overflow, no subnormal)."""
    if at == 0 or not math.isfinite(at):
        return at
    m, e = math.frexp(at)  # at = m 2**e, 1/2 <= |m| < 1: the dtype keeps bits + 1 significant bits
    bits = MANTISSA_BITS.get(dtype, 52) + 1
    return math.ldexp(float(np.round(math.ldexp(m, bits))), e - bits)


@dataclass(frozen=True)
class Point:
    """A point of an argument's domain where accuracy is hard: ``label`` names it in the reach
    table ("pole -1", "zero pi"); ``side`` is where the domain lies: "both", "above" (the point is
    the domain's lower edge) or "below". ``param``: the point moves with that op parameter, at
    ``at + scale * params[param]`` (:meth:`value`; hardshrink's kink -lambd is ``at=0, scale=-1``).
    ``at`` has no default: a point declared without it would sit at 0 unsaid."""

    label: str
    at: float
    side: str = "both"
    param: str | None = None
    scale: float = 1.0

    def __post_init__(self):
        if isinstance(self.at, bool) or not isinstance(self.at, numbers.Real):
            raise TypeError(f"Point {self.label!r}: at must be a real number (where the point is), got {self.at!r}")
        if self.side not in ("both", "above", "below"):
            raise ValueError(f"Point.side must be 'both', 'above' or 'below', got {self.side!r}")
        if self.param is None and self.scale != 1.0:
            raise ValueError(f"Point {self.label!r}: scale={self.scale} without a param to scale")

    def value(self, params=None) -> float | None:
        """Where the point is for a case of op parameters ``params``: ``at`` for a fixed point;
        ``at + scale * params[param]`` for a moving one, None where the case has no such parameter
        or it is None (the point does not exist for that case)."""
        if self.param is None:
            return self.at
        p = (params or {}).get(self.param)
        if p is None or isinstance(p, bool) or not isinstance(p, numbers.Real):  # np.float32 is Real too
            return None
        return self.at + self.scale * float(p)

    def reached(self, x: np.ndarray, params=None) -> bool:
        """Whether some finite element of ``x`` lies within :data:`NEAR` of the point (at it included)."""
        at = self.value(params)
        return at is not None and bool(self._close(x, at).any())

    def _close(self, x: np.ndarray, at: float) -> np.ndarray:
        d = np.asarray(x, dtype=np.float64) - at
        close = np.abs(d) <= NEAR * max(abs(at), 1.0)
        if self.side == "above":
            close &= d >= 0
        elif self.side == "below":
            close &= d <= 0
        return close

    def cells(self, x: np.ndarray, dtype: str, params=None) -> list[str]:
        """The reach cells (:data:`CELLS`) the elements of ``x``, drawn in ``dtype`` with op
        parameters ``params``, fill: ``at`` where one is the point's value in the dtype
        (:func:`in_dtype`; -0.0 is at 0), ``near`` where another lies within :data:`NEAR` of the
        point on its allowed side; none (``[]``) for a moving point the case has no parameter for."""
        at = self.value(params)
        if at is None:
            return []
        x = np.asarray(x, dtype=np.float64)
        exact = x == in_dtype(at, dtype)
        close = self._close(x, at) & ~exact
        return [c for c, hit in ((AT, exact.any()), (NEAR_CELL, close.any())) if hit]


def param_point(label: str, param: str, scale: float = 1.0, side: str = "both") -> Point:
    """A point that moves with the op parameter ``param``: at ``scale * params[param]``."""
    return Point(label, 0.0, side, param, scale)


@dataclass(frozen=True)
class Domain:
    """An interval [lo, hi] (either end may be infinite) and the hard points in its closure."""

    name: str
    lo: float = -math.inf
    hi: float = math.inf
    points: tuple[Point, ...] = ()
    #: how the gate's campaign (``run`` without ``--domains whole``) places the draws: the domain
    #: name ("any", "pos", "unit") or Domain the record had before it declared its whole domain,
    #: which the known-departures file is written for
    gate: object = "any"

    def __post_init__(self):
        if not self.lo < self.hi:
            raise ValueError(f"Domain {self.name!r}: lo ({self.lo}) must be below hi ({self.hi})")
        for p in self.points:  # (a moving point's place is the case's: only a fixed one is checked)
            if p.param is None and not self.lo <= p.at <= self.hi:
                raise ValueError(
                    f"Domain {self.name!r}: point {p.label!r} at {p.at} lies outside [{self.lo}, {self.hi}]"
                )

    def place(self, a: np.ndarray) -> np.ndarray:
        """Standard draws ``a`` moved into the domain (the bulk of every value kind)."""
        lo, hi = self.lo, self.hi
        if lo == -math.inf and hi == math.inf:
            return a
        if hi == math.inf:
            return lo + np.abs(a)
        if lo == -math.inf:
            return hi - np.abs(a)
        return (lo + hi) / 2 + (hi - lo) / 2 * 0.9 * np.tanh(a)

    def near(
        self,
        rng: np.random.Generator,
        a: np.ndarray,
        dtype: str,
        only: str | None = None,
        cell: str = NEAR_CELL,
        params=None,
    ) -> np.ndarray:
        """The ``near`` kind: each element, with probability 1/2, at a declared point (1 in 8 of
        those exactly on it) or 2**-k * max(|p|, 1) from it on a side the domain allows, k drawn
        from 4 to the dtype's mantissa bits + 2; the other elements placed like a bulk draw.

        ``only`` (a point's label: the default campaign's reach sweep, conformance.coverage) puts
        every element around that one point, k from 5 (2**-4 of the scale plus the dtype's rounding
        of a point such as 1024 pi would leave :data:`NEAR`) to the dtype's mantissa bits, none on
        it: an offset of 2**-bits * max(|p|, 1) is at least one of the dtype's ulps at p, so the
        rounded element is never the point's own value and fills the reach table's ``near`` cell
        whatever the shape's size (a scalar too). ``cell="at"`` puts the first element (flat
        index 0) exactly on the point, the ``at`` cell, the others as before. ``params``: the
        case's op parameters, where its moving points are (:meth:`Point.value`); a moving point
        without its parameter is not drawn (and ``only`` naming one is refused)."""
        if cell not in CELLS:
            raise ValueError(f"Domain.near: cell must be one of {CELLS}, got {cell!r}")
        out = self.place(a)
        points = self.points if only is None else tuple(p for p in self.points if p.label == only)
        if only is not None and not points:
            known = ", ".join(p.label for p in self.points)
            raise ValueError(f"Domain {self.name!r} has no point {only!r} (its points: {known})")
        if only is not None and points[0].value(params) is None:
            raise ValueError(
                f"Domain {self.name!r}: point {only!r} moves with the parameter {points[0].param!r}, "
                f"which the case does not set (its params: {dict(params or {})})"
            )
        points = tuple(p for p in points if p.value(params) is not None)
        if not points or out.size == 0:
            return out
        shape = out.shape
        bits = MANTISSA_BITS.get(dtype, 52)
        which = rng.integers(0, len(points), shape)
        k = rng.integers(4, bits + 3, shape) if only is None else rng.integers(5, bits + 1, shape)
        sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        exact = (rng.random(shape) < 0.125) & (only is None)
        at = np.array([p.value(params) for p in points])[which]
        side = np.array([{"both": 0.0, "above": 1.0, "below": -1.0}[p.side] for p in points])[which]
        sign = np.where(side == 0, sign, side)
        offset = np.where(exact, 0.0, sign * np.ldexp(np.maximum(np.abs(at), 1.0), -k))
        drawn = np.where((rng.random(shape) < 0.5) | (only is not None), at + offset, out)
        if only is not None and cell == AT:
            drawn.reshape(-1)[0] = points[0].value(params)
        return drawn

    def reach(self, x: np.ndarray, dtype: str, params=None) -> list[tuple[str, str]]:
        """``(label, cell)`` for each point and reach cell (:data:`CELLS`) the elements of ``x``
        (a case's, of op parameters ``params``) fill."""
        return [(p.label, c) for p in self.points for c in p.cells(x, dtype, params)]


def domain(name: str, lo: float = -math.inf, hi: float = math.inf, *points: Point, gate="any") -> Domain:
    return Domain(name, lo, hi, tuple(points), gate)


ANY = domain("any")
POS = domain("pos", 0.0, gate="pos")  # (a record without points draws the same in both campaigns)
UNIT = domain("unit", -1.0, 1.0, gate="unit")
#: the legacy names records may still use for a domain without points
NAMED = {"any": ANY, "pos": POS, "unit": UNIT}


def as_domain(value) -> Domain:
    """A record's ``domains`` entry as a :class:`Domain` (a legacy name or a Domain)."""
    if isinstance(value, Domain):
        return value
    if value in NAMED:
        return NAMED[value]
    raise ValueError(f"a record's domain must be a Domain or one of {sorted(NAMED)}, got {value!r}")


# ---- the domains of the pointwise functions (zeros, poles, branch points in their argument) -------

PI = math.pi


def _zero(at: float, label: str | None = None) -> Point:
    return Point(label or f"zero {at:g}", at)


def _pole(at: float, side: str = "both") -> Point:
    return Point(f"pole {at:g}", at, side)


#: log x, log2, log10: a pole at 0 (the lower edge), a zero at 1 (relative accuracy near it)
LOG = domain("[0, inf): log", 0.0, math.inf, _pole(0.0, "above"), _zero(1.0), gate="pos")
LOG1P = domain("[-1, inf): log1p", -1.0, math.inf, _pole(-1.0, "above"), _zero(0.0), gate="pos")
#: log1mexp log(1 - e^-x): a pole at 0 (the lower edge) and the split log 2 of its two pieces
LOG1MEXP = domain(
    "[0, inf): log1mexp", 0.0, math.inf, _pole(0.0, "above"), Point("split log 2", math.log(2.0)), gate="pos"
)
#: sqrt, rsqrt: the branch point 0
SQRT = domain("[0, inf): sqrt", 0.0, math.inf, Point("branch 0", 0.0, "above"), gate="pos")
#: odd functions through 0 (sinh, tanh, asinh, atan, erf, expm1): relative accuracy at the zero
ZERO_AT_0 = domain("whole line, zero at 0", -math.inf, math.inf, _zero(0.0))
#: sin: its zeros at multiples of pi, near 0 and far from it (argument reduction's cancellation)
SIN = domain(
    "whole line: sin",
    -math.inf,
    math.inf,
    _zero(0.0),
    _zero(PI, "zero pi"),
    _zero(-3 * PI, "zero -3pi"),
    _zero(1024 * PI, "zero 1024pi"),
)
COS = domain(
    "whole line: cos",
    -math.inf,
    math.inf,
    _zero(PI / 2, "zero pi/2"),
    _zero(-3 * PI / 2, "zero -3pi/2"),
    _zero(1023.5 * PI, "zero 1023.5pi"),
)
#: tan: zeros at k pi, poles at pi/2 + k pi
TAN = domain(
    "whole line: tan",
    -math.inf,
    math.inf,
    _zero(0.0),
    _zero(PI, "zero pi"),
    Point("pole pi/2", PI / 2),
    Point("pole -pi/2", -PI / 2),
    Point("pole 1023.5pi", 1023.5 * PI),
    gate="unit",
)
#: asin, acos: branch points at the edges of [-1, 1] (acos: its zero is the edge 1), asin's zero at 0
_UNIT_EDGES = (Point("branch -1", -1.0, "above"), Point("branch 1", 1.0, "below"))
ASIN = domain("[-1, 1]: asin", -1.0, 1.0, *_UNIT_EDGES, _zero(0.0), gate="unit")
ACOS = domain("[-1, 1]: acos", -1.0, 1.0, *_UNIT_EDGES, gate="unit")
#: atanh and erfinv: poles at the edges of (-1, 1), a zero at 0
_OPEN_UNIT = (_pole(-1.0, "above"), _pole(1.0, "below"), _zero(0.0))
ATANH = domain("(-1, 1): atanh", -1.0, 1.0, *_OPEN_UNIT, gate="unit")
ERFINV = domain("(-1, 1): erfinv", -1.0, 1.0, *_OPEN_UNIT, gate="unit")
#: the gate campaign's acosh draws: 1.5 + |a| (the record drew acosh(x + 1.5) of positive x before)
ACOSH_GATE = domain("[1.5, inf)", 1.5)
#: acosh: the branch point 1 (its derivative's pole), the lower edge
ACOSH = domain("[1, inf): acosh", 1.0, math.inf, Point("branch 1", 1.0, "above"), gate=ACOSH_GATE)
#: lgamma on the whole line: poles at 0 and the negative integers (between them the reflection
#: formula's cancellation), zeros at 1 and 2
_GAMMA_POLES = (_pole(0.0), _pole(-1.0), _pole(-2.0), _pole(-9.0))
_WHOLE_LINE = "whole line minus the poles 0, -1, -2, ...: "
LGAMMA = domain(
    _WHOLE_LINE + "lgamma", -math.inf, math.inf, *_GAMMA_POLES, _zero(1.0), _zero(2.0), gate="pos"
)
#: digamma: the same poles, and its one positive zero x0 = 1.4616321449683623...
DIGAMMA = domain(
    _WHOLE_LINE + "digamma",
    -math.inf,
    math.inf,
    *_GAMMA_POLES,
    _zero(1.4616321449683623, "zero x0 1.46163"),
    gate="pos",
)
#: logit on [0, 1]: poles at both edges, its zero at 1/2
LOGIT = domain("[0, 1]: logit", 0.0, 1.0, _pole(0.0, "above"), _pole(1.0, "below"), _zero(0.5), gate="unit")
#: ndtri (the normal quantile) on [0, 1]: the same shape
NDTRI = domain("[0, 1]: ndtri", 0.0, 1.0, _pole(0.0, "above"), _pole(1.0, "below"), _zero(0.5), gate="unit")
#: sinc: a removable singularity at 0 (0/0 in the formula), zeros at the nonzero integers
SINC = domain(
    "whole line: sinc",
    -math.inf,
    math.inf,
    Point("removable 0", 0.0),
    _zero(1.0),
    _zero(-2.0),
    _zero(1000.0),
)
#: entr = -x log x on [0, inf): its derivative's pole at 0, its zero at 1
ENTR = domain("[0, inf): entr", 0.0, math.inf, _pole(0.0, "above"), _zero(1.0), gate="pos")
#: polygamma(n, x) on the whole line: the poles of the gamma function (x > 0 in the gate's draws)
POLYGAMMA = domain(_WHOLE_LINE + "polygamma", -math.inf, math.inf, *_GAMMA_POLES, gate="pos")
#: the factor x of x log y, x log1p y and x / y whose definition makes x = 0 a rule of its own
#: (xlogy(0, y) = 0 for every y, NaN aside): the value and the derivatives there are the
#: definition's (TensorFlow masks the x-gradient by x != 0: tf-xlogy-gradient-at-zero)
FACTOR_X = domain("whole line: x", -math.inf, math.inf, Point("x = 0", 0.0))
#: a divisor (1/x, x/y): the pole at 0, on both sides
DIVISOR = domain("whole line: a divisor", -math.inf, math.inf, _pole(0.0))
#: the divisor of fmod, remainder and addcdiv, drawn positive by the gate's campaign
DIVISOR_GATE_POS = domain(
    "whole line: a divisor (gate: positive)", -math.inf, math.inf, _pole(0.0), gate="pos"
)
#: pow's base x in x**y: 0, where x**y (y < 0) and its derivatives are poles or its branch point
#: (y non-integer), and 1, the zero of log x in d(x**y)/dy = x**y log x; a negative base is
#: defined for an integer exponent (nan otherwise, which a framework must also say)
POW_BASE = domain(
    "whole line: pow's base", -math.inf, math.inf, Point("branch 0", 0.0), _zero(1.0), gate="pos"
)
#: pow's exponent y: 0, where x**y = 1 whatever x and d/dx = y x**(y-1) changes form
POW_EXPONENT = domain("whole line: pow's exponent", -math.inf, math.inf, _zero(0.0), gate="unit")

# ---- kinks, steps and derivative zeros (the derivative's convention or its relative accuracy) -----

#: even functions with a minimum at 0 (cosh, i0): their derivative (sinh, i1) is zero there, where
#: the derivative's relative accuracy is at stake
EVEN_AT_0 = domain("whole line: even, derivative zero at 0", -math.inf, math.inf, Point("derivative zero 0", 0.0))
#: a kink at 0 (relu, abs, elu, celu, selu, leaky_relu, i0e = exp(-|x|) i0(x)): the derivative's
#: one-sided values differ, the value at 0 is a convention (conformance.ops._conventions)
KINK_0 = domain("whole line: kink at 0", -math.inf, math.inf, Point("kink 0", 0.0))
#: hardsigmoid and hardswish: kinks at -3 and 3, where relu6(x + 3) clips
KINKS_3 = domain("whole line: kinks at -3 and 3", -math.inf, math.inf, Point("kink -3", -3.0), Point("kink 3", 3.0))
#: floor, ceil, trunc, frac, sign: steps at the integers (0, where trunc and sign change rule, and
#: one of each sign); the value there is exact, the derivative zero on both sides
STEPS = domain(
    "whole line: steps at the integers",
    -math.inf,
    math.inf,
    Point("step 0", 0.0),
    Point("step 1", 1.0),
    Point("step -2", -2.0),
)
#: sign/sgn and heaviside: the one step at 0
STEP_0 = domain("whole line: a step at 0", -math.inf, math.inf, Point("step 0", 0.0))
#: round (half to even): its steps at the half-integers, where the tie rule picks the even neighbour
TIES = domain(
    "whole line: round's ties",
    -math.inf,
    math.inf,
    Point("tie 0.5", 0.5),
    Point("tie -1.5", -1.5),
    Point("tie 2.5", 2.5),
)
#: fmod and remainder by a scalar of 1.5, -2 or 0.75: steps at its multiples; 0 and 6 are multiples
#: of each (the record's three divisors)
MULTIPLES = domain(
    "whole line: steps at the divisor's multiples",
    -math.inf,
    math.inf,
    Point("step 0", 0.0),
    Point("step 6", 6.0),
)
#: hypot's two arguments at 0: the origin, where d hypot = (x, y) / hypot is 0/0
HYPOT = domain("whole line: hypot's origin", -math.inf, math.inf, Point("origin 0", 0.0))

# ---- the exponential, Dawson, Spence, Fresnel and sine/cosine integrals (conformance/ops/special_integrals.py)
#: Ei on the whole line: its logarithmic pole at 0 (Ei ~ γ + ln|x|, Ei' = e^x/x), its zero
#: 0.372507..., the zero of Ei'' = e^x (x - 1)/x² at 1
EXPI = domain("whole line: Ei", -math.inf, math.inf, _pole(0.0), _zero(0.37250741078136663, "zero 0.372507"),
              Point("zero of Ei'' 1", 1.0))  # fmt: skip
#: E_n on [0, inf): the pole at 0 (of E_0 and E_1; of the derivatives of every E_n)
EXPN = domain("[0, inf): E_n", 0.0, math.inf, _pole(0.0, "above"), gate="pos")
#: Dawson's integral on the whole line: its zero at 0 (odd), the zeros of D' (its maximum) and D''
DAWSN = domain("whole line: Dawson", -math.inf, math.inf, _zero(0.0), Point("zero of D' 0.924139", 0.9241388730045917),
               Point("zero of D'' 1.50198", 1.5019752682686116))  # fmt: skip

# ---- points of the complex plane (the complex dtypes: conformance.ops.complex's PLANE_POINTS) ------

#: the directions a branch cut may run in from its branch point: along the real axis (its side is the
#: sign of the zero imaginary part) or along the imaginary axis (the sign of the zero real part)
CUT_DIRECTIONS = (1, -1, 1j, -1j)
#: the directions a ``near`` draw steps away from an isolated point: each has a part of modulus 1, so
#: an offset of one ulp of that part's scale survives the rounding to the part dtype
_COMPASS = np.array([1, -1, 1j, -1j, 1 + 1j, 1 - 1j, -1 + 1j, -1 - 1j])


@dataclass(frozen=True)
class PlanePoint:
    """A hard point of a complex argument (a complex case's element), or one side of a branch cut.

    ``cut`` 0: the isolated point ``at`` (a branch point, a pole, a zero divisor, where abs, angle
    and sgn change rule). ``cut`` one of :data:`CUT_DIRECTIONS`: the ray ``at + t cut`` (t > 0, the
    branch point excluded: it is a row of its own) seen from the side ``side`` ("+0" or "-0"), the
    sign of the part that is zero on the cut (the imaginary part of a cut along the real axis, the
    real part of one along the imaginary axis), which decides the branch a function takes there
    (C99 Annex G: clog(-1 + 0i) = i pi, clog(-1 - 0i) = -i pi). The reach cells (:data:`CELLS`):
    ``at``, an element exactly on it (the point's value in the part dtype, both parts; on the cut
    with the zero part of that sign); ``near``, another within :data:`NEAR` of it (relative to
    ``max(|p|, 1)``; from a cut: the zero part of that sign and nonzero, at most NEAR times
    ``max(|z|, 1)``)."""

    label: str
    at: complex
    cut: complex = 0
    side: str = "+0"

    def __post_init__(self):
        if self.cut != 0 and self.cut not in CUT_DIRECTIONS:
            raise ValueError(f"PlanePoint.cut must be 0 or one of {CUT_DIRECTIONS}, got {self.cut!r}")
        if self.side not in ("+0", "-0"):
            raise ValueError(f"PlanePoint.side must be '+0' or '-0', got {self.side!r}")
        if self.cut != 0 and (complex(self.at) * complex(self.cut).conjugate()).imag != 0:
            raise ValueError(f"PlanePoint {self.label!r}: a cut runs along an axis through its branch point {self.at}")

    def _parts(self, z):
        """(the coordinate along the cut from its branch point, the part zero on the cut) of ``z``."""
        z = np.asarray(z, dtype=np.complex128)
        if self.cut in (1, -1):
            return (z.real - complex(self.at).real) * self.cut.real, z.imag
        return (z.imag - complex(self.at).imag) * complex(self.cut).imag, z.real

    def _negative(self) -> bool:
        return self.side == "-0"

    def cells(self, z: np.ndarray, part: str) -> list[str]:
        """The reach cells the elements of ``z`` (complex, drawn in the part dtype ``part``) fill."""
        z = np.asarray(z, dtype=np.complex128)
        if self.cut == 0:
            p = complex(self.at)
            exact = (z.real == in_dtype(p.real, part)) & (z.imag == in_dtype(p.imag, part))
            with np.errstate(invalid="ignore", over="ignore"):
                close = (np.abs(z - p) <= NEAR * max(abs(p), 1.0)) & ~exact
        else:
            along, zero = self._parts(z)
            side = np.signbit(zero) == self._negative()
            beyond = np.isfinite(along) & (along > 0)
            exact = beyond & side & (zero == 0)
            with np.errstate(invalid="ignore", over="ignore"):
                close = beyond & side & (zero != 0) & (np.abs(zero) <= NEAR * np.maximum(np.abs(z), 1.0))
        return [c for c, hit in ((AT, exact.any()), (NEAR_CELL, close.any())) if hit]

    def near(self, rng: np.random.Generator, z: np.ndarray, part: str, cell: str = NEAR_CELL) -> np.ndarray:
        """Every element of ``z`` moved near the point (the reach sweep's ``near`` kind), none on it:
        an isolated point plus 2**-k max(|p|, 1) in one of eight compass directions (k from 5 to the
        part dtype's mantissa bits: at least one ulp of the part it moves); a cut's side: a point of
        the ray 2**u max(|at|, 1) beyond the branch point (u from -4 to 4), the zero part 2**-k
        max(|z|, 1) of the side's sign. ``cell="at"`` puts the first element exactly on it (a cut:
        its zero part a zero of the side's sign)."""
        if cell not in CELLS:
            raise ValueError(f"PlanePoint.near: cell must be one of {CELLS}, got {cell!r}")
        z = np.asarray(z, dtype=np.complex128)
        if z.size == 0:
            return z
        drawn, on = self.draws(rng, z.shape, part)
        if cell == AT:
            drawn.reshape(-1)[0] = on.reshape(-1)[0]
        return drawn

    def draws(self, rng: np.random.Generator, shape, part: str) -> tuple[np.ndarray, np.ndarray]:
        """``(near, on)``, complex arrays of ``shape``: per element a draw next to the point (as
        :meth:`near` makes them) and the point itself (a cut: the point of the ray that element
        was drawn beside, its zero part a zero of the side's sign)."""
        bits = MANTISSA_BITS.get(part, 52)
        k = rng.integers(5, bits + 1, shape)
        p = complex(self.at)
        if self.cut == 0:
            drawn = p + np.ldexp(max(abs(p), 1.0), -k) * _COMPASS[rng.integers(0, len(_COMPASS), shape)]
            on = np.full(shape, p, dtype=np.complex128)
        else:
            on_cut = np.asarray(p + complex(self.cut) * np.ldexp(max(abs(p), 1.0), rng.integers(-4, 5, shape)))
            sign = -1.0 if self._negative() else 1.0
            off = sign * np.ldexp(np.maximum(np.abs(on_cut), 1.0), -k)
            drawn = _with_zero_part(on_cut, off, self.cut)
            on = _with_zero_part(on_cut, np.full(np.shape(on_cut), sign * 0.0), self.cut)
        return np.array(drawn, dtype=np.complex128).reshape(shape), np.array(on, dtype=np.complex128).reshape(shape)


def plane_near(rng: np.random.Generator, z: np.ndarray, points, part: str) -> np.ndarray:
    """The ``near`` kind of a complex argument (``run --domains whole``, no reach-sweep point): the
    law of :meth:`Domain.near` over the points of the plane ``points`` (:class:`PlanePoint`): each
    element of ``z``, with probability 1/2, at one of them chosen evenly (1 in 8 of those exactly
    on it: an isolated point, or a cut's point with the zero part of its side's sign) or next to
    it (:meth:`PlanePoint.draws`); the other elements as drawn."""
    z = np.asarray(z, dtype=np.complex128)
    if not points or z.size == 0:
        return z
    shape = z.shape
    which = rng.integers(0, len(points), shape)
    exact = rng.random(shape) < 0.125
    chosen = rng.random(shape) < 0.5
    out = z.copy()
    for i, p in enumerate(points):
        near, on = p.draws(rng, shape, part)
        out = np.where(chosen & (which == i), np.where(exact, on, near), out)
    return out


def _with_zero_part(on_cut, zero, cut):
    """Points of a cut's line with the part perpendicular to it (zero on the cut) set to ``zero``
    (its sign kept: built from the parts, since x + 1j*(-0.0) would lose it)."""
    out = np.empty(np.shape(on_cut), dtype=np.complex128)
    if cut in (1, -1):
        out.real, out.imag = np.real(on_cut), zero
    else:
        out.real, out.imag = zero, np.imag(on_cut)
    return out


def cut_sides(label: str, at: complex, cut: complex) -> tuple[PlanePoint, PlanePoint]:
    """Both sides of the branch cut ``at + t cut`` (t > 0): the rows ``<label> x+0i`` and ``<label>
    x-0i`` of a cut along the real axis, ``<label> +0+iy`` and ``<label> -0+iy`` of one along the
    imaginary axis (the form of the elements on it)."""
    forms = ("x+0i", "x-0i") if cut in (1, -1) else ("+0+iy", "-0+iy")
    return tuple(PlanePoint(f"{label} {form}", at, cut, side) for form, side in zip(forms, ("+0", "-0")))
