"""The vmap, vmap_vjp and error checks of the op records (issue #12): fuzzed in_dims (None and
negative dims included) agree on PyTorch and JAX, a planted batching bug is caught, and the error
check compares the reference's rejection with the framework's."""

from __future__ import annotations

import pytest

from conformance.case import Case
from conformance.coverage import record_strategy
from conformance.ops import RECORDS, RecordParams, batched_shape, check_arrays, vmap_spec
from conformance.ops.judge import run_in_process
from conformance.strategies import draw_examples

#: a sample of records over the families: unary, binary with broadcasting, reductions with dims,
#: a softmax, a matmul, a gather with index parameters
SAMPLE = ("exp", "add", "sum_dim", "softmax", "mm", "gather")


def _case(op, shapes, in_dims, size=2, dtype="float64", check="vmap", **params):
    params = {"values": "normal", **params, "in_dims": in_dims, "vmap_size": size}
    return Case(op, RecordParams.of(params), shapes, dtype, 3, (check,))


@pytest.fixture(scope="module")
def torch_adapter():
    from conformance.adapters.torch_adapter import TorchAdapter

    adapter = TorchAdapter()
    return adapter, adapter.setup()


@pytest.fixture(scope="module")
def jax_adapter():
    pytest.importorskip("jax")
    from conformance.adapters.jax_adapter import JaxAdapter

    adapter = JaxAdapter()
    return adapter, adapter.setup()


def test_records_declare_the_vmap_checks():
    assert {"vmap", "vmap_vjp"} <= set(RECORDS["exp"].checks)
    assert "vmap" in RECORDS["heaviside"].checks and "vmap_vjp" not in RECORDS["heaviside"].checks
    assert "error" in RECORDS["add"].checks and "error" in RECORDS["sum_dim"].checks
    assert "error" not in RECORDS["exp"].checks


def test_batched_arrays_follow_in_dims():
    case = _case("add", {"input": (3, 4), "other": (4,)}, [-1, None], size=5, check="vmap_vjp")
    assert vmap_spec(case) == (5, [-1, None])
    assert batched_shape((3, 4), -1, 5) == (3, 4, 5) and batched_shape((3, 4), 1, 5) == (3, 5, 4)
    assert check_arrays(case, "vmap_vjp") == ["input", "other", "batched_input", "batched_grad_output"]
    from conformance.ops import RecordData

    a = RecordData(case)
    assert a["batched_input"].shape == (3, 4, 5) and a["batched_grad_output"].shape == (5, 3, 4)
    with pytest.raises(KeyError):
        a["batched_other"]  # a shared input has no batched array


def test_fuzzed_in_dims_reach_none_and_negative_dims():
    cases = draw_examples(record_strategy("add", ("float64",), ("vmap",)), 40, seed=1)
    dims = [d for c in cases for d in c.params.as_dict()["in_dims"]]
    assert None in dims and any(d is not None and d < 0 for d in dims)
    assert all(any(d is not None for d in c.params.as_dict()["in_dims"]) for c in cases)
    again = Case.from_json(cases[-1].to_json(), "round-trip")
    assert again == cases[-1] and again.id == cases[-1].id


@pytest.mark.parametrize("check", ["vmap", "vmap_vjp"])
@pytest.mark.parametrize("fw", ["torch", "jax"])
def test_stock_frameworks_agree_on_fuzzed_in_dims(fw, check, request):
    adapter, settings = request.getfixturevalue(f"{fw}_adapter")
    for name in SAMPLE:
        for case in draw_examples(record_strategy(name, ("float64", "float32"), (check,)), 2, seed=5):
            result = run_in_process(adapter, case, check, settings)
            assert result["verdict"] == "pass", (name, case.to_json(), result.get("reason"))


@pytest.mark.parametrize("fw", ["torch", "jax"])
def test_shared_and_negative_in_dims_agree(fw, request):
    adapter, settings = request.getfixturevalue(f"{fw}_adapter")
    cases = [
        _case("add", {"input": (3, 4), "other": (4,)}, [-1, None], size=2),
        _case("add", {"input": (3, 4), "other": (4,)}, [None, 0], size=3, check="vmap_vjp"),
        _case("mm", {"input": (2, 3), "other": (3, 4)}, [1, -3], size=2, check="vmap_vjp"),
        _case("sum_dim", {"input": (4, 5)}, [-2], size=3, dim=-1, keepdim=True, check="vmap_vjp"),
    ]
    for case in cases:
        check = case.checks[0]
        result = run_in_process(adapter, case, check, settings)
        assert result["verdict"] == "pass", (case.to_json(), result.get("reason"))


def test_planted_batch_rule_ignoring_in_dims_is_caught():
    from tests.conformance.planted_records import IgnoresInDims

    adapter = IgnoresInDims()
    settings = adapter.setup()
    # in_dims=-1 on a (3,) input batched by 3: the same shape either way, different values
    case = _case("exp", {"input": (3,)}, [-1], size=3)
    result = run_in_process(adapter, case, "vmap", settings)
    assert result["verdict"] == "fail", result
    # in_dims 0 is what the planted adapter does anyway: it passes there (the check is not blind)
    assert (
        run_in_process(adapter, _case("exp", {"input": (3,)}, [0], size=3), "vmap", settings)["verdict"]
        == "pass"
    )
    # fuzzing finds it: some drawn case of a few records departs
    verdicts = [
        run_in_process(adapter, c, "vmap", settings)["verdict"]
        for name in ("exp", "add", "softmax")
        for c in draw_examples(record_strategy(name, ("float64",), ("vmap",)), 6, seed=2)
    ]
    assert "fail" in verdicts or "error_mismatch" in verdicts


def test_invalid_cases_are_rejected_by_the_reference():
    from conformance.expected import reference_rejects

    for name in ("add", "sum_dim", "amax"):
        for case in draw_examples(record_strategy(name, ("float32",), ("error",)), 3, seed=0):
            assert case.params.as_dict()["invalid"] and case.checks == ("error",)
            why = reference_rejects(case)
            assert why and why.split(":")[0] in ("IndexError", "RuntimeError"), (name, why)
    valid = draw_examples(record_strategy("add", ("float32",), ("forward",)), 2)
    assert all(reference_rejects(c) is None for c in valid)


def test_error_check_in_a_campaign(tmp_path):
    """torch rejects what the reference rejects (pass: both reject); a planted adapter that wraps an
    out-of-range dim accepts it: error_mismatch."""
    from conformance.runner import Campaign, read_results

    strategy = record_strategy("sum_dim", ("float32",), ("error",))
    frameworks = {
        "torch": "conformance.adapters.torch_adapter:TorchAdapter",
        "planted-wraps-dim": "planted_records:WrapsDim",
    }
    with Campaign(tmp_path / "out", frameworks, found_dir=tmp_path / "found") as camp:
        camp.start()
        camp.fuzz(list(frameworks), "error", strategy, max_examples=4, seed=0, max_shrinks=0)
    records = read_results(tmp_path / "out" / "results.jsonl")
    torch_v = {r["verdict"] for r in records if r["framework"] == "torch"}
    planted_v = {r["verdict"] for r in records if r["framework"] == "planted-wraps-dim"}
    assert torch_v == {"pass"}, records
    assert planted_v == {"error_mismatch"}, records
    assert all("both reject" in r["reason"] for r in records if r["framework"] == "torch")


def test_error_check_with_a_spelling_that_hides_the_breakage_is_unsupported(jax_adapter):
    adapter, settings = jax_adapter
    case = draw_examples(record_strategy("sum_dim", ("float32",), ("error",)), 1)[0]
    rec = RECORDS["sum_dim"]
    assert "jax" in rec.error_frameworks
    from dataclasses import replace

    RECORDS["sum_dim"] = replace(rec, error_frameworks=("torch",))
    try:
        result = run_in_process(adapter, case, "error", settings)
    finally:
        RECORDS["sum_dim"] = rec
    assert result["verdict"] == "unsupported" and "broken argument" in result["reason"]


def test_record_strategy_refuses_error_without_an_invalid_strategy():
    with pytest.raises(ValueError, match="no invalid-input strategy"):
        record_strategy("exp", ("float32",), ("error",))
