"""Records of more special functions PyTorch does not have (reference.special under scipy.special's
names, reference/ops/functions/special_more.py): Spence's function ``spence``
(reference/ops/rules/special_spence.py), the Fresnel integrals ``fresnel_sin`` and ``fresnel_cos``
(jax.scipy.special.fresnel's S and C) and the sine and cosine integrals ``sici_si`` and ``sici_ci``
(jax.scipy.special.sici's Si and Ci; reference/ops/rules/special_fresnel.py), and ``gamma``,
``gammasgn``, ``loggamma``, ``factorial`` (jax.scipy.special; reference/ops/rules/special_gammafn.py).

PyTorch has no spelling of any of them (torch 2.13), so its column is unsupported with that reason;
JAX (jax.scipy.special) runs every check, TensorFlow (tf.math.special) those it has: spence,
fresnel_sin, fresnel_cos (no Γ, sign of Γ, real loggamma or factorial: tf.math.lgamma is ln|Γ|).
Each member of scipy's pairs is its own record (a record differentiates its first output only)."""

from __future__ import annotations

import math

from conformance.ops import _domains as D
from conformance.ops import record
from conformance.ops._run import refuses
from conformance.ops.elementwise import _unary
from conformance.ops.special_integrals import _NO_TORCH, FAMILY, _internal, _jsp, _tf

#: jax.scipy.special.spence: "x.dtype=float16 is not supported, see docstring for supported types."
_JAX_SPENCE_HALF = "jax.scipy.special.spence takes float32 and float64 only (TypeError for {})"


@refuses(lambda case, check: _JAX_SPENCE_HALF.format(case.dtype) if case.dtype in ("float16", "bfloat16") else None)
def _jax_spence(J, x):
    import jax.scipy.special

    return jax.scipy.special.spence(x)


def _jax_member(function, index):
    def fn(J, x):
        import jax.scipy.special

        return getattr(jax.scipy.special, function)(x)[index]

    return fn


def _member(function, index):
    return lambda T, x: getattr(T.special, function)(x)[index]


# ---- domains -------------------------------------------------------------------------------------
#: spence on [0, inf): the pole of spence' = ln x/(1 - x) at 0, its zero at 1, where the derivative's
#: ln x/(1 - x) is 0/0 (the limit -1)
SPENCE = D.domain("[0, inf): spence", 0.0, math.inf, D.Point("pole of spence' 0", 0.0, "above"),
                  D.Point("zero 1", 1.0), gate="pos")  # fmt: skip
#: the Fresnel integrals on the whole line: the zero at 0 (odd), the first zero of S' (x² = 2) and
#: of C' (x² = 1), a point where the phase πx²/2 has few digits left
FRESNEL = D.domain("whole line: Fresnel", -math.inf, math.inf, D.Point("zero 0", 0.0), D.Point("zero of S' √2", math.sqrt(2.0)),
                   D.Point("zero of C' 1", 1.0), D.Point("large phase 1e4", 1e4))  # fmt: skip
#: Si on the whole line: the zero at 0 (odd), the first zero of Si' = sin x/x at π
SI = D.domain("whole line: Si", -math.inf, math.inf, D.Point("zero 0", 0.0), D.Point("zero of Si' π", math.pi))
#: Ci on the whole line (Re Ci: Ci(|x|)): the logarithmic pole at 0, the first zero 0.616505, the
#: first zero of Ci' = cos x/x at π/2
CI = D.domain("whole line: Ci", -math.inf, math.inf, D.Point("pole 0", 0.0), D.Point("zero 0.616505", 0.6165054856207162),
              D.Point("zero of Ci' π/2", math.pi / 2))  # fmt: skip


def _record(name, what, jax, tf, domain, fn):
    """A unary function's record: ``fn`` over reference.special, PyTorch unsupported (it has no
    ``what``), JAX's and TensorFlow's spellings (or why there is none)."""
    record(name, FAMILY, sample=_unary(), fn=fn, torch=_NO_TORCH.format(what, name), jax=jax, tf=tf,
           domains={"input": domain})  # fmt: skip
    _internal(name, what, f"{name} record's")


_record("spence", "Spence's function", _jax_spence, _tf("spence"), SPENCE, lambda T, x: T.special.spence(x))
_NO_TF_SICI = "TensorFlow has no sine or cosine integral (tf.math.special: no sici, no Si, no Ci)"
for _i, (_name, _what, _tf_op, _domain) in enumerate(
    (("fresnel_sin", "Fresnel sine integral", "fresnel_sin", FRESNEL),
     ("fresnel_cos", "Fresnel cosine integral", "fresnel_cos", FRESNEL))
):  # fmt: skip
    _record(_name, _what, _jax_member("fresnel", _i), _tf(_tf_op), _domain, _member("fresnel", _i))
for _i, (_name, _what, _domain) in enumerate((("sici_si", "sine integral Si", SI), ("sici_ci", "cosine integral Ci", CI))):
    _record(_name, _what, _jax_member("sici", _i), _NO_TF_SICI, _domain, _member("sici", _i))

# ---- the gamma function and its relatives (reference/ops/rules/special_gammafn.py) ---------------
#: Γ on the whole line: the poles at 0 and the negative integers, the zero of Γ' at 1.461632 (its minimum)
GAMMA = D.domain("whole line: Γ", -math.inf, math.inf, D.Point("pole 0", 0.0), D.Point("pole -1", -1.0),
                 D.Point("pole -2", -2.0), D.Point("zero of Γ' 1.46163", 1.4616321449683622))  # fmt: skip
#: the sign of Γ: its jumps at 0 and the negative integers
GAMMASGN = D.domain("whole line: sign of Γ", -math.inf, math.inf, D.Point("jump 0", 0.0), D.Point("jump -1", -1.0))
#: JAX's real loggamma on [0, inf): the pole at 0, its zeros at 1 and 2, the zero of ψ at 1.461632
LOGGAMMA = D.domain("[0, inf): loggamma", 0.0, math.inf, D.Point("pole 0", 0.0, "above"), D.Point("zero 1", 1.0),
                    D.Point("zero 2", 2.0), D.Point("zero of ψ 1.46163", 1.4616321449683622), gate="pos")  # fmt: skip
#: factorial on the whole line: its jump at 0 (0 below, Γ(n + 1) from 0 on), the zero of its
#: derivative at 0.461632
FACTORIAL = D.domain("whole line: factorial", -math.inf, math.inf, D.Point("jump 0", 0.0),
                     D.Point("zero of d/dn 0.46163", 0.4616321449683622))  # fmt: skip

_NO_TF_GAMMA = "TensorFlow has no {} (tf.math has lgamma, ln|Γ|, only)"
for _name, _what, _domain in (
    ("gamma", "gamma function Γ", GAMMA),
    ("loggamma", "real loggamma (nan for x <= 0)", LOGGAMMA),
    ("factorial", "float factorial", FACTORIAL),
):
    _record(_name, _what, _jsp(_name), _NO_TF_GAMMA.format(_what), _domain, lambda T, x, n=_name: getattr(T.special, n)(x))
record(
    "gammasgn",
    FAMILY,
    sample=_unary(),
    fn=lambda T, x: T.special.gammasgn(x),
    torch=_NO_TORCH.format("sign of Γ", "gammasgn"),
    jax=_jsp("gammasgn"),
    tf=_NO_TF_GAMMA.format("sign of Γ"),
    domains={"input": GAMMASGN},
)
