"""Each public spelling of an op (conformance/ops/_spellings.py) is reached and computes the op.

* every spelling runs the op: at generic float64 points (``values = normal``) its forward and
  reverse-mode results agree with the reference, as its primary spelling's do;
* a campaign draws the spellings: the strategy names them in ``params``, the coverage steering
  counts them, a reproducer calls the named one;
* a planted bug in one spelling is caught through that spelling only.
"""

from __future__ import annotations

import pytest

from conformance.case import Case
from conformance.ops import PRIMARY, RECORDS, SPELLING_PARAMS, RecordParams, op_params, spelling_name
from conformance.strategies import draw_examples, record_cases

SPELLED = sorted(
    (name, framework, spelling)
    for name, rec in RECORDS.items()
    for framework, named in rec.spellings.items()
    for spelling in named
)
ADAPTERS = {
    "torch": "conformance.adapters.torch_adapter:TorchAdapter",
    "jax": "conformance.adapters.jax_adapter:JaxAdapter",
    "tensorflow": "conformance.adapters.tf_adapter:TensorFlowAdapter",
}
_READY = {}


def _adapter(framework):
    if framework not in _READY:
        pytest.importorskip(framework)
        from conformance.adapters import load_class

        adapter = load_class(ADAPTERS[framework])()
        _READY[framework] = (adapter, adapter.setup())
    return _READY[framework]


def _generic_case(name, framework, spelling, check):
    """A float64 case of ``name`` at normal values, running ``spelling`` on ``framework``."""
    for case in draw_examples(record_cases(name, ("float64",), (check,)), 40, seed=7):
        params = case.params.as_dict()
        if params.get("values") != "normal":
            continue
        params = {k: v for k, v in params.items() if k not in SPELLING_PARAMS.values()}
        params[SPELLING_PARAMS[framework]] = spelling
        return Case(case.op, RecordParams.of(params), case.shapes, case.dtype, case.seed, case.checks)
    pytest.skip(f"{name}: no normal-valued case among 40 draws")


@pytest.mark.parametrize("name, framework, spelling", SPELLED)
def test_every_spelling_computes_the_op_at_generic_points(name, framework, spelling):
    from conformance.ops.judge import run_in_process

    adapter, settings = _adapter(framework)
    for check in ("forward", "vjp"):
        case = _generic_case(name, framework, spelling, check)
        assert spelling_name(case, framework) == spelling
        result = _classified(run_in_process(adapter, case, check, settings), framework, case, check)
        assert result["verdict"] in ("pass", "unsupported", "known"), (check, case.describe(), result.get("reason"))
        if result["verdict"] == "unsupported":  # only a refusal the spelling itself states
            why = getattr(RECORDS[name].spellings[framework][spelling], "refuses", None)
            stated = why(case, check) if why is not None else None  # (lax.zeta: no derivative)
            if stated:
                assert stated in result["reason"], result["reason"]
            else:  # keras.ops.var / std raise for a correction they lack
                assert "correction" in result["reason"], result["reason"]


def _classified(result, framework, case, check):
    """``result`` as a campaign with the shipped known file records it: a documented departure of
    the framework (keras.ops.gelu is tf.nn.gelu, float32 constant and all) is ``known``."""
    import importlib

    from conformance.known import SHIPPED, load_known

    known = _READY.setdefault("known", load_known(SHIPPED))
    rec = {
        **result,
        "framework": framework,
        "version": importlib.import_module(framework).__version__,
        "check": check,
        "dtype": case.dtype,
        "case_id": case.id,
        "case": case.to_dict(),
    }
    (out,), _ = known.classify([rec], {framework: _adapter(framework)[1]})
    return out


def test_cases_draw_every_spelling_and_name_it_in_params():
    seen = set()
    for case in draw_examples(record_cases("sigmoid", ("float64",), ("forward",)), 60, seed=1):
        for framework in ("torch", "jax", "tensorflow"):
            seen.add((framework, spelling_name(case, framework)))
            assert SPELLING_PARAMS[framework] not in op_params(case)  # the harness's, not the op's
    assert seen == {
        ("torch", PRIMARY), ("torch", "Tensor.sigmoid_"), ("torch", "torch.special.expit"),
        ("jax", PRIMARY), ("jax", "lax.logistic"), ("jax", "jax.scipy.special.expit"),
        ("tensorflow", PRIMARY), ("tensorflow", "keras.ops.sigmoid"),
    }  # fmt: skip


def test_an_unknown_spelling_is_a_reason_not_a_crash():
    case = Case("exp", RecordParams.of({"values": "normal", "spelling_jax": "jnp.nope"}), {"input": (2,)}, "float64", 0, ("forward",))
    said = RECORDS["exp"].spelling("jax", case)
    assert isinstance(said, str) and "jax has no spelling 'jnp.nope' of 'exp'" in said and "lax.exp" in said


def test_a_record_reproducer_calls_the_spelling_its_case_names():
    from conformance.record_reproducer import record_reproducer

    case = _generic_case("exp", "torch", "Tensor.exp_", "vjp")
    result = {"case": case.to_dict(), "case_id": case.id, "check": "vjp", "framework": "torch", "verdict": "fail", "reason": "planted"}
    text = record_reproducer(result, ADAPTERS["torch"])
    assert ".exp_()" in text and "spelling_torch" in text


def test_a_bug_planted_in_one_spelling_is_caught_through_it_only(monkeypatch):
    """The in-place exp's gradient doubled: its cases fail, the primary spelling's pass."""
    from conformance.ops.judge import run_in_process

    adapter, settings = _adapter("torch")
    rec = RECORDS["exp"]
    planted = {**rec.spellings["torch"], "Tensor.exp_": lambda T, x: _doubled_grad(T, x.clone().exp_())}
    monkeypatch.setitem(RECORDS, "exp", type(rec)(**{**rec.__dict__, "spellings": {**rec.spellings, "torch": planted}}))
    inplace = _generic_case("exp", "torch", "Tensor.exp_", "vjp")
    assert run_in_process(adapter, inplace, "vjp", settings)["verdict"] == "fail"
    primary = Case(inplace.op, RecordParams.of({k: v for k, v in inplace.params.as_dict().items() if k != "spelling_torch"}), inplace.shapes, inplace.dtype, inplace.seed, inplace.checks)
    assert run_in_process(adapter, primary, "vjp", settings)["verdict"] == "pass"


def _doubled_grad(T, y):
    class Doubled(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            return 2 * g

    return Doubled.apply(y)


@pytest.mark.parametrize("name, spelling", [("atan2", "lax.atan2"), ("maximum", "lax.max"), ("minimum", "lax.min")])
def test_a_lax_spelling_of_a_broadcasting_op_takes_operands_of_different_ranks(name, spelling):
    """jax.lax's binary primitives do not broadcast (they need equal shapes); the op they spell does
    (torch.atan2, jnp.arctan2), and a case draws operands of different ranks: the spelling broadcasts
    them first, so the case is judged, not refused with 'arrays must have the same number of
    dimensions'."""
    from conformance.ops.judge import run_in_process

    adapter, settings = _adapter("jax")
    for check in ("forward", "vjp", "jvp"):
        base = _generic_case(name, "jax", spelling, check)
        case = Case(base.op, base.params, {"input": [2, 3], "other": [3]}, base.dtype, base.seed, base.checks)
        result = _classified(run_in_process(adapter, case, check, settings), "jax", case, check)
        assert result["verdict"] == "pass", (check, case.describe(), result.get("reason"))
