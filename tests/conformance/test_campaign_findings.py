"""Regression tests for what the 20,000-result campaign (seed 1, docs/conformance.md) found in
refgrad itself: each test fails on the code before its fix."""

from __future__ import annotations

import pytest

from conformance.strategies import draw_examples, tensor_shapes


def test_tensor_shapes_with_a_minimum_dim_past_the_size_cap_does_not_crash():
    # the binary records' error strategy draws tensor_shapes(1, 3, 256, min_dim=2): once the dims
    # drawn leave room < 2, st.integers(2, min(4, room)) raised InvalidArgument and stopped the
    # whole `add` error fuzz unit ("Cannot have max_value=1 < min_value=2", campaign seed 1)
    shapes = draw_examples(tensor_shapes(3, 3, 8, 2), 60, seed=0)
    assert shapes and all(len(s) == 3 and min(s) >= 2 for s in shapes)


def _cumprod_vjp_vjp(x, g, gg, shape, dim):
    import numpy as np

    from conformance.case import Case
    from conformance.ops._run import reference_expected
    from reference.errors import Precision

    a = {"input": np.full(shape, x), "grad_output": np.full(shape, g), "gg_input": np.full(shape, gg)}
    case = Case.from_dict(
        {
            "op": "cumprod",
            "params": {"dim": dim, "values": "normal"},
            "shapes": {"input": list(shape)},
            "dtype": "float64",
            "seed": 0,
            "checks": ["vjp_vjp"],
        }
    )
    expected, _ = reference_expected(case, "vjp_vjp", a, Precision("float64"))
    return expected


def test_cumprod_second_derivative_bound_covers_the_general_formula_on_a_one_element_dim():
    # TensorFlow differentiates cumprod as reversed_cumsum(y·g)/x for every size; on a one-element
    # dim its second derivative gg·g/x − gg·(x·g)/x² cancels to a rounding residue (-5.55e-17 for
    # x=3, g=1.3, gg=0.9 in float64), where PyTorch's `return grad` gives exactly 0. The bound is now
    # composed along the general formula, so the residue passes; a dropped term still fails.
    import numpy as np

    from conformance.ops.judge import ulp_of

    for x, g, gg, shape, dim in [
        (3.0, 1.3, 0.9, (1,), 0),
        (0.7, 1.3, 0.9, (4, 1), 1),
        (-2.5, 0.3, 1.7, (), 0),
    ]:
        value, bound = _cumprod_vjp_vjp(x, g, gg, shape, dim)["g_input"]
        limit = bound + ulp_of(value, "float64")
        # TensorFlow's graph, op by op: _CumprodGrad is div_no_nan(cumsum(cumprod(x)·g), x); the
        # numerator's path gives (x·((gg/x)·g))/x, the denominator's (_DivNoNanGrad) gg·((−x·g)/x)/x
        x64, g64, gg64 = np.float64(x), np.float64(g), np.float64(gg)
        tf_like = (x64 * ((gg64 / x64) * g64)) / x64 + gg64 * ((-(x64 * g64)) / x64 / x64)
        assert np.all(np.abs(tf_like - value) <= limit)
        assert np.all(np.abs(0.0 - value) <= limit)  # PyTorch's structural zero
        dropped = np.float64(gg) * g / x  # a second derivative missing the -(x·g)/x² term
        assert np.all(np.abs(dropped - value) > limit)
        assert np.all(limit > 0)
    # the residue the campaign saw on TensorFlow, reproduced op by op
    x64, g64, gg64 = np.float64(3.0), np.float64(1.3), np.float64(0.9)
    assert (x64 * ((gg64 / x64) * g64)) / x64 + gg64 * ((-(x64 * g64)) / x64 / x64) == -(2.0**-54)


def test_cumprod_reverse_over_forward_bound_covers_the_division_formula():
    # the float16 cumprod campaign (exact10, issue 38): TensorFlow's gradient reverse_cumsum(y·g)/x,
    # differentiated again in reverse over forward, gave 2^-12 in g_input[0, 1] (column [0.2076, 0.9268]
    # along dim 0) where it is c_1·t_1 = 2.09e-6: its diagonal terms t_0·y/x_0² cancel only up to a
    # rounding. The reference's exact route (prod_partials of the prefixes, prod_curvature) declares
    # the division formulas as alternatives of its bound (ratio 1.16 without them); a dropped cross
    # term is still caught.
    import numpy as np

    from conformance.case import Case
    from conformance.ops._run import reference_expected
    from conformance.ops.judge import ulp_of
    from reference.errors import Precision

    a = {
        "input": np.array([[-0.0924072265625, 0.2076416015625], [1.23828125, 0.9267578125]]),
        "tan1_input": np.array([[4.458427429199219e-05, 0.253662109375], [-1.3330078125, -3.0994415283203125e-06]]),
        "cot_output": np.array([[0.0, 1.0], [1.0, -0.673828125]]),
    }
    case = Case.from_dict(
        {
            "op": "cumprod",
            "params": {"dim": 0, "values": "normal"},
            "shapes": {"input": [2, 2]},
            "dtype": "float16",
            "seed": 2484,
            "checks": ["vjp_jvp"],
        }
    )
    expected, _ = reference_expected(case, "vjp_jvp", a, Precision("float16"))
    value, bound = expected["g_input"]
    limit = bound + ulp_of(value, "float16")
    # H_1 of y_1 = x_0·x_1 is [[0, 1], [1, 0]]: g_input[0] = c_1·t_1, exactly
    assert value[0, 1] == -0.673828125 * -3.0994415283203125e-06
    assert value[0, 0] == 1.0 * -1.3330078125
    assert abs(2.0**-12 - value[0, 1]) <= limit[0, 1]  # TensorFlow's answer
    assert abs(0.0 - value[0, 0]) > limit[0, 0]  # the cross term dropped


def _abs_vjp_case():
    from conformance.case import Case

    return Case.from_dict(
        {
            "op": "abs",
            "params": {"values": "tiny"},
            "shapes": {"input": [3, 2, 4]},
            "dtype": "float32",
            "seed": 4327,
            "checks": ["vjp"],
        }
    )


def test_flushing_framework_is_judged_against_either_reading_of_subnormal_inputs():
    # JAX's abs gradient at a positive subnormal float32 is g·sign(x) (its comparison reads the
    # value as given), where the reference read with denormals-are-zero says sgn(0)·g = 0: under
    # flush-to-zero both readings are legitimate, element by element; a wrong derivative is not
    import numpy as np

    from conformance.case import case_data
    from conformance.ops.judge import record_verdict

    case = _abs_vjp_case()
    data = case_data(case)
    x, g = np.asarray(data["input"]), np.asarray(data["grad_output"])
    sub = (x != 0) & (np.abs(x) < 2.0**-126)
    assert sub.any()  # the case reaches subnormal inputs
    settings = {"flush_denormal": True}
    plain = {"grad_input": g * np.sign(x)}
    flushed = {"grad_input": np.where(sub, 0.0, g * np.sign(x))}
    for outputs in (plain, flushed):
        rec = record_verdict(case, "vjp", "jax", outputs, settings)
        assert rec["verdict"] == "pass", rec.get("reason")
        assert rec["bound"]["denormal_readings"]["flushed_inputs"] is True
    assert record_verdict(case, "vjp", "jax", plain, settings)["bound"]["denormal_readings"][
        "elements_judged_unflushed"
    ] == int(sub.sum())
    # planted: a wrong derivative at the subnormal elements only (twice the sign) is caught
    wrong = {"grad_input": np.where(sub, 2 * g * np.sign(x), g * np.sign(x))}
    assert record_verdict(case, "vjp", "jax", wrong, settings)["verdict"] == "fail"
    # a framework that does not flush is judged by the plain reading alone
    assert record_verdict(case, "vjp", "torch", flushed, {})["verdict"] == "fail"
    assert record_verdict(case, "vjp", "torch", plain, {})["verdict"] == "pass"


def test_maximum_minimum_jvp_at_nan_is_pytorchs():
    # torch.func.jvp(torch.maximum, (nan, 1), (10, 1)) is 1: PyTorch's formula other_t + where(self ==
    # other, 0.5, self > other)·(self_t − other_t) gives other's tangent where nothing compares; the
    # reference gave 0 (found as a torch jvp `fail` on maximum(nan, nan) in float16, campaign seed 1)
    import reference as T

    nan = float("nan")
    for f in (T.maximum, T.minimum):
        for a, b, want in [(nan, 1.0, 1.0), (1.0, nan, 1.0), (nan, nan, 1.0), (2.0, 2.0, 5.5)]:
            x, y = T.tensor(a, dtype=T.float64), T.tensor(b, dtype=T.float64)
            t = T.func.jvp(f, (x, y), (T.tensor(10.0, dtype=T.float64), T.tensor(1.0, dtype=T.float64)))[1]
            assert float(t) == want, (f, a, b, float(t))
    x, y = T.tensor(3.0, dtype=T.float64), T.tensor(1.0, dtype=T.float64)
    tx, ty = T.tensor(10.0, dtype=T.float64), T.tensor(1.0, dtype=T.float64)
    assert float(T.func.jvp(T.maximum, (x, y), (tx, ty))[1]) == 10.0
    assert float(T.func.jvp(T.minimum, (x, y), (tx, ty))[1]) == 1.0


def test_error_bounds_follow_the_memory_order_of_a_non_row_major_array():
    # The tracker keeps an array's error bound by its memory; a bound registered for an array that
    # is not row-major (a result given PyTorch's strides, a transposed view) was stored in logical
    # order and read back in memory order: the bounds of a vmap over in_dims=-1 were permuted (found
    # as a stock torch tanh vmap_vjp float32 `fail`, ratio 1.1, campaign seed 2)
    import numpy as np

    import reference as T
    from reference.errors import Precision, Tracker, bound_of

    with Tracker(Precision(dtype="float32")) as tr:
        base = np.zeros((4, 3))
        view = base.T  # (3, 4), column-major
        err = np.arange(12.0).reshape(3, 4)
        tr.set_error(view, err)
        np.testing.assert_array_equal(tr.error_of(view), err)
        np.testing.assert_array_equal(tr.error_of(base), err.T)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 3))  # batch of 3 along the last dim
    g = rng.standard_normal((3, 2, 5))

    def per_sample(x, g):
        return T.func.vjp(T.tanh, x)[1](g)[0]

    def bound(in_dims, xs):
        return bound_of(
            lambda a, b: T.func.vmap(per_sample, in_dims=in_dims)(a, b), [xs, g], Precision("float32")
        )[1][0]

    np.testing.assert_array_equal(bound((-1, 0), x), bound((0, 0), np.moveaxis(x, -1, 0).copy()))


def test_a_comparison_within_the_errors_is_undecided_and_selections_bound_both_branches():
    # pairwise_distance(a, b, inf) in float16: a - b + 1e-6 loses the 1e-6, so entries 3 + 1e-6 and
    # |-3 + 1e-6| that the reference tells apart tie in every framework, and the inf-norm's double
    # backward splits between five maxima instead of three (stock torch, JAX and TF agreed on
    # -0.4448 where the reference said -0.9543, campaign seed 2): a selection on values closer than
    # their errors is undecided, and its bound now covers both outcomes
    import numpy as np

    import reference as T
    from reference.errors import Precision, Tracker

    with Tracker(Precision(dtype="float16")) as tr:
        x = T.tensor([1.0, 2.0, 3.0, 5.0], dtype=T.float64)
        y = T.tensor([1.0, 2.0005, 3.5, 5.0], dtype=T.float64)
        tr.set_error(x, np.full(4, 1e-3))
        eq = x == y
        assert eq.tolist() == [True, False, False, True]
        # equal values are decided, 2 vs 2.0005 (errors 1e-3) is not, 3 vs 3.5 is
        np.testing.assert_array_equal(tr.error_of(eq._data), [0.0, 1.0, 0.0, 0.0])
        as_number = eq.to(T.float64)
        assert tr.error_of(as_number)[1] >= 1.0 and tr.error_of(as_number)[2] < 1e-3
        picked = T.where(eq, x, T.tensor([10.0, 20.0, 30.0, 40.0], dtype=T.float64))
        assert tr.error_of(picked)[1] >= 18.0  # |2 - 20|: either branch
        assert tr.error_of(picked)[2] < 1.0  # decided: the branch's own rounding only
        both = T.logical_or(eq, x > 4.0)
        assert tr.error_of(both._data)[1] == 1.0


def test_pairwise_distance_inf_norm_near_ties_in_float16_pass_and_a_wrong_split_is_caught():
    import json

    import numpy as np

    from conformance.case import Case, case_data
    from conformance.ops.judge import record_verdict

    case = Case.from_dict(
        json.loads(
            '{"checks": ["vjp_vjp"], "dtype": "float16", "op": "pnorm", "params": {"p": Infinity, '
            '"values": "ties"}, "seed": 19201, "shapes": {"input": [1, 16], "other": [1, 16]}}'
        )
    )
    data = case_data(case)
    a, b = np.asarray(data["input"]), np.asarray(data["other"])
    gga, ggb = np.asarray(data["gg_input"]), np.asarray(data["gg_other"])
    d = a - b  # float16 loses pairwise_distance's + 1e-6: several entries tie at max |d|
    top = np.abs(d) == np.abs(d).max()
    assert top.sum() > (np.abs(d + 1e-6) == np.abs(d + 1e-6).max()).sum()  # more ties than in float64

    def outputs(maxima):
        s = np.sign(d) * maxima / maxima.sum()
        return {
            "g_grad_output": np.array([(s * (gga - ggb)).sum()]),
            "g_input": np.zeros(a.shape),
            "g_other": np.zeros(a.shape),
        }

    both = record_verdict(case, "vjp_vjp", "torch", outputs(top), {})
    assert both["verdict"] == "pass", both.get("reason")
    # planted: the gradient not divided among the maxima (each gets all of it) is still caught; the
    # bound is first order in the undecided flips (here 1.19 around -0.954), looser than the exact
    # range of the splits the ties allow (-0.954 to -0.445), but sound
    planted = outputs(top)
    planted["g_grad_output"] = planted["g_grad_output"] * top.sum()
    assert record_verdict(case, "vjp_vjp", "torch", planted, {})["verdict"] == "fail"


@pytest.mark.parametrize(
    "framework, op, check, dtype",
    [
        ("jax", "linalg_inv", "forward", "float16"),
        ("jax", "cholesky", "vjp", "bfloat16"),
        ("tensorflow", "linalg_det", "vmap", "bfloat16"),
        ("tensorflow", "cholesky", "vjp", "bfloat16"),
        # jax.scipy.special refuses half types by name: "TypeError: x.dtype=float16 is not supported"
        ("jax", "ndtri", "forward", "float16"),
        ("jax", "log_ndtr", "vjp", "bfloat16"),
    ],
)
def test_a_framework_without_a_half_precision_linalg_kernel_is_unsupported_not_a_departure(
    framework, op, check, dtype
):
    # seed-2 campaign: 131 error_mismatch results of the linalg_solve family were JAX's "Unsupported
    # dtype float16" (its LAPACK bindings) and TensorFlow's "not in the list of allowed values" /
    # "No OpKernel was registered" for half types: a kernel the framework lacks, not a wrong answer
    pytest.importorskip("jax" if framework == "jax" else "tensorflow")
    from conformance.case import Case
    from conformance.ops import RecordParams
    from conformance.ops.judge import run_in_process

    if framework == "jax":
        from conformance.adapters.jax_adapter import JaxAdapter as Adapter
    else:
        from conformance.adapters.tf_adapter import TensorFlowAdapter as Adapter
    shapes = {"input": (3, 3)} if check != "vmap" else {"input": (2, 3, 3)}
    params = {"values": "normal"}
    if op == "cholesky":
        params["upper"] = False
    if check == "vmap":
        params.update(in_dims=[0], vmap_size=2)
    case = Case(op, RecordParams.of(params), shapes, dtype, 1, (check,))
    adapter = Adapter()
    result = run_in_process(adapter, case, check, adapter.setup())
    assert result["verdict"] == "unsupported", result
    assert dtype in result["reason"]


@pytest.mark.parametrize(
    "message, unsupported",
    [
        # JAX 0.11's lax.linalg dtype check (the first GPU run, issue 35: 140 linalg results in
        # float16/bfloat16 were error_mismatch on it)
        ("lu does not accept dtype float16 at position 0. Accepted dtypes at position 0 are "
         "subtypes of float32, complex128, complex64, float64.", True),
        # another dtype's refusal, or another TypeError, is not this case's dtype missing a kernel
        ("lu does not accept dtype bfloat16 at position 0.", False),
        ("unsupported operand type(s) for +: 'int' and 'str'", False),
    ],
)
def test_jax_refusing_the_case_dtype_by_its_dtype_check_is_unsupported(monkeypatch, message, unsupported):
    pytest.importorskip("jax")
    from conformance.adapters import jax_adapter
    from conformance.case import Case
    from conformance.ops import RecordParams
    from conformance.unsupported import Unsupported

    def refuse(*args, **kwargs):
        raise TypeError(message)

    monkeypatch.setattr(jax_adapter, "run_jax", refuse)
    case = Case("linalg_inv", RecordParams.of({"values": "normal"}), {"input": (3, 3)}, "float16", 1, ("vjp",))
    adapter = jax_adapter.JaxAdapter()
    expected = Unsupported if unsupported else TypeError
    with pytest.raises(expected) as raised:
        adapter.run_record(case, "vjp", {})
    if unsupported:
        assert "float16" in str(raised.value)


def test_a_reason_with_a_dotted_name_is_not_taken_for_a_spelling():
    # erfcx's TF "spelling" is the sentence saying why TensorFlow has none; it names tf.math, and the
    # pointwise records took any string with a dot for an attribute path (a TF AttributeError
    # reported as error_mismatch, which failed README's main command)
    pytest.importorskip("tensorflow")
    from conformance.adapters.tf_adapter import TensorFlowAdapter
    from conformance.case import Case
    from conformance.ops import RECORDS, RecordParams
    from conformance.ops.judge import run_in_process

    assert isinstance(RECORDS["erfcx"].tf, str)
    case = Case("erfcx", RecordParams.of({"values": "normal"}), {"input": (3,)}, "float32", 1, ("forward",))
    adapter = TensorFlowAdapter()
    result = run_in_process(adapter, case, "forward", adapter.setup())
    assert result["verdict"] == "unsupported", result


def test_jax_align_corners_resize_keeps_float64_scale():
    # seed-2 campaign: the JAX spelling of align_corners resizing built its scale in float32, so
    # float64 results were ~1e-8 off (ratio 2e7: upsample_linear1d jvp, upsample_bilinear2d vmap)
    pytest.importorskip("jax")
    from conformance.adapters.jax_adapter import JaxAdapter
    from conformance.case import Case
    from conformance.ops.judge import run_in_process

    case = Case.from_json(
        '{"op": "upsample_linear1d", "params": {"align_corners": true, "mode": "linear", "size": [7], '
        '"values": "normal"}, "shapes": {"input": [1, 1, 2]}, "dtype": "float64", "seed": 98, "checks": ["jvp"]}',
        "seed-2 campaign",
    )
    adapter = JaxAdapter()
    result = run_in_process(adapter, case, "jvp", adapter.setup())
    assert result["verdict"] == "pass", result


def test_a_conventions_alternative_is_read_either_way_where_subnormals_are_flushed():
    # TensorFlow's clip_by_value passes the whole gradient at a bound (hardtanh's 'whole'
    # alternative); where a cotangent at x = max_val is subnormal (5.3e-309, float64) its select
    # moves it unflushed, and the reference, read with denormals-are-zero, says 0 there as the
    # alternative did: the alternative did not decide that element and the convention left it a
    # fail (hardtanh-9a8fb1b46c62, vjp_jvp float64 values 'ties', kinks25's --domains whole run; the
    # same in the vjp here). The alternative is now read either way, as the reference is; a wrong
    # derivative still fails.
    import numpy as np

    from conformance.case import Case
    from conformance.ops.judge import record_verdict

    x, g = np.array([2.0, -1.0, 0.5, 3.0]), np.array([5.3e-309, -1.0, 1.5, 1.0])
    case = Case.from_dict(
        {
            "op": "hardtanh",
            "params": {"lo": -1.0, "hi": 2.0, "values": "ties"},
            "shapes": {"input": [4]},
            "dtype": "float64",
            "checks": ["vjp"],
            "data": {"input": x.tolist(), "grad_output": g.tolist()},
        }
    )
    whole = {"grad_input": g * ((x >= -1) & (x <= 2))}  # tf.clip_by_value's gradient
    flushed = {"flush_denormal": True}
    assert record_verdict(case, "vjp", "tensorflow", whole, flushed)["verdict"] == "convention"
    assert record_verdict(case, "vjp", "tensorflow", whole, {})["verdict"] == "convention"
    wrong = {"grad_input": np.where(x == -1, 2 * g, whole["grad_input"])}
    assert record_verdict(case, "vjp", "tensorflow", wrong, flushed)["verdict"] == "fail"


def test_a_torch_spelling_makes_its_own_tensors_on_the_case_device():
    # the second GPU run (issue 35): gather, scatter, index_*, masked_*, take/put, nll_loss and the
    # Cholesky records make an index, mask, target or identity with T.tensor / T.eye; made on the
    # CPU beside CUDA inputs, 336 results were "Expected all tensors to be on the same device".
    # The meta device stands in for CUDA here (a device that is not the default)
    import numpy as np
    import torch

    from conformance.case import Case
    from conformance.ops import RecordParams
    from conformance.ops._run import run_torch

    made = []

    def spelling(T, x, **params):
        made.append((T.tensor([0]).device, T.eye(2).device))
        return x * 2

    case = Case("exp", RecordParams.of({"values": "normal"}), {"input": (3,)}, "float32", 1, ("forward",))
    out = run_torch(torch, case, "forward", {"input": np.ones(3)}, spelling, device="meta")
    assert made == [(torch.device("meta"), torch.device("meta"))]
    assert {k: v.device for k, v in out.items()} == {"output": torch.device("meta")}
    assert torch.tensor([0]).device == torch.device("cpu")  # the default is restored after
