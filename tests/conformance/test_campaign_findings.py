"""Regression tests for what the 20,000-result campaign (seed 1, docs/conformance.md) found in
refgrad itself: each test fails on the code before its fix."""

from __future__ import annotations

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
