"""The ``convention`` verdict: a result that differs from the reference only where a record's declared
convention leaves the choice open (a kink, a tie, a NaN), and there equals a declared alternative, is
``convention``; any other difference, inside the region or not, is still ``fail``."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import scipy.special

import reference as T
from conformance import exitcodes
from conformance.case import Case
from conformance.junit import junit_tree
from conformance.ops import RECORDS, RecordParams
from conformance.ops.judge import record_verdict, run_in_process
from conformance.report import render_html, summarise, validate

NAN = float("nan")


def _case(op, data, check, dtype="float64", **params):
    rec = RECORDS[op]
    shapes = {n: tuple(np.shape(data[n])) for n in rec.inputs}
    return Case(
        op,
        RecordParams.of({"values": "nonfinite", **params}),
        shapes,
        dtype,
        0,
        (check,),
        data={k: np.asarray(v, dtype=np.float64).tolist() for k, v in data.items()},
    )


def _judge(case, check, **outputs):
    return record_verdict(
        case, check, "planted", {k: np.asarray(v, np.float64) for k, v in outputs.items()}, {}
    )


RELU = {"input": [NAN, 1.5, -2.0, 0.0], "grad_output": [1.0, 2.0, 3.0, 4.0]}


def test_relu_gradient_zero_at_nan_is_the_declared_convention():
    got = _judge(_case("relu", RELU, "vjp"), "vjp", grad_input=[0.0, 2.0, 0.0, 0.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [{"name": "relu-gradient-at-nan", "alternative": "zero", "elements": 1}]
    assert "relu-gradient-at-nan" in got["reason"]
    # the reference's own choice passes
    assert _judge(_case("relu", RELU, "vjp"), "vjp", grad_input=[1.0, 2.0, 0.0, 0.0])["verdict"] == "pass"


def test_a_planted_bug_inside_the_region_matching_no_alternative_fails():
    # at the NaN the reference passes the cotangent (1) and the alternative gives 0: 0.5 is neither
    # (the control: 0 there is the convention)
    assert (
        _judge(_case("relu", RELU, "vjp"), "vjp", grad_input=[0.0, 2.0, 0.0, 0.0])["verdict"] == "convention"
    )
    got = _judge(_case("relu", RELU, "vjp"), "vjp", grad_input=[0.5, 2.0, 0.0, 0.0])
    assert got["verdict"] == "fail", got
    assert "conventions" not in got


def test_the_alternative_inside_the_region_with_a_difference_outside_it_fails():
    assert (
        _judge(_case("relu", RELU, "vjp"), "vjp", grad_input=[0.0, 2.0, 0.0, 0.0])["verdict"] == "convention"
    )
    got = _judge(_case("relu", RELU, "vjp"), "vjp", grad_input=[0.0, 2.5, 0.0, 0.0])
    assert got["verdict"] == "fail", got


def test_outside_the_region_the_alternative_value_is_a_failure():
    # no NaN among the inputs: a zero gradient where the reference passes it is a plain bug
    data = {"input": [3.0, 1.5, -2.0, 0.0], "grad_output": [1.0, 2.0, 3.0, 4.0]}
    nan_first = {**data, "input": [NAN, 1.5, -2.0, 0.0]}
    control = _judge(_case("relu", nan_first, "vjp"), "vjp", grad_input=[0.0, 2.0, 0.0, 0.0])
    assert control["verdict"] == "convention"
    got = _judge(_case("relu", data, "vjp", values="normal"), "vjp", grad_input=[0.0, 2.0, 0.0, 0.0])
    assert got["verdict"] == "fail", got


def test_a_gradient_convention_does_not_excuse_a_forward_value():
    # maximum's convention at NaN concerns its derivative; a forward that drops the NaN is a failure
    data = {"input": [NAN, 1.0], "other": [1.0, 1.0], "grad_output": [1.0, 1.0]}
    got = _judge(_case("maximum", data, "forward"), "forward", output=[1.0, 1.0])
    assert got["verdict"] == "fail", got
    # the control: the same NaN decides the gradient (JAX gives neither operand any)
    got = _judge(_case("maximum", data, "vjp"), "vjp", grad_input=[0.0, 0.5], grad_other=[0.0, 0.5])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [{"name": "maximum-gradient-at-nan", "alternative": "none", "elements": 2}]


def test_sign_of_nan_is_a_value_convention_and_other_values_still_fail():
    case = _case("sign", {"input": [NAN, -0.0, 2.0]}, "forward")
    got = _judge(case, "forward", output=[NAN, 0.0, 1.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "sign-of-nan"
    assert _judge(case, "forward", output=[0.5, 0.0, 1.0])["verdict"] == "fail"


def test_sgn_of_a_real_nan_is_signs_convention():
    # on real tensors sgn is sign: JAX's and TensorFlow's NaN at a NaN input (jnp.sign, tf.math.sign)
    # is the same declared alternative to PyTorch's 0 (the seeded complex run's float64 sgn-09220d71518a)
    case = _case("sgn", {"input": [NAN, -0.0, 2.0, -3.0]}, "forward")
    got = _judge(case, "forward", output=[NAN, 0.0, 1.0, -1.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [{"name": "sign-of-nan", "alternative": "nan", "elements": 1}]
    assert _judge(case, "forward", output=[0.0, 0.0, 1.0, -1.0])["verdict"] == "pass"
    # a NaN where the input is a number is no convention
    assert _judge(case, "forward", output=[NAN, 0.0, NAN, -1.0])["verdict"] == "fail"


def test_maximum_ties_routed_to_the_first_operand_and_planted_thirds():
    data = {"input": [2.0, 1.0, 3.0], "other": [2.0, 0.0, 5.0], "grad_output": [1.0, 1.0, 1.0]}
    case = _case("maximum", data, "vjp", values="ties")
    # TensorFlow's choice: x >= y takes the whole gradient at the tie
    got = _judge(case, "vjp", grad_input=[1.0, 1.0, 0.0], grad_other=[0.0, 0.0, 1.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "maximum-gradient-at-ties", "alternative": "all-to-first", "elements": 2}
    ]
    # a third and two thirds: a subgradient too, but no declared alternative
    got = _judge(case, "vjp", grad_input=[1 / 3, 1.0, 0.0], grad_other=[2 / 3, 0.0, 1.0])
    assert got["verdict"] == "fail", got


def _adapter(framework):
    if framework == "jax":
        pytest.importorskip("jax")
        from conformance.adapters.jax_adapter import JaxAdapter

        return JaxAdapter()
    pytest.importorskip("tensorflow")
    from conformance.adapters.tf_adapter import TensorFlowAdapter

    return TensorFlowAdapter()


@pytest.mark.parametrize(
    "framework, op, data, params, convention, alternative",
    [
        ("jax", "relu", RELU, {}, "relu-gradient-at-nan", "zero"),
        ("tensorflow", "relu", RELU, {}, "relu-gradient-at-nan", "zero"),
        (
            "jax",
            "abs",
            {"input": [0.0, 1.5, -2.0], "grad_output": [1.0, 2.0, 3.0]},
            {},
            "abs-gradient-at-zero",
            "one",
        ),
        (
            "tensorflow",
            "maximum",
            {"input": [2.0, 1.0], "other": [2.0, 0.0], "grad_output": [1.0, 1.0]},
            {"values": "ties"},
            "maximum-gradient-at-ties",
            "all-to-first",
        ),
        (
            "jax",
            "clamp",
            {"input": [1.0, 0.25, -0.5], "grad_output": [1.0, 1.0, 1.0]},
            {"min": -0.5, "max": 1.0, "values": "ties"},
            "clamp-gradient-at-the-bounds",
            "half",
        ),
        (
            "jax",
            "pow_tensor",
            {"input": [0.0, 2.0], "other": [-0.5, 0.5], "grad_output": [1.0, 1.0]},
            {"values": "ties"},
            "pow-exponent-gradient-at-zero-base",
            "nan",
        ),
        (
            "tensorflow",
            "pow_tensor",
            {"input": [-2.0, 2.0], "other": [3.0, 0.5], "grad_output": [1.0, 1.0]},
            {"values": "ties"},
            "pow-exponent-gradient-at-a-negative-base",
            "zero",
        ),
        (
            "tensorflow",
            "max_dim",
            {"input": [[2.0, 2.0, 1.0], [0.0, 3.0, -1.0]], "grad_output": [1.0, 2.0]},
            {"values": "ties", "dim": 1, "keepdim": False},
            "max-over-a-dim-gradient-at-ties",
            "split-evenly",
        ),
        (
            "jax",
            "sort_stable",
            {"input": [1.0, 2.0, 1.0, 0.0, 2.0], "grad_output": [0.0, 1.0, 2.0, 3.0, 4.0]},
            {"values": "ties", "dim": 0, "descending": True},
            "sort-descending-order-of-equal-values",
            "reversed",
        ),
    ],
)
def test_a_stock_framework_choice_is_judged_convention(framework, op, data, params, convention, alternative):
    adapter = _adapter(framework)
    case = _case(op, data, "vjp", **params)
    got = run_in_process(adapter, case, "vjp", adapter.setup())
    assert got["verdict"] == "convention", got
    assert {(c["name"], c["alternative"]) for c in got["conventions"]} == {(convention, alternative)}


def _records():
    case = _case("relu", RELU, "vjp")
    judged = _judge(case, "vjp", grad_input=[0.0, 2.0, 0.0, 0.0])
    base = {
        "case_id": case.id,
        "framework": "jax:jit",
        "check": "vjp",
        "dtype": "float64",
        "case": case.to_dict(),
    }
    return [{**base, **judged}, {**base, "check": "forward", "verdict": "pass", "reason": ""}]


def test_report_junit_and_exit_code_carry_the_convention(tmp_path):
    records = _records()
    report = summarise(records, {"jax:jit": {"version": "0.10.2"}}, out_dir=tmp_path)
    validate(report)
    assert report["outcome"]["code"] == exitcodes.OK
    assert report["totals"]["convention"] == 1
    assert "convention" in report["verdicts"]
    (row,) = report["conventions"]["rows"]
    assert (
        row["framework"],
        row["op"],
        row["convention"],
        row["alternative"],
        row["results"],
        row["elements"],
    ) == (
        "jax:jit",
        "relu",
        "relu-gradient-at-nan",
        "zero",
        1,
        1,
    )
    html = render_html(report)
    assert 'id="conventions-table"' in html and "v-convention" in html
    tree = junit_tree(records, report)
    skipped = [s.get("message") for s in tree.iter("skipped")]
    assert len(skipped) == 1 and skipped[0].startswith("convention relu-gradient-at-nan (zero)")
    assert tree.get("failures") == "0"
    ET.tostring(tree)


def test_conventions_alone_are_judged_and_a_fail_beside_them_still_departs():
    assert exitcodes.outcome(["convention"])[0] == exitcodes.OK
    assert exitcodes.outcome(["convention", "fail"])[0] == exitcodes.DEPARTURES


def test_the_alternative_named_is_the_one_the_whole_result_follows():
    # TensorFlow at maximum(NaN, 1): x gets nothing, y the whole gradient. "none" (JAX's choice) would
    # also explain x's 0, but it decides y's gradient too (0), where the result kept PyTorch's 1
    data = {"input": [NAN, 1.0], "other": [1.0, 0.0], "grad_output": [1.0, 1.0]}
    got = _judge(_case("maximum", data, "vjp"), "vjp", grad_input=[0.0, 1.0], grad_other=[1.0, 0.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "maximum-gradient-at-nan", "alternative": "to-second", "elements": 1}
    ]


@pytest.mark.parametrize(
    "op, shapes, in_dims, data",
    [
        (  # a shared input against one batched at dim 1
            "maximum",
            {"input": (2, 3), "other": (3,)},
            [None, 1],
            {
                "input": [[2.0, 0.0, 1.0], [1.0, 1.0, 5.0]],
                "batched_other": [[2.0, 1.0], [0.0, 3.0], [1.0, 1.0]],
            },
        ),
        (  # samples of different ranks: a shared vector against a batched scalar
            "minimum",
            {"input": (3,), "other": ()},
            [None, -1],
            {"input": [1.0, 2.0, 3.0], "batched_other": [2.0, 5.0]},
        ),
    ],
)
def test_the_region_of_a_vmap_check_reads_each_sample_as_it_broadcasts(op, shapes, in_dims, data):
    # per sample the inputs broadcast, the batched arrays as stored do not; TensorFlow's ties (x
    # takes the whole gradient) are still met
    adapter = _adapter("tensorflow")
    out_shape = np.broadcast_shapes(*shapes.values())
    data = {**data, "batched_grad_output": np.arange(2.0 * np.prod(out_shape)).reshape((2, *out_shape)) + 1.0}
    case = Case(
        op,
        RecordParams.of({"values": "ties", "in_dims": in_dims, "vmap_size": 2}),
        shapes,
        "float64",
        0,
        ("vmap_vjp",),
        data={k: np.asarray(v, dtype=np.float64).tolist() for k, v in data.items()},
    )
    got = run_in_process(adapter, case, "vmap_vjp", adapter.setup())
    assert got["verdict"] == "convention", got
    assert [c["name"] for c in got["conventions"]] == [f"{op}-gradient-at-ties"]


@pytest.mark.parametrize(
    "case_json",
    [
        # seed-2 records campaign: JAX halves clamp_max_tensor's gradient at ties (jnp.minimum); the
        # bound's gradient sums over the broadcast dim, where the halving moves grad_other[11, 1] by
        # 0.091, just under its bound (0.093), and JAX's bfloat16 sum lands 0.094 from the reference's:
        # the choice decides that element too
        '{"op": "clamp_max_tensor", "params": {"values": "ties"}, "shapes": {"input": [5, 17, 2], '
        '"other": [17, 2]}, "dtype": "bfloat16", "seed": 2768, "checks": ["vjp"]}',
        # seed-4 records campaign: x = [..., nan, -inf, ...] against the bound -inf; JAX (jnp.maximum)
        # halves the tie at -inf and gives the NaN no gradient, which is PyTorch's clamp_min choice
        # there: the tie's alternative must leave the NaN to the record's own choice
        '{"op": "clamp_min_tensor", "params": {"values": "nonfinite"}, "shapes": {"input": [3, 4], '
        '"other": []}, "dtype": "bfloat16", "seed": 57627, "checks": ["vjp"]}',
    ],
)
def test_campaign_cases_of_jax_halving_clamp_ties(case_json):
    adapter = _adapter("jax")
    case = Case.from_json(case_json, "records campaign")
    got = run_in_process(adapter, case, "vjp", adapter.setup())
    assert got["verdict"] == "convention", got
    name = f"{case.op}-gradient-at-the-bound"
    assert [(c["name"], c["alternative"]) for c in got["conventions"]] == [(name, "half")]


# ---- every record: a derivative where it is unbounded --------------------------------------------

SQRT_AT_ZERO = {"input": [0.0, 4.0], "grad_output": [1.0, 1.0]}


def test_nan_for_an_unbounded_derivative_at_finite_inputs_is_a_convention():
    """sqrt'(0) = 1/(2 sqrt 0) has no value: PyTorch says +inf, a nan there is the other spelling."""
    case = _case("sqrt", SQRT_AT_ZERO, "vjp")
    assert _judge(case, "vjp", grad_input=[np.inf, 0.25])["verdict"] == "pass"  # the reference's own
    got = _judge(case, "vjp", grad_input=[NAN, 0.25])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "unbounded-derivative", "alternative": "nan-for-the-infinity", "elements": 1}
    ]


def test_an_unbounded_derivative_stays_judged_where_it_matters():
    case = _case("sqrt", SQRT_AT_ZERO, "vjp")
    assert _judge(case, "vjp", grad_input=[-np.inf, 0.25])["verdict"] == "fail"  # the other sign
    assert _judge(case, "vjp", grad_input=[NAN, 0.3])["verdict"] == "fail"  # and a finite element off
    # a value at a pole is fixed by C99 Annex F (log(0) = -inf): no convention for the forward check
    log0 = _case("log", {"input": [0.0, 1.0]}, "forward")
    assert _judge(log0, "forward", output=[NAN, 0.0])["verdict"] == "fail"
    # an infinite derivative of an infinite input is IEEE's, not a pole: exp'(inf) = inf
    exp_inf = _case("exp", {"input": [np.inf, 0.0], "grad_output": [1.0, 1.0]}, "vjp")
    assert _judge(exp_inf, "vjp", grad_input=[np.inf, 1.0])["verdict"] == "pass"
    assert _judge(exp_inf, "vjp", grad_input=[NAN, 1.0])["verdict"] == "fail"


def test_an_infinity_where_the_chain_rule_gives_nan_is_a_convention():
    """sqrt'(0) times a zero cotangent: inf * 0 is nan in PyTorch's chain rule; an infinity there
    (a framework that skips the zero) is the other spelling of a derivative with no value."""
    case = _case("sqrt", {"input": [0.0, 4.0], "grad_output": [0.0, 1.0]}, "vjp")
    assert _judge(case, "vjp", grad_input=[NAN, 0.25])["verdict"] == "pass"
    assert _judge(case, "vjp", grad_input=[np.inf, 0.25])["verdict"] == "convention"
    nan_in = _case("sqrt", {"input": [NAN, 4.0], "grad_output": [1.0, 1.0]}, "vjp")
    assert _judge(nan_in, "vjp", grad_input=[np.inf, 0.25])["verdict"] == "fail"  # nan in, inf out


def test_an_unbounded_derivative_beside_a_non_finite_input_is_judged_element_by_element():
    """atanh at 1 beside an inf and a NaN (values 'special'): its forward over reverse at the pole,
    c (2x/(1 - x^2)^2) t + tc / (1 - x^2) = inf - inf, is nan in the reference; PyTorch's division
    JVP ((tc - y dt) / b) gives the one-sided limit +inf (the slow records test, atanh jvp_jvp
    float32 seed 6517). The elements at the infinite and NaN inputs stay IEEE's: an infinity for
    their nan fails."""
    data = {
        "input": [1.0, np.inf, NAN, 0.5],
        "cot_output": [-0.765787661075592, 1.0, 1.0, 1.0],
        "tan1_input": [-2.099119186401367, 1.0, 1.0, 1.0],
        "tan_cot_output": [-0.020256631076335907, 1.0, 1.0, 1.0],
    }
    case = _case("atanh", data, "jvp_vjp", values="special")
    exact = 2 * 0.5 / (1 - 0.25) ** 2 + 1 / (1 - 0.25)  # x = 0.5: c = t = tc = 1
    got = _judge(case, "jvp_vjp", tangent_grad_input=[np.inf, NAN, NAN, exact])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "unbounded-derivative", "alternative": "infinity-for-the-nan", "elements": 1}
    ]
    assert _judge(case, "jvp_vjp", tangent_grad_input=[np.inf, np.inf, NAN, exact])["verdict"] == "fail"
    assert _judge(case, "jvp_vjp", tangent_grad_input=[np.inf, NAN, np.inf, exact])["verdict"] == "fail"
    assert _judge(case, "jvp_vjp", tangent_grad_input=[np.inf, NAN, NAN, exact + 0.1])["verdict"] == "fail"


def test_entr_derivative_below_its_domain_zero_is_a_convention_and_other_values_fail():
    """entr is the constant -inf on x < 0 (scipy, PyTorch); its derivative there has no value:
    PyTorch's -(1 + log x) says nan, JAX's constant branch 0, to every order."""
    data = {"input": [-0.9183862209320068, 2.0], "grad_output": [1.04, 1.0], "gg_input": [0.157, 1.0]}
    vjp = _case("entr", data, "vjp", values="special")
    assert (
        _judge(vjp, "vjp", grad_input=[NAN, -1.0 - np.log(2.0)])["verdict"] == "pass"
    )  # the reference's own
    got = _judge(vjp, "vjp", grad_input=[0.0, -1.0 - np.log(2.0)])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "entr-derivative-below-zero", "alternative": "zero", "elements": 1}
    ]
    assert _judge(vjp, "vjp", grad_input=[0.5, -1.0 - np.log(2.0)])["verdict"] == "fail"  # neither choice
    assert _judge(vjp, "vjp", grad_input=[0.0, 0.0])["verdict"] == "fail"  # x = 2 is inside the domain
    # second order (JAX's jax.grad of jax.grad): the cotangent's derivative at x < 0 is 0 too
    vjp_vjp = _case("entr", data, "vjp_vjp", values="special")
    got = _judge(vjp_vjp, "vjp_vjp", g_grad_output=[0.0, -(1.0 + np.log(2.0))], g_input=[0.0, -0.5])
    assert got["verdict"] == "convention", got
    # the forward value is fixed (-inf below 0): no convention for it
    fwd = _case("entr", data, "forward", values="special")
    assert _judge(fwd, "forward", output=[NAN, -2.0 * np.log(2.0)])["verdict"] == "fail"


def test_polygamma_at_plus_infinity_is_the_limit_not_a_convention():
    """digamma'' = polygamma(2, x) -> -0.0 as x -> +inf: the reference answers the limit (TensorFlow
    says -0.0; formerly the reference kept PyTorch's nan and a zero was the convention
    polygamma-at-plus-infinity, now gone). PyTorch's and JAX's nan departs from it (docs/accuracy.md;
    the bound of that element has no value, so it is not judged)."""
    x = T.tensor([np.inf, 2.0], dtype=T.float64, requires_grad=True)
    assert T.polygamma(2, x.detach()).numpy().tolist()[0] == 0.0
    assert np.signbit(T.polygamma(2, x.detach()).numpy()[0]) and not np.signbit(
        T.polygamma(3, x.detach()).numpy()[0]
    )
    (d1,) = T.autograd.grad(T.digamma(x).sum(), x, create_graph=True)
    (d2,) = T.autograd.grad(d1.sum(), x)
    assert d2.numpy()[0] == 0.0 and np.signbit(d2.numpy()[0])
    data = {"input": [np.inf, 2.0], "tan1_input": [1.0, 1.0], "tan2_input": [1.0, 1.0]}
    case = _case("digamma", data, "jvp_jvp")
    exact = float(scipy.special.polygamma(2, 2.0))
    got = _judge(case, "jvp_jvp", tangent2_output=[-0.0, exact])
    assert got["verdict"] == "pass" and not got.get("conventions"), got
    assert not any(c.name == "polygamma-at-plus-infinity" for c in RECORDS["digamma"].conventions)


def test_a_zero_seed_at_an_unbounded_derivative_may_give_zero():
    """log1p''(-1) is unbounded; times a zero tangent PyTorch says nan (0 * inf), TensorFlow 0 (the
    zero seed wins). A zero there is a convention; a zero at a nan input, or a nonzero value, is not."""
    data = {"input": [-1.0, 1.0], "tan1_input": [0.0, 1.0], "cot_output": [3.0, 1.0]}
    case = _case("log1p", data, "vjp_jvp")
    ok = {"g_tan1_input": [np.inf, 0.5]}
    assert _judge(case, "vjp_jvp", g_input=[NAN, -0.25], **ok)["verdict"] == "pass"  # the reference's own
    got = _judge(case, "vjp_jvp", g_input=[0.0, -0.25], **ok)
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "zero-seed-at-an-unbounded-derivative", "alternative": "zero-for-the-nan", "elements": 1}
    ]
    assert _judge(case, "vjp_jvp", g_input=[1.0, -0.25], **ok)["verdict"] == "fail"
    at_nan = _case("log1p", {**data, "input": [NAN, 1.0]}, "vjp_jvp")
    assert _judge(at_nan, "vjp_jvp", g_input=[0.0, -0.25], g_tan1_input=[NAN, 0.5])["verdict"] == "fail"


def test_elu_gradient_at_nan_the_negative_branch_is_a_convention():
    """TensorFlow's elu takes the negative branch at NaN (x > 0 is false): slope alpha, where
    PyTorch's elu_backward takes the positive one (x <= 0 is false), slope 1. The seeded seed-0
    campaign's float16 vmap_jvp_vjp case: -0.245 = 0.5 * -0.49 at a NaN input."""
    data = {"input": [NAN, 1.5, -2.0], "grad_output": [-0.49, 2.0, 3.0]}
    case = _case("elu", data, "vjp", alpha=0.5)
    exact = [-0.49, 2.0, 3.0 * 0.5 * np.exp(-2.0)]
    got = _judge(case, "vjp", grad_input=[-0.245, *exact[1:]])
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "elu-gradient-at-nan", "alternative": "the-negative-branch", "elements": 1}
    ]
    assert _judge(case, "vjp", grad_input=exact)["verdict"] == "pass"
    # another value at the NaN is no choice: a failure
    assert _judge(case, "vjp", grad_input=[-0.3, *exact[1:]])["verdict"] == "fail"


def test_copysign_gradient_at_a_signed_zero_is_a_convention():
    """JAX's copysign derivative at a signed zero is ±1 (signbit(x) == signbit(other)), PyTorch's 0:
    the seeded seed-0 campaign's float16 vjp_vjp case (x = 0, other = -0.0: JAX's -gg)."""
    data = {"input": [0.0, 1.5, -2.0], "grad_output": [2.418, 2.0, 3.0]}
    case = _case("copysign_scalar", data, "vjp", other=-0.0)
    exact = [0.0, -2.0, 3.0]
    got = _judge(case, "vjp", grad_input=[-2.418, *exact[1:]])
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "copysign-gradient-at-zero"
    assert _judge(case, "vjp", grad_input=exact)["verdict"] == "pass"
    assert _judge(case, "vjp", grad_input=[2.418, *exact[1:]])["verdict"] == "fail"  # the wrong sign



def test_copysign_of_two_tensors_at_a_signed_zero_is_the_same_convention():
    """The two-tensor copysign makes the same choice at self = ±0: JAX's gradient there is
    sgn(self) sgn(other) g, PyTorch's 0 (the seeded seed-1 campaign's float16 vmap_vjp case: self =
    0, other = -2, g = -1.81, JAX 1.81)."""
    data = {"input": [0.0, 1.5], "other": [-2.0, 3.0], "grad_output": [-1.8115234375, 2.0]}
    case = _case("copysign", data, "vjp")
    exact = [0.0, 2.0]
    zeros = [0.0, 0.0]
    got = _judge(case, "vjp", grad_input=[1.8115234375, 2.0], grad_other=zeros)
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "copysign-gradient-at-zero"
    assert _judge(case, "vjp", grad_input=exact, grad_other=zeros)["verdict"] == "pass"
    assert _judge(case, "vjp", grad_input=[-1.8115234375, 2.0], grad_other=zeros)["verdict"] == "fail"

def test_remainder_derivatives_at_a_zero_divisor_are_a_convention_and_other_values_fail():
    """floormod(-1, 0) is nan; TensorFlow's second derivative there is nan, PyTorch's formulas give 0
    (floor's derivative): a choice the mathematics leaves open (no derivative of an undefined value).
    A planted finite value at the zero divisor is neither choice, and stays a failure."""
    data = {
        "input": [-1.0, 2.5],
        "other": [0.0, 1.5],
        "tan1_input": [-1.0, 1.0],
        "tan1_other": [0.39, 1.0],
        "tan2_input": [-0.9, 1.0],
        "tan2_other": [-1.0, 1.0],
    }
    case = _case("remainder", data, "jvp_jvp", values="ties")
    got = run_in_process(_adapter("tensorflow"), case, "jvp_jvp", _adapter("tensorflow").setup())
    assert got["verdict"] == "convention", got
    assert {(c["name"], c["alternative"]) for c in got["conventions"]} == {
        ("remainder-derivatives-at-a-zero-divisor", "nan")
    }
    planted = _judge(case, "jvp_jvp", tangent2_output=[5.0, 0.0])
    assert planted["verdict"] == "fail", planted


@pytest.mark.parametrize(
    "framework, op, params",
    [
        ("jax", "elu", {"alpha": 0.5}),
        ("jax", "selu", {}),
        ("tensorflow", "elu", {"alpha": 2.0}),
        ("tensorflow", "celu", {"alpha": 2.0}),
    ],
)
def test_elu_second_derivative_at_zero_the_negative_branch_is_a_convention(framework, op, params):
    """At the kink x = 0 PyTorch's second derivative of elu/selu/celu is the positive branch's (0),
    its first derivative the negative branch's; jax.nn.elu/selu and the TensorFlow spellings take the
    negative branch for both (alpha, scale alpha, 1 / alpha). The seeded campaigns drew it ('ties')."""
    adapter = _adapter(framework)
    data = {"input": [0.0, 1.5, -2.0], "grad_output": [1.25, 2.0, 3.0], "gg_input": [0.75, -1.0, 0.5]}
    case = _case(op, data, "vjp_vjp", values="ties", **params)
    got = run_in_process(adapter, case, "vjp_vjp", adapter.setup())
    assert got["verdict"] == "convention", got
    assert {(c["name"], c["alternative"]) for c in got["conventions"]} == {
        ("elu-second-derivative-at-zero", "the-negative-branch")
    }


def test_elu_second_derivative_at_zero_other_values_fail():
    """At the kink only PyTorch's 0 and the negative branch's value are choices: the derivative of the
    gradient in x there is g * gg * alpha (elu, alpha = 0.5: 1.25 * 0.75 * 0.5) or 0; half of it
    (what jnp.minimum's tie makes of celu) or twice it is a failure."""
    from conformance.ops.judge import expected_for, precision_for

    data = {"input": [0.0, 1.5, -2.0], "grad_output": [1.25, 2.0, 3.0], "gg_input": [0.75, -1.0, 0.5]}
    case = _case("elu", data, "vjp_vjp", values="ties", alpha=0.5)
    expected, _ = expected_for(case, "vjp_vjp", precision_for(case, {}, "planted"))
    reference = {k: np.array(v, dtype=np.float64) for k, (v, _) in expected.items()}
    assert _judge(case, "vjp_vjp", **reference)["verdict"] == "pass"
    name = next(k for k in reference if k.startswith("g_input"))
    assert reference[name][0] == 0.0  # PyTorch's choice: the positive branch
    at_kink = 1.25 * 0.75 * 0.5
    for planted, verdict in ((at_kink, "convention"), (at_kink / 2, "fail"), (2 * at_kink, "fail")):
        got = {k: v.copy() for k, v in reference.items()}
        got[name][0] = planted
        assert _judge(case, "vjp_vjp", **got)["verdict"] == verdict, (planted, verdict)


@pytest.mark.parametrize(
    "framework, check", [("jax", "vjp"), ("jax", "jvp_vjp"), ("tensorflow", "jvp"), ("tensorflow", "vjp_vjp")]
)
def test_max_pool_derivative_past_a_nan_is_a_convention(framework, check):
    """In the window [nan, -0.5, 0.25, -2] PyTorch's max_pool2d selects the NaN (the derivatives go
    to it); JAX's reduce_window max and TensorFlow's forward mode differentiate the largest number,
    0.25 (seedsF's hand check of the seeded nn run)."""
    adapter = _adapter(framework)
    case = _case(
        "max_pool2d",
        {"input": [[[[NAN, -0.5], [0.25, -2.0]]]]},
        check,
        kernel_size=[2, 2],
        stride=[2, 2],
        padding=[0, 0],
    )
    got = run_in_process(adapter, case, check, adapter.setup())
    assert got["verdict"] == "convention", got
    assert {(c["name"], c["alternative"]) for c in got["conventions"]} == {
        ("max-pool-gradient-at-nan", "to-the-largest-number")
    }


def test_max_pool_gradient_split_in_a_nan_window_fails():
    """Only the NaN (PyTorch) and the largest number are choices: half of the gradient to each, or
    the gradient to a smaller number, is a failure."""
    data = {"input": [[[[NAN, -0.5], [0.25, -2.0]]]], "grad_output": [[[[2.0]]]]}
    case = _case("max_pool2d", data, "vjp", kernel_size=[2, 2], stride=[2, 2], padding=[0, 0])
    assert _judge(case, "vjp", grad_input=[[[[2.0, 0.0], [0.0, 0.0]]]])["verdict"] == "pass"
    assert _judge(case, "vjp", grad_input=[[[[0.0, 0.0], [2.0, 0.0]]]])["verdict"] == "convention"
    assert _judge(case, "vjp", grad_input=[[[[1.0, 0.0], [1.0, 0.0]]]])["verdict"] == "fail"
    assert _judge(case, "vjp", grad_input=[[[[0.0, 2.0], [0.0, 0.0]]]])["verdict"] == "fail"


def test_hardsigmoid_derivative_at_nan_propagated_by_tensorflow_forward_mode_is_a_convention():
    """TensorFlow's ForwardAccumulator of relu6(x + 3) / 6 gives NaN at a NaN input where PyTorch's
    hardsigmoid_backward gives 0 (-3 < x < 3 is false; TensorFlow's GradientTape gives 0 too): the
    seeded seed-2 campaign's jvp cases hardsigmoid-516e6680fab1 and -9711763a9a39."""
    data = {"input": [NAN, 0.5, 4.0], "tangent_input": [-0.5755, 1.2, 1.0]}
    case = _case("hardsigmoid", data, "jvp")
    adapter = _adapter("tensorflow")
    got = run_in_process(adapter, case, "jvp", adapter.setup())
    assert got["verdict"] == "convention", got
    assert got["conventions"] == [
        {"name": "hardsigmoid-gradient-at-nan", "alternative": "propagate", "elements": 1}
    ]
    assert _judge(case, "jvp", tangent_output=[0.0, 0.2, 0.0])["verdict"] == "pass"
    # another number at the NaN is no choice: a failure
    assert _judge(case, "jvp", tangent_output=[-0.1, 0.2, 0.0])["verdict"] == "fail"


def test_median_gradient_at_ties_to_one_sorted_position_is_a_convention():
    """PyTorch's full median shares a tied median's gradient evenly (evenly_distribute_backward); JAX's
    and TensorFlow's sort-and-take spelling gives all of it to the tied element a stable sort puts at
    the lower middle position (the seeded seed-2 campaign's bfloat16 'tiny' jvp_vjp cases
    median-5a0e25107624 and -ccb15c3bbbcd, whose flushed subnormals tie at 0)."""
    data = {"input": [0.0, 3.0, 0.0, -1.0, 0.0], "grad_output": 1.2}
    case = _case("median", data, "vjp", values="ties")
    assert _judge(case, "vjp", grad_input=[0.4, 0.0, 0.4, 0.0, 0.4])["verdict"] == "pass"
    # sorted: -1, 0 (index 0), 0 (index 2), 0 (index 4), 3: the lower middle (position 2) is index 2
    got = _judge(case, "vjp", grad_input=[0.0, 0.0, 1.2, 0.0, 0.0])
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "median-gradient-at-ties"
    # another tied element is no declared choice: a failure
    assert _judge(case, "vjp", grad_input=[1.2, 0.0, 0.0, 0.0, 0.0])["verdict"] == "fail"


def test_softsign_second_derivative_at_zero_the_right_branch_is_a_convention():
    """softsign''(x) = -2 sgn(x) / (1 + |x|)^3 jumps from 2 to -2 at 0: PyTorch's composite gives 0
    there, jax.nn.soft_sign the right branch's -2 (JAX's |x|' at 0 is 1; the seeded activations at
    seed 2 drew it, 'ties'). The forward over forward at x = 0 with tangents 1.5 and -3 is
    0 * 1.5 * -3 or -2 * 1.5 * -3 = 9; the left branch's -9, or any other value, fails."""
    data = {"input": [0.0, 1.5], "tan1_input": [1.5, 1.0], "tan2_input": [-3.0, 2.0]}
    case = _case("softsign", data, "jvp_jvp", values="ties")
    off_kink = -2 * 1.0 * 2.0 / 2.5**3
    for planted, verdict in ((0.0, "pass"), (9.0, "convention"), (-9.0, "fail"), (4.5, "fail")):
        got = _judge(case, "jvp_jvp", tangent2_output=[planted, off_kink])
        assert got["verdict"] == verdict, (planted, got)
    got = _judge(case, "jvp_jvp", tangent2_output=[9.0, off_kink])
    assert got["conventions"] == [
        {"name": "softsign-second-derivative-at-zero", "alternative": "the-right-branch", "elements": 1}
    ]


@pytest.mark.parametrize(
    "op, data",
    [
        ("hyp2f1", {"a": [-0.1865234375, 0.5], "b": [0.0810546875, 1.0], "c": [-2.0, 1.5], "x": [0.3515625, 0.25]}),
        ("hyp1f1", {"a": [-0.1865234375, 0.5], "b": [-1.0, 1.5], "x": [0.3515625, 0.25]}),
    ],
)  # fmt: skip
def test_a_hypergeometric_value_at_a_negative_integer_lower_parameter_may_be_an_infinity(op, data):
    """At a negative integer lower parameter (no upper one terminating first) the function has a pole
    whose sign flips across it: the reference says nan, JAX's series an infinity (the reach sweep's
    at cell of c = -2: hyp2f1-3b61464614ce, vmap bfloat16, inf), either sign; a finite value there
    and an infinity at the regular element (lower parameter 1.5) stay failures, and derivatives are
    not this convention's."""
    import mpmath

    regular = float(getattr(mpmath, op)(*(v[1] for v in data.values())))
    case = _case(op, data, "forward", values="at")
    assert _judge(case, "forward", output=[NAN, regular])["verdict"] == "pass"
    for infinity in (np.inf, -np.inf):
        got = _judge(case, "forward", output=[infinity, regular])
        assert got["verdict"] == "convention", got
        assert got["conventions"] == [{"name": "hypergeometric-value-at-a-lower-pole", "alternative": "an-infinity", "elements": 1}]
    assert _judge(case, "forward", output=[1.0e30, regular])["verdict"] == "fail"
    assert _judge(case, "forward", output=[NAN, np.inf])["verdict"] == "fail"
    assert [c.checks for c in RECORDS[op].conventions if c.name == "hypergeometric-value-at-a-lower-pole"] == [("forward", "vmap")]


def test_hyp1f1_at_b_zero_and_x_zero_may_be_an_infinity_and_elsewhere_at_b_zero_keeps_its_sign():
    """1F1(a; 0; 0) has no value (1 along x = 0, +-inf along b = 0): the reference's nan, JAX's inf
    (hyp1f1-99e130ae5f3f, seeded seed 1, vmap float16 at (2, 0, 0)) is the convention. At b = +0,
    x = 1 the reference's signed infinity (the residue a x 1F1(a + 1; 2; x) > 0: +inf) stands: -inf
    there is a failure, not this convention (it only replaces a nan)."""
    case = _case("hyp1f1", {"a": [2.0, 2.0], "b": [0.0, 0.0], "x": [0.0, 1.0]}, "forward", values="ties")
    got = _judge(case, "forward", output=[np.inf, np.inf])
    assert got["verdict"] == "convention", got
    assert _judge(case, "forward", output=[np.inf, -np.inf])["verdict"] == "fail"
