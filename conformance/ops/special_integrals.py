"""Records of the special functions PyTorch does not have (reference.special under scipy.special's
names, reference/ops/functions/special_integrals.py): the exponential integrals ``expi``, ``exp1``
and ``expn`` (reference/ops/rules/special_expint.py), Dawson's integral ``dawsn``
(reference/ops/rules/special_dawsn.py).

PyTorch has no spelling of any of them (torch 2.13: torch.special has no exponential, Dawson,
Spence, Fresnel or sine/cosine integral), so its column is unsupported with that reason; JAX
(jax.scipy.special) and TensorFlow (tf.math.special) run every check."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.ops import _domains as D
from conformance.ops import not_fuzzed, record
from conformance.ops._run import refuses
from conformance.ops.elementwise import _unary

FAMILY = "special"

_NO_TORCH = "PyTorch has no {} (torch 2.13: torch.special has no {})"
#: TensorFlow's special-function kernels are registered for float32 and float64 only
#: ("Could not find device for node: Expint[T=DT_HALF]")
_TF_HALF = "tf.math.special.{} has no float16 or bfloat16 kernel"


def _tf(op):
    refused = refuses(lambda case, check: _TF_HALF.format(op) if case.dtype in ("float16", "bfloat16") else None)
    return refused(lambda tf, x: getattr(tf.math.special, op)(x))


def _jsp(name):
    def fn(J, x, **params):
        import jax.scipy.special

        return getattr(jax.scipy.special, name)(*params.values(), x)

    return fn


def _record(name, what, tf, domain, sample=None, fn=None, **fields):
    """A unary function's record: reference.special.<name>, jax.scipy.special.<name>, PyTorch
    unsupported (it has no ``what``), TensorFlow's spelling (or why it has none)."""
    return record(
        name,
        FAMILY,
        sample=sample or _unary(),
        fn=fn or (lambda T, x: getattr(T.special, name)(x)),
        torch=_NO_TORCH.format(what, name),
        jax=_jsp(name),
        tf=tf,
        domains={"input": domain},
        **fields,
    )


def _internal(name, function, record_names):
    not_fuzzed(
        f"{name}_derivative",
        FAMILY,
        f"internal: the exact k-th derivative of {function}; reached by the {record_names} vjp, jvp, the "
        "second-order checks and vmap_vjp",
    )


# ---- the exponential integrals (reference/ops/rules/special_expint.py) --------------------------
_record("expi", "exponential integral Ei", _tf("expint"), D.EXPI)
_internal("expi", "Ei", "expi record's")
_NO_TF_EN = "TensorFlow has no E_n (tf.math.special.expint is Ei)"
_record("exp1", "exponential integral E_1", _NO_TF_EN, D.EXPN, rules=("expn",))
# E_n of an integer order n (not differentiated): the derivatives are -E_{n-1}, E_{n-2}, so n = 1
# reaches E_0 and E_{-1} in the second-order checks
_record(
    "expn",
    "generalized exponential integral E_n",
    _NO_TF_EN,
    D.EXPN,
    sample=_unary(n=st.sampled_from([0, 1, 2, 3, 5])),
    fn=lambda T, x, n: T.special.expn(n, x),
)

# ---- Dawson's integral (reference/ops/rules/special_dawsn.py) ----------------------------------
_record("dawsn", "Dawson integral", _tf("dawsn"), D.DAWSN)
_internal("dawsn", "Dawson's integral", "dawsn record's")
