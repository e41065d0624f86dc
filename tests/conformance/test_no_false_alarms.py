"""No false alarms: the unmodified frameworks pass every valid case of the ci profile, in
float64, float32, float16 and bfloat16, on every check — and the departures they really have
are reported as such (each one checked here against the framework directly)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.adapters import BUILTIN
from conformance.case import CONV_CHECKS, DTYPES, Case
from conformance.runner import Campaign
from conformance.strategies import conv_cases

# TensorFlow departures the harness finds (each asserted directly by a test below); a valid
# case that meets one of them gets error_mismatch with this message, never a silent pass.
TF_KNOWN_ERRORS = {
    # tf.vectorized_map's fallback for Conv2DBackpropFilter drops the explicit_paddings attribute
    "vmap_vjp": "explicit_paddings attribute must contain",
}


@pytest.fixture(scope="module")
def campaigns(tmp_path_factory):
    opened = {}

    def get(framework):
        if importlib.util.find_spec(BUILTIN[framework][0]) is None:
            pytest.skip(f"{framework} is not installed")
        if framework not in opened:
            camp = Campaign(tmp_path_factory.mktemp(framework), {framework: BUILTIN[framework][1]})
            camp.start()
            opened[framework] = camp
        return opened[framework]

    yield get
    for camp in opened.values():
        camp.close()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("framework", [pytest.param(f, marks=getattr(pytest.mark, f)) for f in BUILTIN])
def test_no_false_fail_on_the_unmodified_framework(framework, dtype, campaigns):
    camp = campaigns(framework)
    # TensorFlow's empty-batch results have the wrong shape (a real departure, asserted below)
    batches = (1, 2) if framework == "tensorflow" else (1, 2, 0)

    @given(case=conv_cases(dtypes=(dtype,), batches=batches), check=st.sampled_from(CONV_CHECKS))
    def no_false_alarm(case, check):
        [rec] = camp.run_check(case.with_checks([check]), check, record=False)
        assert rec["verdict"] in ("pass", "unsupported", "error_mismatch"), rec.get("reason", rec)
        if rec["verdict"] == "error_mismatch":
            assert framework == "tensorflow" and TF_KNOWN_ERRORS.get(check, "@") in rec["reason"], rec[
                "reason"
            ]
        if rec["verdict"] == "unsupported":
            assert rec["reason"], "an unsupported verdict always says why"

    no_false_alarm()


@pytest.mark.tensorflow
def test_tensorflow_empty_batch_shape_departure_is_reported(campaigns):
    tf = pytest.importorskip("tensorflow")
    direct = tf.nn.conv2d(tf.zeros([0, 5, 5, 2], tf.float32), tf.zeros([3, 3, 2, 4], tf.float32), 1, "SAME")
    if direct.shape[-1] == 4:
        pytest.skip("this TensorFlow computes the right empty-batch shape")
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 2, "padding": "same", "bias": False},
            "shapes": {"input": [0, 2, 5, 5], "weight": [4, 2, 3, 3]},
            "dtype": "float32",
            "checks": ["forward"],
        }
    )
    [rec] = campaigns("tensorflow").run_check(case, "forward", record=False)
    assert rec["verdict"] == "fail" and "has shape [0, 2, 5, 5]" in rec["reason"]


@pytest.mark.tensorflow
def test_tensorflow_vectorized_map_gradient_departure_is_reported(campaigns):
    tf = pytest.importorskip("tensorflow")
    x, w = tf.ones([2, 1, 4, 4, 1]), tf.ones([2, 2, 1, 1])

    def per_sample(xi):  # per-sample weight gradients: TF's documented vectorized_map recipe
        with tf.GradientTape() as tape:
            tape.watch(w)
            y = tf.nn.conv2d(xi, w, 1, [[0, 0], [1, 0], [0, 1], [0, 0]])
        return tape.gradient(y, w)

    try:
        tf.vectorized_map(per_sample, x)
    except tf.errors.InvalidArgumentError as exc:
        assert TF_KNOWN_ERRORS["vmap_vjp"] in str(exc)
    else:
        pytest.skip("this TensorFlow vectorises conv2d gradients with explicit padding")
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 2, "padding": [[1, 0], [0, 1]]},
            "shapes": {"input": [1, 1, 4, 4], "weight": [1, 1, 2, 2]},
            "checks": ["vmap_vjp"],
        }
    )
    [rec] = campaigns("tensorflow").run_check(case, "vmap_vjp", record=False)
    assert rec["verdict"] == "error_mismatch" and TF_KNOWN_ERRORS["vmap_vjp"] in rec["reason"]


@pytest.mark.tensorflow
def test_tensorflow_depthwise_stride_with_dilation_is_declared_and_really_wrong(campaigns):
    tf = pytest.importorskip("tensorflow")
    direct = tf.nn.depthwise_conv2d(
        tf.ones([1, 5, 5, 2]), tf.ones([2, 2, 2, 1]), [1, 2, 2, 1], "VALID", dilations=[2, 2]
    )
    if direct.shape[1] == 2:
        pytest.skip("this TensorFlow strides dilated depthwise convolutions correctly")
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 2, "stride": 2, "dilation": 2, "groups": 2},
            "shapes": {"input": [1, 2, 5, 5], "weight": [2, 1, 2, 2]},
            "checks": ["forward"],
        }
    )
    [rec] = campaigns("tensorflow").run_check(case, "forward", record=False)
    assert rec["verdict"] == "unsupported" and "silently ignores the stride" in rec["reason"]


@pytest.mark.jax
def test_jax_accepting_a_kernel_larger_than_its_input_is_an_error_mismatch(campaigns):
    jax = pytest.importorskip("jax")
    out = jax.lax.conv_general_dilated(np.ones((1, 1, 2)), np.ones((1, 1, 3)), (1,), "VALID")
    assert out.shape == (1, 1, 0)  # JAX returns an empty result where the reference raises
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 1, "padding": "valid"},
            "shapes": {"input": [1, 1, 2], "weight": [1, 1, 3]},
            "checks": ["error"],
        }
    )
    [rec] = campaigns("jax").run_check(case, "error", record=False)
    assert rec["verdict"] == "error_mismatch" and "jax accepted it" in rec["reason"]


@pytest.mark.torch
def test_torch_rejects_what_the_reference_rejects(campaigns):
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {"rank": 1, "groups": 3},
            "shapes": {"input": [1, 4, 5], "weight": [6, 2, 3]},
            "checks": ["error"],
        }
    )
    [rec] = campaigns("torch").run_check(case, "error", record=False)
    assert rec["verdict"] == "pass" and rec["reason"].startswith("both reject")
