"""The survey of issue #32: every public function of torch.special, jax.scipy.special, jax.nn,
tf.math.special and the special-function part of tf.math, on the installed versions, is either a
spelling of some record (its primary spelling, one of its named ``spellings``, or one listed in
:data:`COVERED_AS` below) or named in ``conformance.ops.special.MISSING`` with why it has none.

A framework release that adds a function fails this test until the function gets a record or a
MISSING entry; a record or entry that goes away fails it too."""

from __future__ import annotations

import fnmatch
import inspect
import re

import pytest

from conformance.ops import RECORDS
from conformance.ops.special import MISSING

torch = pytest.importorskip("torch", reason="the survey reads the installed namespaces")
jax = pytest.importorskip("jax", reason="the survey reads the installed namespaces")
tf = pytest.importorskip("tensorflow", reason="the survey reads the installed namespaces")

#: tf.math's special functions (the rest of tf.math is elementary arithmetic, reductions and
#: segment ops, which the pointwise and reduction records cover)
TF_MATH_SPECIAL = (
    "bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "betainc", "digamma", "erf", "erfc",
    "erfcinv", "erfinv", "igamma", "igammac", "lbeta", "lgamma", "log_sigmoid", "ndtri", "polygamma",
    "sigmoid", "softplus", "softsign", "xdivy", "xlog1py", "xlogy", "zeta",
)  # fmt: skip

#: a public function -> the record that runs it under another name (its primary spelling calls it;
#: the test checks the record's module or spellings source names the function)
COVERED_AS = {
    "torch.special.gammaln": "lgamma",
    "torch.special.multigammaln": "mvlgamma",
    "jax.scipy.special.gammaln": "lgamma",
    "jax.scipy.special.multigammaln": "mvlgamma",
    "jax.scipy.special.bessel_jn": "bessel_j0",
    "jax.scipy.special.fresnel": "fresnel_sin",
    "jax.scipy.special.sici": "sici_si",
    "jax.nn.hard_sigmoid": "hardsigmoid",
    "jax.nn.hard_swish": "hardswish",
    "jax.nn.soft_sign": "softsign",
    "tf.math.bessel_i0": "i0",
    "tf.math.bessel_i0e": "i0e",
    "tf.math.bessel_i1": "i1",
    "tf.math.bessel_i1e": "i1e",
    "tf.math.igamma": "gammainc",
    "tf.math.igammac": "gammaincc",
    "tf.math.lbeta": "betaln",
    "tf.math.lgamma": "lgamma",
    "tf.math.erfcinv": "erfinv",
    "tf.math.special.bessel_i0": "i0",
    "tf.math.special.bessel_i0e": "i0e",
    "tf.math.special.bessel_i1": "i1",
    "tf.math.special.bessel_i1e": "i1e",
    "tf.math.special.bessel_k0": "modified_bessel_k0",
    "tf.math.special.bessel_k1": "modified_bessel_k1",
    "tf.math.special.bessel_k0e": "scaled_modified_bessel_k0",
    "tf.math.special.bessel_k1e": "scaled_modified_bessel_k1",
    "tf.math.special.expint": "expi",
}


def _public(module, names=None):
    names = names or [n for n in dir(module) if not n.startswith("_")]
    return [n for n in names if callable(getattr(module, n)) and not inspect.isclass(getattr(module, n))]


def _namespaces():
    import jax.nn
    import jax.scipy.special

    return {
        ("torch.special", "torch"): _public(torch.special),
        ("jax.scipy.special", "jax"): _public(jax.scipy.special),
        ("jax.nn", "jax"): _public(jax.nn),
        ("tf.math.special", "tensorflow"): _public(tf.math.special),
        ("tf.math", "tensorflow"): _public(tf.math, TF_MATH_SPECIAL),
    }


def _named_spellings(framework):
    """{spelling name: record} of every record's named spellings for ``framework``."""
    return {s: name for name, rec in RECORDS.items() for s in rec.spellings.get(framework, {})}


def _in_missing(namespace, function):
    """The MISSING entry naming ``function`` (a name or a glob such as chebyshev_polynomial_*) in a
    key that names ``namespace``, or None."""
    for key in MISSING:
        if namespace not in key:
            continue
        tokens = [t.rsplit(".", 1)[-1] for t in re.findall(r"[\w.*]+", key)]
        if any(fnmatch.fnmatchcase(function, t) for t in tokens if "_" in t or t.isalnum()):
            return key
    return None


def _alias_of(namespace, function):
    """Another public name of ``namespace`` bound to the same function object (jax.nn.swish is
    jax.nn.silu), or None."""
    module = {"torch.special": torch.special, "tf.math": tf.math, "tf.math.special": tf.math.special}.get(namespace)
    if module is None:
        import jax.nn
        import jax.scipy.special

        module = jax.nn if namespace == "jax.nn" else jax.scipy.special
    obj = getattr(module, function)
    return next((n for n in sorted(dir(module)) if n != function and getattr(module, n, None) is obj), None)


def _where(namespace, framework, function, aliases=True):
    """How ``namespace.function`` is covered: ('record', name), ('missing', key) or None."""
    qualified = f"{namespace}.{function}"
    alias = _alias_of(namespace, function) if aliases else None
    if alias is not None:
        found = _where(namespace, framework, alias, aliases=False)
        if found is not None and found[0] == "record":
            return found
    if qualified in COVERED_AS:
        return ("record", COVERED_AS[qualified])
    if function in RECORDS and callable(RECORDS[function].spelling(framework)):
        return ("record", function)
    for spelled, name in _named_spellings(framework).items():
        if spelled in (qualified, function):
            return ("record", name)
    key = _in_missing(namespace, function)
    return ("missing", key) if key else None


def test_every_public_special_function_has_a_record_or_a_missing_entry():
    uncovered = [
        f"{namespace}.{fn}"
        for (namespace, framework), names in _namespaces().items()
        for fn in names
        if _where(namespace, framework, fn) is None
    ]
    assert not uncovered, f"neither a record's spelling nor in MISSING: {uncovered}"


def test_tf_math_special_functions_exist():
    assert [n for n in TF_MATH_SPECIAL if not hasattr(tf.math, n)] == []


@pytest.mark.parametrize("qualified", sorted(COVERED_AS))
def test_each_covered_as_entry_is_a_spelled_record_that_names_the_function(qualified):
    namespace, function = qualified.rsplit(".", 1)
    framework = {"torch": "torch", "jax": "jax", "tf": "tensorflow"}[namespace.split(".")[0]]
    rec = RECORDS[COVERED_AS[qualified]]
    assert callable(rec.spelling(framework)), (qualified, rec.spelling(framework))
    source = inspect.getsource(inspect.getmodule(rec.spelling(framework)))
    assert re.search(rf"\b{function}\b", source), f"{qualified}: its record's module never names {function}"


def test_every_missing_entry_names_an_installed_function():
    # a stale entry (the function gained a record, or left its namespace) fails
    spelled = {
        (namespace, fn)
        for (namespace, framework), names in _namespaces().items()
        for fn in names
        if _where(namespace, framework, fn) == ("missing", _in_missing(namespace, fn))
    }
    used = {_in_missing(namespace, fn) for namespace, fn in spelled}
    assert set(MISSING) <= used, f"MISSING entries naming no installed, unrecorded function: {set(MISSING) - used}"
