"""PyTorch's OpInfo samples judge the reference (see tests/opinfo/harness.py for the checks and
the tolerance, tests/opinfo/survey.py for expected.json).

Default run: per OpInfo entry, forward + VJP on the first ``DEFAULT_SAMPLES`` samples. Marked
``slow``: every sample, every check (VJP of VJP, jvp, vmap, vmap∘vjp, in-place). An entry
recorded as agreeing must keep agreeing (a regression fails); a recorded departure is an xfail
carrying its message; a not-implemented entry is skipped with its reason; an entry implemented
since expected.json was written runs and must agree (else record it: `python -m
tests.opinfo.survey --write`). No op is named here: the entries come from expected.json.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.opinfo import survey as S

pytestmark = pytest.mark.torch
pytest.importorskip("expecttest", reason="importing torch's OpInfo database needs expecttest")

DEFAULT_SAMPLES = 4
_DATA = json.loads(S.EXPECTED.read_text())
_KEYS = list(_DATA["entries"])


def _harness():
    from tests.opinfo import harness as H

    return H


def _judge(key, checks, max_samples):
    H = _harness()
    if key not in H.all_entries():
        pytest.fail(f"{key} is in expected.json but not in this torch's op_db: regenerate it")
    rec = _DATA["entries"][key]
    result = H.run_entry(key, checks=checks, max_samples=max_samples)
    if result["status"] == "not implemented":
        if rec["status"] != "not implemented":
            pytest.fail(f"{key} was implemented ({rec['status']}) and is now not: {result['reason']}")
        pytest.skip(f"not implemented: {result['reason']}")
    failures = [(c, f) for c in checks for f in result["checks"][c]["fail"]]
    if not failures:
        return
    text = "; ".join(f"{c} sample {f['sample']} ({f['input']}): {f['message']}" for c, f in failures[:5])
    if rec["status"] == "not implemented":
        pytest.fail(
            f"{key} is implemented since expected.json was written and departs from torch: {text} "
            "(fix it, or record it with `python -m tests.opinfo.survey --write`)"
        )
    recorded = set(rec.get("departures", {}))
    new = [c for c, _ in failures if c not in recorded]
    if new:
        pytest.fail(f"{key} regressed on {sorted(set(new))} (recorded as agreeing there): {text}")
    pytest.xfail(f"recorded departure: {text}")


@pytest.mark.parametrize("key", _KEYS)
def test_forward_and_vjp(key):
    rec = _DATA["entries"][key]
    if rec["status"] == "not implemented" and not rec["reason"].startswith("missing in reference"):
        pytest.skip(f"not implemented: {rec['reason']}")
    _judge(key, ("forward", "vjp"), DEFAULT_SAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("key", _KEYS)
def test_every_check_every_sample(key):
    rec = _DATA["entries"][key]
    if rec["status"] == "not implemented" and not rec["reason"].startswith("missing in reference"):
        pytest.skip(f"not implemented: {rec['reason']}")
    _judge(key, _harness().CHECKS, None)


def test_expected_covers_op_db():
    """expected.json classifies exactly the OpInfo entries of the installed torch."""
    H = _harness()
    assert sorted(H.all_entries()) == sorted(_KEYS), (
        "op_db changed (another torch?): regenerate with `python -m tests.opinfo.survey --write`"
    )


def test_expected_matches_registry():
    """What expected.json records as missing is still missing from the reference, and what it
    records as implemented still exists (cheap: the forward of one sample at most)."""
    H = _harness()
    stale = []
    for key, rec in _DATA["entries"].items():
        op = H.all_entries().get(key)
        if op is None or not H.differentiable(op):
            continue
        resolves = H.run_entry(key, checks=("forward",), max_samples=1)["status"] != "not implemented"
        if (
            rec["status"] == "not implemented"
            and rec["reason"].startswith("missing in reference")
            and resolves
        ):
            stale.append(f"{key} (now in the reference)")
        if rec["status"] != "not implemented" and not resolves:
            stale.append(f"{key} (no longer in the reference)")
    assert not stale, f"regenerate with `python -m tests.opinfo.survey --write`: {stale}"


def test_every_not_implemented_entry_has_a_reason():
    for key, rec in _DATA["entries"].items():
        if rec["status"] == "not implemented":
            assert rec.get("reason"), key
        else:
            assert rec["status"] in ("agrees", "departs"), key
            assert (rec["status"] == "departs") == bool(rec.get("departures")), key


def test_docs_table_is_current():
    text = S.DOCS.read_text()
    assert S.docs_section(text) == S.docs_table(_DATA), (
        "docs/autograd.md's OpInfo table is stale: run `python -m tests.opinfo.survey --docs`"
    )


# --- the harness catches planted departures -------------------------------------------------


def _first_case(key, ref_fn):
    H = _harness()
    op = H.entries()[key]
    for index, sample in enumerate(H.samples(op, key)):
        case = H.Case(op, ref_fn, sample, key, index)
        if case.conv.torch_leaves:
            return case
    raise AssertionError(key)


def _an_agreeing_entry():
    for key, rec in _DATA["entries"].items():
        if rec["status"] == "agrees" and rec["checks"].get("vjp", "").startswith("ok"):
            return key
    pytest.skip("no entry agrees yet")


def test_planted_forward_bug_is_caught():
    H = _harness()
    key = _an_agreeing_entry()
    good = H.reference_callable(H.entries()[key])

    def bad(*args, **kwargs):
        out = good(*args, **kwargs)
        return out * (1 + 1e-9) if isinstance(out, H.T.Tensor) and out.dtype.kind == "f" else out

    case = _first_case(key, bad)
    outcome, message = H.run_check(case, "forward")
    if outcome == "ok":  # an output of zeros hides a relative error: try an additive one
        case = _first_case(key, lambda *a, **k: good(*a, **k) + 1e-9)
        outcome, message = H.run_check(case, "forward")
    assert outcome == "fail", message
    assert H.run_check(_first_case(key, good), "forward")[0] == "ok"


def test_planted_vjp_bug_is_caught():
    """Forward values equal, gradient off by one part in 1e6: the VJP check fails."""
    H = _harness()
    key = _an_agreeing_entry()
    good = H.reference_callable(H.entries()[key])

    def bad(x, *args, **kwargs):
        if isinstance(x, H.T.Tensor) and x.requires_grad:
            x = x + (x - x.detach()) * 1e-6
        return good(x, *args, **kwargs)

    case = _first_case(key, bad)
    assert H.run_check(case, "forward")[0] == "ok"
    outcome, message = H.run_check(case, "vjp")
    assert outcome == "fail" and "grad" in message, message


def _eigh_case(ref_fn):
    H = _harness()
    op = H.entries()["linalg.eigh"]
    for index, sample in enumerate(H.samples(op, "linalg.eigh")):
        if sample.input.numel() >= 4:
            return H.Case(op, ref_fn, sample, "linalg.eigh", index)
    raise AssertionError("no linalg.eigh sample")


def test_gauge_of_eigenvectors_is_free_but_their_values_are_checked():
    """eigh's eigenvectors are fixed up to a sign per column (the sample compares ``(L, |V|)``,
    as torch's gradient tests do): a flipped column agrees, a planted 1e-9 error in V or L does
    not, in forward, jvp and vmap."""
    H = _harness()
    good = H.reference_callable(H.entries()["linalg.eigh"])

    def flipped(*args, **kwargs):
        vals, vecs = good(*args, **kwargs)
        return vals, vecs * -1.0

    def scaled_vecs(*args, **kwargs):
        vals, vecs = good(*args, **kwargs)
        return vals, vecs * (1 + 1e-9)

    def scaled_vals(*args, **kwargs):
        vals, vecs = good(*args, **kwargs)
        return vals * (1 + 1e-9), -vecs

    for check in ("forward", "jvp", "vmap"):
        assert H.run_check(_eigh_case(flipped), check) == ("ok", ""), check
        for bad in (scaled_vecs, scaled_vals):
            outcome, message = H.run_check(_eigh_case(bad), check)
            assert outcome == "fail", (check, message)


def test_conditioning_term_admits_rounding_but_not_a_planted_bug():
    """matrix_exp of the first OpInfo sample: torch and the reference (scaling and squaring, both
    within cond(A) u of the exact exponential) differ by more than the elementwise tolerance; the
    conditioning term (exact, from the reference's forward mode) admits that, not a 1e-9 error."""
    H = _harness()
    op = H.entries()["matrix_exp"]
    good = H.reference_callable(op)
    case = _first_case("matrix_exp", good)
    with pytest.raises(H.Departure):  # the elementwise tolerance alone
        H.compare(
            case.op.op(*case.conv.torch_leaves), good(*case.conv.ref_leaves), case.n, "x", scale=case.scale
        )
    assert H.run_check(case, "forward") == ("ok", "")
    cond = H.conditioning(good, case.conv.ref_leaves)[0]
    assert cond.shape == tuple(case.conv.ref_leaves[0].shape) and (cond > 0).all()
    for bad in (lambda a: good(a) * (1 + 1e-9), lambda a: good(a) + 1e-9):
        outcome, message = H.run_check(_first_case("matrix_exp", bad), "forward")
        assert outcome == "fail" and "conditioning" in message, message


def _sample_case(key, index, ref_fn):
    H = _harness()
    op = H.entries()[key]
    for i, sample in enumerate(H.samples(op, key)):
        if i == index:
            return H.Case(op, ref_fn, sample, key, index)
    raise AssertionError((key, index))


def test_rounding_term_admits_intermediate_cancellation_but_not_a_planted_bug():
    """native_layer_norm over one element (sample 10): x - mean = 0, so the exact weight gradient
    is 0 and so is its conditioning, but torch forms x_hat = rstd·x - rstd·mean and gives
    -7.6e-14 (the rounding of rstd·x, rstd = 316). The first-order rounding of the reference's
    intermediates (the rounding of mean carried through x - mean and the product by rstd) admits
    it; a planted 1e-9 error in the weight's gradient it does not."""
    H = _harness()
    key = "native_layer_norm"
    good = H.reference_callable(H.entries()[key])
    case = _sample_case(key, 10, good)
    assert tuple(case.sample.input.shape) == (1,) and tuple(case.sample.args[0]) == (1,)
    t_out, r_out = case.forward()
    t_g, r_g, *_ = case._vjp_parts(t_out, r_out)
    assert float(r_g[1].numpy()[0]) == 0.0 and 0 < abs(float(t_g[1][0])) < 1e-12
    assert H.run_check(case, "vjp") == ("ok", "")

    def bad(x, shape, weight, *args, **kwargs):  # the weight's gradient off by 1e-9·x·dy
        out = good(x, shape, weight, *args, **kwargs)
        return (out[0] + (weight - weight.detach()) * x.detach() * 1e-9, *out[1:])

    outcome, message = H.run_check(_sample_case(key, 10, bad), "vjp")
    assert outcome == "fail" and "intermediates" in message, message


def test_a_view_of_a_strided_base_converts_by_memory():
    """A sample that is a view of a column-major base (as LAPACK results are) converts to the
    same values (the storage is copied as it lies in memory)."""
    import torch

    H = _harness()
    base = torch.arange(12.0, dtype=torch.float64).reshape(4, 3).mT.clone()  # strides (1, 3)
    view = base.mT[1:, :]  # a view with row-major strides into it
    assert view._base is base and view.stride() == (3, 1)
    sample = type("Sample", (), {"input": view, "args": (), "kwargs": {}})()
    conv = H.Converted(sample)
    np.testing.assert_array_equal(conv.ref[0].numpy(), view.numpy())
    empty = torch.zeros(0, 0, dtype=torch.float64).mT.clone().mT
    conv = H.Converted(type("Sample", (), {"input": empty, "args": (), "kwargs": {}})())
    assert conv.ref[0].shape == (0, 0)


def test_tolerance_is_a_few_ulps_of_the_scale():
    H = _harness()
    t = np.array([1.0, -2.0, 3.0])
    assert H.tolerance(0, t, t) == H.EPS * H.ELEMENTWISE_ULPS * 3.0
    assert H.tolerance(100, t, t, scale=10.0) == H.EPS * (H.ELEMENTWISE_ULPS + 100) * 10.0
    import torch

    H.compare(torch.tensor(t), H.T.tensor(t + H.EPS * 3.0), 0, "x")  # one ulp: agrees
    with pytest.raises(H.Departure, match="max .diff"):
        H.compare(torch.tensor(t), H.T.tensor(t + 1e-12), 0, "x")
    with pytest.raises(H.Departure, match="torch .*nan"):
        H.compare(torch.tensor([np.nan]), H.T.tensor([0.0]), 0, "x")
    with pytest.raises(H.Departure, match="exact values"):
        H.compare(torch.tensor([1, 2]), H.T.tensor(np.array([1, 3])), 0, "x")
    with pytest.raises(H.Departure, match="dtype"):
        H.compare(torch.tensor([1.0], dtype=torch.float32), H.T.tensor([1.0], dtype=H.T.float64), 0, "x")


# --- the complex128 survey (tests/opinfo/expected_complex128.json) -----------------------------

_COMPLEX = json.loads(S.EXPECTED.with_name("expected_complex128.json").read_text())
_COMPLEX_AGREEING = [k for k, r in _COMPLEX["entries"].items() if r["status"] == "agrees"]


@pytest.fixture
def complex128():
    H = _harness()
    H.set_dtype("complex128")
    try:
        yield H
    finally:
        H.set_dtype("float64")


@pytest.mark.parametrize("key", _COMPLEX_AGREEING)
def test_complex128_forward_and_vjp(key, complex128):
    """An entry recorded as agreeing on its complex128 samples keeps agreeing (forward + VJP on the
    first samples; every check with ``python -m tests.opinfo.survey --dtype complex128``)."""
    result = complex128.run_entry(key, checks=("forward", "vjp"), max_samples=DEFAULT_SAMPLES)
    assert result["status"] == "implemented", result
    failures = [(c, f) for c in ("forward", "vjp") for f in result["checks"][c]["fail"]]
    assert not failures, f"{key} (complex128) regressed: {failures[:3]}"


def test_complex128_planted_missing_conjugate_is_caught(complex128, monkeypatch):
    """A holomorphic VJP without PyTorch's conjugate (JAX's convention) fails the complex VJP check."""
    from reference.ops import RULES

    key = "exp"
    assert key in _COMPLEX_AGREEING
    op = complex128.entries()[key]
    case = complex128.Case(op, complex128.reference_callable(op), next(complex128.samples(op, key)), key, 0)
    assert complex128.run_check(case, "vjp")[0] == "ok"
    monkeypatch.setattr(RULES["exp"], "complex_grads", "explicit")
    outcome, message = complex128.run_check(case, "vjp")
    assert outcome == "fail" and "grad" in message, message
