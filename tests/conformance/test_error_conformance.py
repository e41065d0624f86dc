"""Invalid convolution configurations (issue 7, item 3): each way of breaking a rule is drawn and
the reference rejects it naming the parameter that broke it, so the ``error`` check can report
which framework accepts what the reference rejects (or the reverse) as ``error_mismatch``."""

from __future__ import annotations

import pytest
from hypothesis import given

from conformance.expected import reference_rejects
from conformance.strategies import BREAKAGES, invalid_conv_cases

# the parameter each breakage's rejection names (the first words of the ConvConfigError message)
NAMED = {
    "input_channels": ("weight.shape=", "groups="),  # with groups > 1 divisibility breaks first
    "out_channels_vs_groups": "weight.shape=",
    "kernel_too_large": "weight.shape=",
    "output_padding_too_large": "output_padding=",
    "zero_stride": "stride=",
    "zero_dilation": "dilation=",
    "groups_do_not_divide_input": "groups=",
    "transposed_weight_channels": "weight.shape=",
    "crop_past_input": "weight.shape=",
}


def test_every_breakage_names_its_parameter():
    assert set(NAMED) == set(BREAKAGES)


@pytest.mark.parametrize("kind", BREAKAGES)
def test_each_breakage_is_rejected_by_the_reference_naming_the_parameter(kind):
    @given(invalid_conv_cases(breakages=(kind,)))
    def check(case):
        message = reference_rejects(case)
        assert message is not None, case.to_json()
        assert message.startswith(NAMED[kind]), message  # str.startswith takes a tuple too
        assert case.checks == ("error",) and case.description == f"invalid: {kind}"

    check()
