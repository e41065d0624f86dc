"""Rounding error of complex arithmetic: the own error of the primitives on complex arrays.

The tracker (reference.errors.Tracker) keeps, for a complex array, a bound on the *modulus* of each
element's error, and composes it like a real one: ``|dy/dz|·|e|`` through the rule's own derivative
(exact for a holomorphic op; the explicit formulas of the others), plus the op's own rounding. An
op on complex arrays is not one correctly rounded operation, so its own rounding is declared here,
as a normwise relative bound ``|fl(y) - y| <= 2·c·u·|y| + a·u + n·eta`` (``c`` in ulps of the part
dtype, ``a`` an absolute term in units of ``u``, ``n`` the number of rounded partial results that
may underflow, ``eta`` the underflow term of reference.errors.Precision). Each entry cites its
source or derives its figure, for the implementations the frameworks use (PyTorch's c10::complex /
std::complex on the CPU, XLA's complex expanders for JAX and TensorFlow's XLA paths, Eigen's
std::complex kernels for TensorFlow's eager ops), first order in u (the O(u^2) terms are below the
one ulp the judge adds to every element).

A rule listed here on an array that is not complex keeps its real declaration. A rule not listed
keeps its real declaration on complex arrays too, which holds where the complex kernel rounds each
part once (add, sub, neg, a complex times or divided by a real number: each part correctly rounded,
so ``|d re|, |d im| <= u |re|, u |im|`` and ``|dz| <= u |z|``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ComplexBound:
    ulps: float  # c: 2·c·u·|y|
    absolute: float  # a: a·u
    underflows: int  # n: n·eta
    source: str


#: Complex multiplication by the textbook formula (ac - bd, ad + bc): normwise error <= sqrt(5)·u
#: without an FMA (Brent, Percival, Zimmermann, "Error bounds on complex floating-point
#: multiplication", Math. Comp. 76 (2007) 1469-1481; sharp), <= 2u with an FMA for each part
#: (Jeannerod, Kornerup, Louvet, Muller, "Error bounds on complex floating-point multiplication with
#: an FMA", Math. Comp. 86 (2017) 881-898). Declared: the larger, sqrt(5)·u (c = sqrt(5)/2); the four
#: partial products may each underflow.
MUL = ComplexBound(
    math.sqrt(5) / 2,
    0.0,
    4,
    "complex multiplication: sqrt(5)·u without FMA (Brent, Percival, Zimmermann 2007, Math. Comp. 76), "
    "2u with FMA (Jeannerod, Kornerup, Louvet, Muller 2017, Math. Comp. 86)",
)

#: Complex division. The textbook formula ((ac + bd) + i(bc - ad)) / (c^2 + d^2): normwise
#: <= sqrt(2)·gamma_4 ~ 5.66u (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
#: 2002, Lemma 3.5). Smith's algorithm (R. L. Smith, "Algorithm 116: Complex division", CACM 5(8),
#: 1962; NumPy's, std::complex's in libstdc++ through __divdc3's scaling, c10::complex's, XLA's),
#: first order, with |d| <= |c|, r = d/c, den = c + d·r: r's rounding moves the result by
#: |r|/(1 + r^2)·u <= u/2 (relative), den's two roundings add 2u (no cancellation: d·r has c's sign),
#: each numerator a + b·r, b - a·r rounds twice with |(b r, -a r)| <= |a + ib|, so their normwise
#: error relative to |(a + b r, b - a r)| = |a + ib| sqrt(1 + r^2) is <= 2u, and the final division
#: (or c10's multiplication by 1/den, one more rounding) adds 2u: 6.5u. Declared c = 3.5 (7u) with
#: the intermediate underflows (Smith's r and the products) counted: 6. Baudin, "Error bounds of complex
#: arithmetic" (2011), section 3.7, analyses Smith's algorithm in the same way.
DIV = ComplexBound(
    3.5,
    0.0,
    6,
    "complex division: textbook sqrt(2)·gamma_4 (Higham 2002, Lemma 3.5); Smith's algorithm (CACM 1962, "
    "NumPy, c10::complex, XLA) <= 6.5u to first order (derivation in reference/errors/complex.py)",
)

#: 1/z: the classic algorithm's componentwise error is <= 3u (Jeannerod, Louvet, Muller, Plet,
#: "Sharp error bounds for complex floating-point inversion", Numer. Algorithms 73 (2016)); a
#: framework may compute it as a division 1/z (Smith's: DIV's 6.5u). Declared as DIV.
RECIPROCAL = ComplexBound(
    3.5,
    0.0,
    6,
    "1/z: classic inversion 3u componentwise (Jeannerod et al. 2016); as Smith's division otherwise",
)

#: |z| = hypot(x, y): glibc's hypot is correctly rounded to within 1 ulp; sqrt(x^2 + y^2) without
#: overflow protection rounds x^2, y^2 (u each), the sum (u) and the square root (u/2 plus half the
#: relative error of its argument): 2u. Declared c = 1 (2u). (A real result.)
ABS = ComplexBound(1.0, 0.0, 2, "|z|: hypot (glibc <= 1 ulp) or sqrt(x^2 + y^2): 2u")

#: exp(x + iy) = exp(x)·(cos y + i sin y): each part is a product of exp (2 ulps, the real exp
#: declaration), cos or sin (1 ulp: glibc, SLEEF u10; XLA's range-reduced polynomials) and a rounding:
#: 4u + 2u + u = 7u per part, relative to the part, so normwise 7u. Declared c = 3.5.
EXP = ComplexBound(
    3.5, 0.0, 2, "exp(x)·cis(y): exp 2 ulps (the real declaration), cos/sin 1 ulp, the product: 7u per part"
)

#: log z = log|z| + i atan2(y, x): the imaginary part is atan2 (<= 2 ulps); the real part is log of
#: |z| (hypot, 1 ulp, i.e. relative 2u, which log turns into an *absolute* error 2u) or
#: log(x^2 + y^2)/2 (the same to first order), plus log's own 2 ulps of |log|z||. Declared c = 2 on
#: |log z| and an absolute 2u (|log z| is near 0 close to the unit circle, the absolute term is what
#: remains there; an algorithm that cancels in log(hypot) - log(1) is within it).
LOG = ComplexBound(
    2.0,
    2.0,
    2,
    "log|z| + i atan2(y, x): log 2 ulps, atan2 2 ulps, hypot's 2u relative error becomes 2u absolute",
)

#: log2 z, log10 z = log z / log b (PyTorch's, NumPy's and tnp's complex log10/log2, and JAX's): LOG's
#: own error divided by log b, so its 4u relative to |log z| is 4u relative to |log_b z| and its 2u
#: absolute (the rounding of |z|) becomes 2u / log b, plus the division by the real log b, each part
#: rounded once (u): c = 2.5 and the absolute term 2 / log b. (The real declaration, 2 ulps relative,
#: missed the absolute term: TensorFlow's complex64 log10 at |z| near 1.2 was 1.5 times that bound,
#: log10-8dc2c59532fd.)
LOG10 = ComplexBound(
    2.5, 2 / math.log(10), 2, "log z / log 10: LOG's terms over log 10 and the division's rounding (u)"
)
LOG2 = ComplexBound(2.5, 2 / math.log(2), 2, "log z / log 2: LOG's terms over log 2 and the division's rounding (u)")

#: sqrt z by the C99 / Kahan algorithm (t = sqrt((|x| + |z|)/2), the other part y/(2t)): |z| 2u,
#: the sum u, the square root halves the relative error of its argument and adds u/2: 2u for t; the
#: other part one division more (u) and t's 2u: 3u... by a polar form (sqrt|z|·cis(arg/2)): 1u + cis's
#: 2u + the angle's 2 ulps of at most pi/2: ~7u. Declared c = 3.5 (7u).
SQRT = ComplexBound(3.5, 0.0, 2, "sqrt z: Kahan's/C99's algorithm <= 3u per part; a polar form <= 7u: 7u")

#: sin, cos, sinh, cosh of x + iy: each part a product of a circular and a hyperbolic function of
#: the real arguments (sin x cosh y, cos x sinh y, ...): 1 ulp (circular) + 2 ulps (hyperbolic, the
#: real exp-based declaration) + a rounding: 7u per part. Declared c = 3.5. (sinh y for tiny y
#: computed as (e^y - e^-y)/2 cancels: a framework doing so departs, and is reported.)
TRIG = ComplexBound(
    3.5, 0.0, 2, "sin x cosh y + i cos x sinh y (and the others): 1 + 2 ulps and a product: 7u per part"
)

#: tanh(x + iy): Kahan's algorithm (glibc ctanh; t = tan y, s = sinh x, rho = sqrt(1 + s^2),
#: (beta rho s + i t)/(1 + beta s^2), beta = 1 + t^2): about 10 roundings of relative u (no
#: cancellation); the formula (sinh 2x + i sin 2y)/(cosh 2x + cos 2y) cancels near the poles
#: y = (k + 1/2)pi, x = 0 (a departure there, reported, not covered). Declared c = 6 (12u).
TANH = ComplexBound(6.0, 0.0, 4, "tanh z: Kahan's algorithm, ~10 roundings without cancellation: 12u")

#: tan z = -i tanh(iz): glibc's ctan (libstdc++'s std::tan of a complex, so PyTorch's and TensorFlow's
#: Eigen kernels) is ctanh's algorithm with the parts exchanged, XLA's (JAX) is -i tanh(iz) itself:
#: TANH's 12u (JAX's cancels next to the poles: jax-complex-tan-cancels-next-to-its-poles). (It kept the real declaration, 1 ulp, i.e. 2u, which every framework exceeds: over 4,000
#: normal points, 1.5 times N(0, 1) per part, torch's and TensorFlow's complex64 tan is up to 5.4u off
#: (1.5449033 + 0.5190079i), complex128 4.2u, JAX's 9.8u and 11.6u at 0.02 from the pole pi/2, mpmath;
#: 1 + tan^2 in the derivatives carries it 2|y| times: first-order ratios 1.02-1.29, cplx27.)
TAN = ComplexBound(6.0, 0.0, 4, "tan z = -i tanh(iz): glibc ctan (ctanh's algorithm), XLA -i tanh(iz): 12u")

#: sgn z = z / |z|: |z| (hypot, 2u relative, ABS) and each part divided by it once (u): 3u per
#: part relative to |sgn z| = 1, normwise too (the same relative error moves both parts). Declared
#: c = 1.5 (3u): the real declaration (one correctly rounded division, u) is below what every
#: framework's z/|z| rounds (TensorFlow's complex64 sgn measured 1.14 times u away in the campaign).
SGN = ComplexBound(1.5, 0.0, 2, "sgn z = z/|z|: hypot 2u and one division per part u: 3u")

#: The inverse sine family, asin z, acos z, asinh z = -i asin(iz), acosh z: Hull, Fairgrieve, Tang,
#: "Implementing the complex arcsine and arccosine functions using exception handling", ACM TOMS
#: 23(3) (1997) 299-335 (glibc's casin/cacos/casinh/cacosh, so PyTorch's and TensorFlow's Eigen kernels
#: through std::; XLA's asin/acos/asinh/acosh, JAX's). First order, x, y >= 0 by symmetry: r = |z + 1|
#: and s = |z - 1| (z ± 1 rounded once, hypot <= 1 ulp: 2u each; no cancellation in the sum), A =
#: (r + s)/2 in 3u; the real part asin(x/A) (x/A: 4u, asin's condition B/(sqrt(1 - B^2) asin B)
#: <= 1.2 where the algorithm uses it, B <= 0.6417, and asin's own 1 ulp: 2u) <= 7u, its atan form
#: past 0.6417 the same count; the imaginary part log1p(Am1 + sqrt(Am1 (A + 1))) with A - 1 formed
#: without cancellation (Am1 ~4u, the square root halves 4u + 3u and adds u/2, the sum u; log1p's
#: condition <= 1 and its own 1 ulp) <= 8u; acos's parts are the same counts. Per part relative to
#: the part, so normwise: 8u, c = 4. (glibc's x86_64 libm-test-ulps lists its tested maxima: 1-2
#: ulps per part.) Measured (scripts/measure_complex_accuracy.py, mpmath, 2,558 complex64 and 5,118
#: complex128 points of the plane), worst part over |y|: asin 1.76·2u (complex128, glibc's and
#: NumPy's), 1.61·2u (JAX); asinh 1.42·2u; acos, acosh 0.98·2u.
ASIN = ComplexBound(
    4.0,
    0.0,
    4,
    "asin, acos, asinh, acosh: Hull, Fairgrieve, Tang's algorithm (ACM TOMS 23(3), 1997; glibc, XLA), "
    "first order <= 8u per part (derivation in reference/errors/complex.py)",
)

#: atan z = -i atanh(iz), atanh z by Kahan's algorithm ("Branch cuts for complex elementary functions,
#: or much ado about nothing's sign bit", 1987; glibc's catan/catanh, XLA's): the real part
#: log1p(4x / ((1 - x)^2 + y^2)) / 4 (1 - x rounded once, its square 3u, y^2 u, the sum u: 4u; the
#: quotient 5u; log1p's condition w/((1 + w) log1p w) <= 1 and its own 1 ulp: 7u), the imaginary
#: part atan2(2y, (1 - x)(1 + x) - y^2) / 2 (the denominator without cancellation, glibc's
#: __x2y2m1: 2u; atan2 carries its arguments' relative errors at most summed, 2u, and its own 2
#: ulps: 6u). Normwise 7u: c = 3.5. (glibc's tested maxima: 1 ulp per part.) Measured: atan, atanh
#: 1.00·2u (complex64, glibc's), 0.99·2u (JAX).
ATAN = ComplexBound(
    3.5,
    0.0,
    4,
    "atan, atanh: Kahan's algorithm (1987; glibc, XLA), first order <= 7u per part (derivation in "
    "reference/errors/complex.py)",
)

#: expm1(x + iy) = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y (c10::complex's, NumPy's; XLA's
#: and Eigen's the same terms): a = expm1(x) cos y carries 2 + 2 + 1 = 5u of |a|, b = 2 sin^2(y/2)
#: 2·2u + u = 5u of |b|, their difference u; the imaginary part e^x (2u), sin (2u) and the product:
#: 5u. The terms may exceed the real part, not the modulus: |expm1 z|^2 = (e^x - 1)^2 + 2e^x(1 - cos y),
#: so |a| <= |e^x - 1| <= |expm1 z| and b = 1 - cos y <= 2|expm1 z| (minimising over e^x: b/|expm1 z|
#: <= sqrt(b / (2 - b)) <= 1 for b <= 1, <= b <= 2 otherwise). The real part's error <= 5u + 10u + u
#: = 16u of |expm1 z|, the imaginary part's 5u: normwise sqrt(16^2 + 5^2)u < 17u, c = 8.5. (The real
#: declaration, 2u, was exceeded: the real part cancels where e^x cos y is near 1.) Measured: 2.0·2u
#: (complex64 and complex128, PyTorch's and NumPy's, where e^x cos y + 2 sin^2(y/2) are 1 and 0 off),
#: 7.7·2u (JAX's complex64 at Im z = 1e12).
EXPM1 = ComplexBound(
    8.5,
    0.0,
    4,
    "expm1 z = (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y: terms <= 2|expm1 z|, first order 17u "
    "normwise (derivation in reference/errors/complex.py)",
)

#: log1p z. The reference's kernel (and c10::complex's on CUDA): for |z| < 1/2, log1p(x(2 + x) +
#: y^2)/2 + i atan2(y, 1 + x), without the cancellation of 1 + z; log(1 + z) elsewhere. |z| < 1/2:
#: the rounded w = x(2 + x) + y^2 (3u of |x|(2 + |x|) + y^2) through log1p's derivative 1/(1 + w) =
#: 1/|1 + z|^2 and the halving, log1p's own 1 ulp; atan2's 2 ulps and 1 + x's rounding
#: (u·|y(1 + x)|/|1 + z|^2): relative to |log1p z|, at most 12.9u on the disc (the first-order
#: expression's maximum over 2e6 points, next to z = -1/2, where |1 + z|^2 = 1/4 multiplies w's
#: rounding); |z| >= 1/2: LOG's 4u relative and 2u absolute and 1 + z's rounding (an absolute u in
#: the logarithm), with |log1p z| >= log 1.5 = 0.405 there (its least at z = 1/2): <= 4u + 3u/0.405 = 11.4u. PyTorch's CPU
#: kernel: log(u)·(z/(u - 1)), u = 1 + z (Goldberg, "What every computer scientist should know about
#: floating-point arithmetic", 1991, Theorem 4: u's rounding cancels to first order): glibc's clog
#: (tested maxima 3 and 1 ulps per part: 6u normwise), the quotient (DIV, 7u) and the product (MUL,
#: sqrt(5)u): 15.3u. Declared c = 7.7. Measured: 1.45·2u (the reference's kernel, complex128),
#: 1.42·2u (JAX's complex64), PyTorch's 0.7·2u where TensorFlow's is 447·2u (below).
#: TensorFlow's Eigen kernel is the same formula with Eigen's complex log, whose real part cancels
#: where |1 + z| is near 1: 447·2u at 7.9e-4 - 6.1e-4i (complex64), 2.3e5·2u at -1.8e-26 - 1e-10i
#: (complex128): a departure, not this bound's.
LOG1P = ComplexBound(
    7.7,
    0.0,
    2,
    "log1p z: log1p(x(2 + x) + y^2)/2 + i atan2(y, 1 + x) for |z| < 1/2 (<= 12.9u), log(1 + z) "
    "elsewhere (<= 11.4u); log(u)·z/(u - 1) (PyTorch's CPU kernel, Goldberg 1991 Theorem 4; glibc clog, "
    "a division and a product): 15.3u",
)

#: rsqrt z = 1/sqrt(z) (PyTorch's, TensorFlow's): SQRT's 7u and RECIPROCAL's 7u relative: c = 7.
#: Measured: 1.33·2u (PyTorch's and NumPy's complex128).
RSQRT = ComplexBound(7.0, 0.0, 8, "rsqrt z = 1/sqrt z: sqrt 7u and the reciprocal 7u: 14u")

COMPLEX_BOUNDS = {
    "sgn": SGN,
    "mul": MUL,
    "div": DIV,
    "reciprocal": RECIPROCAL,
    "abs": ABS,
    "exp": EXP,
    "log": LOG,
    "log10": LOG10,
    "log2": LOG2,
    "sqrt": SQRT,
    "sin": TRIG,
    "cos": TRIG,
    "sinh": TRIG,
    "cosh": TRIG,
    "tanh": TANH,
    "tan": TAN,
    "asin": ASIN,
    "acos": ASIN,
    "asinh": ASIN,
    "acosh": ASIN,
    "atan": ATAN,
    "atanh": ATAN,
    "expm1": EXPM1,
    "log1p": LOG1P,
    "rsqrt": RSQRT,
}

#: A sum of n complex products (matmul, dot, sum, mean, ...): |fl(x^T y) - x^T y| <= sqrt(2)·gamma_{n+2}
#: |x|^T |y| (Higham 2002, section 3.6, with Lemma 3.5's complex multiplication): the products' K
#: terms become sqrt(2)·(K + 2).
PRODUCTS_SOURCE = "complex sums of products: sqrt(2)·gamma_(n+2)·|x|^T|y| (Higham 2002, section 3.6)"


def is_complex(arrays, outs) -> bool:
    """Whether a kernel computes in complex arithmetic (a complex operand or result)."""
    return any(getattr(a, "dtype", None) is not None and a.dtype.kind == "c" for a in (*arrays, *outs))


def complex_own(name, out, real_own, u):
    """The own error of rule ``name`` on complex arrays, without the underflow term, and the number of
    rounded partial results that may underflow (the caller adds that many ``eta`` where the result
    may be tiny): the declared complex bound where there is one (never below the real declaration's
    ``real_own``, which counts one), else the real declaration's."""
    bound = COMPLEX_BOUNDS.get(name)
    if bound is None:
        return real_own, 1
    own = 2 * bound.ulps * u * np.abs(out) + bound.absolute * u
    return np.maximum(own, real_own), max(bound.underflows, 1)


def products_terms(k):
    """The K of a complex sum of k products (:data:`PRODUCTS_SOURCE`)."""
    return math.sqrt(2) * (np.asarray(k, dtype=np.float64) + 2)
