"""The ``special`` values kind: IEEE 754's special values in every argument, over the whole line."""

from __future__ import annotations

import numpy as np

from conformance.case import Case
from conformance.ops import VALUES, RecordData, RecordParams


def _case(op, shape, dtype, seed=3):
    return Case(op, RecordParams.of({"values": "special"}), {"input": shape}, dtype, seed, ("forward",))


def test_a_special_case_draws_the_special_values_of_its_dtype_outside_the_declared_domain():
    assert "special" in VALUES
    a = RecordData(_case("log", (400,), "float32"))["input"]  # log's domain is "pos"
    assert np.isnan(a).any() and np.isposinf(a).any() and np.isneginf(a).any()
    assert (a < 0).any(), "log is drawn over the whole line: log(-1) is nan, and the frameworks must say so"
    assert np.any((a == 0) & np.signbit(a)) and np.any((a == 0) & ~np.signbit(a)), "both zeros"
    assert np.any(np.abs(a) == 2.0**-149), "float32's smallest subnormal"
    assert np.any(np.abs(a) == np.finfo(np.float32).max)
    assert np.any(np.abs(a) == 1.0) and np.any(np.abs(a) == 0.5)
    finite = a[np.isfinite(a) & (np.abs(a) > 2.0**-126) & (np.abs(a) < 1e30)]
    assert finite.size > 100  # half the elements are ordinary draws
    assert np.array_equal(a, a.astype(np.float32).astype(np.float64), equal_nan=True)  # exact in the dtype


def test_the_special_values_follow_the_dtype():
    a = RecordData(_case("exp", (400,), "float16"))["input"]
    assert np.any(np.abs(a) == 65504.0) and np.any(np.abs(a) == 2.0**-24)
    assert not np.any(np.abs(a[np.isfinite(a)]) > 65504.0)
