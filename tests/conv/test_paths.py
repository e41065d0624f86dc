"""Every algorithm path that applies must agree with the default (im2col) path in float64, and
the direct-loop oracle (the definition, written out) must agree with both."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from reference.conv import (
    ConvConfigError,
    algorithms,
    applicable_algorithms,
    convolution,
    convolution_backward,
)
from tests.conv.checks import assert_close_to_bound
from tests.conv.strategies import ConvCase, conv_cases

REL = 1e-12  # float64 paths that sum the same products in another order differ by ~K·2^-53·Σ|x·w|


def _role_call(case: ConvCase, role: str, arrays, algorithm):
    x, w, gy = arrays
    if role == "forward":
        return convolution(x, w, None, *case.params, algorithm=algorithm)
    mask = (role == "grad_input", role == "grad_weight", False)
    out = convolution_backward(gy, x, w, None, *case.params, mask, algorithm=algorithm)
    return out[0] if role == "grad_input" else out[1]


def _inputs(case: ConvCase, seed=0):
    x, w, _ = case.arrays(seed)
    y_shape = convolution(x, w, None, *case.params).shape
    gy = np.random.default_rng(seed + 1).standard_normal(y_shape)
    return x, w, gy


def check_paths_agree(case: ConvCase, require=None):
    arrays = _inputs(case)
    magnitudes = tuple(np.abs(a) for a in arrays)
    paths = applicable_algorithms(case.input_shape, case.weight_shape, *case.params)
    checked = set()
    for role, names in paths.items():
        expected = _role_call(case, role, arrays, None)
        magnitude = _role_call(case, role, magnitudes, None)
        for name in names:
            observed = _role_call(case, role, arrays, name)
            assert_close_to_bound(role, observed, expected, magnitude, REL, f"algorithm={name} {case}")
            checked.add((name, role))
    if require is not None:
        assert require <= checked, f"paths {require - checked} did not apply to {case}"
    return checked


@given(conv_cases())
def test_every_applicable_path_agrees_with_default(case):
    check_paths_agree(case)


@given(conv_cases(ranks=(1, 2), allow_empty=False))
def test_direct_oracle_always_applies_to_small_cases(case):
    """The oracle must take part in the fuzzed comparisons, not only in hand-picked ones."""
    checked = check_paths_agree(case)
    assert {("direct", "forward"), ("direct", "grad_input"), ("direct", "grad_weight")} <= checked


# Each alternative path on configurations chosen so that it applies, including the transposed
# mapping (a transposed conv's forward is its correlation's input gradient).
PATH_EXAMPLES = {
    "gemm_1x1": [
        ConvCase((2, 6, 7, 5), (4, 3, 1, 1), False, (2, 3), 0, (1, 1), False, (0, 0), 2),
        ConvCase((2, 4, 5), (4, 3, 1), True, (2,), 0, (1,), True, (1,), 1),
    ],
    "gemm_full_filter": [
        ConvCase((3, 4, 5, 3), (6, 2, 3, 2), True, (1, 2), "valid", (2, 2), False, (0, 0), 2),
        ConvCase((2, 3, 1, 1), (3, 2, 3, 3), False, (2, 2), 0, (1, 1), True, (0, 0), 1),
    ],
    "wgrad_grouped_conv": [
        ConvCase((2, 4, 9, 8), (6, 2, 3, 2), True, (2, 3), ((1, 2), (0, 1)), (2, 1), False, (0, 0), 2),
        ConvCase((2, 4, 3), (4, 3, 2), False, (3,), 1, (2,), True, (1,), 2),
    ],
    "dgrad_transposed_conv": [
        ConvCase((2, 4, 9, 8), (6, 2, 3, 2), True, (2, 3), ((1, 2), (-1, 1)), (2, 1), False, (0, 0), 2),
        ConvCase((1, 3, 7, 6, 5), (3, 1, 2, 2, 3), False, (2, 1, 3), "same", (1, 2, 1), False, (0, 0, 0), 3),
        ConvCase((2, 4, 3), (4, 3, 2), False, (3,), 1, (2,), True, (1,), 2),
    ],
    "prepad_crop": [
        ConvCase((2, 3, 8, 7), (2, 3, 3, 3), True, (2, 1), ((0, 2), (-1, 1)), (1, 2), False, (0, 0), 1),
        ConvCase((1, 2, 4), (2, 2, 3), False, (2,), ((2, 0),), (1,), True, (1,), 1),
    ],
    "direct": [
        ConvCase((2, 4, 5, 4, 3), (2, 2, 2, 2, 2), True, (1, 2, 1), 1, (2, 1, 1), False, (0, 0, 0), 2)
    ],
}


@pytest.mark.parametrize(
    "name,case", [(n, c) for n, cases in PATH_EXAMPLES.items() for c in cases], ids=lambda v: str(v)[:40]
)
def test_each_path_applies_and_agrees(name, case):
    roles = {
        r
        for r, paths in applicable_algorithms(case.input_shape, case.weight_shape, *case.params).items()
        if name in paths
    }
    assert roles, f"{name} applies to no role of {case}"
    check_paths_agree(case, require={(name, r) for r in roles})


def test_every_listed_path_has_an_example():
    single = [n for n in algorithms() if n not in ("im2col", "fold_batch_into_groups", "loop")]
    assert sorted(single) == sorted(PATH_EXAMPLES)


def test_forcing_a_path_that_does_not_apply_names_path_and_reason():
    x, w = np.zeros((1, 2, 5, 5)), np.zeros((3, 2, 3, 3))
    with pytest.raises(ConvConfigError, match=r"algorithm='gemm_1x1'.*kernel is \(3, 3\)"):
        convolution(x, w, algorithm="gemm_1x1")
    with pytest.raises(
        ConvConfigError, match=r"algorithm='wgrad_grouped_conv'.*does not compute the forward"
    ):
        convolution(x, w, algorithm="wgrad_grouped_conv")
    with pytest.raises(ConvConfigError, match=r"algorithm='prepad_crop'.*already symmetric"):
        convolution(x, w, padding=1, algorithm="prepad_crop")
    with pytest.raises(ConvConfigError, match=r"algorithm='winograd'.*is not one of"):
        convolution(x, w, algorithm="winograd")
    with pytest.raises(ConvConfigError, match=r"algorithm='loop'.*batched_convolution"):
        convolution(x, w, algorithm="loop")
    gy = np.zeros((1, 3, 3, 3))
    with pytest.raises(ConvConfigError, match=r"dgrad_transposed_conv.*does not compute the grad weight"):
        convolution_backward(
            gy, x, w, None, 1, 0, 1, False, 0, 1, (True, True, False), algorithm="dgrad_transposed_conv"
        )
    # The transposed mapping is named in the message: its forward is the correlation's input gradient.
    with pytest.raises(ConvConfigError, match=r"forward \(the correlation's grad_input\)"):
        convolution(np.zeros((1, 2, 3, 3)), w.transpose(1, 0, 2, 3), transposed=True, algorithm="gemm_1x1")


def test_direct_oracle_refuses_large_loops():
    x, w = np.zeros((1, 1, 300, 300)), np.zeros((1, 1, 3, 3))
    with pytest.raises(ConvConfigError, match="direct oracle is limited"):
        convolution(x, w, algorithm="direct")
