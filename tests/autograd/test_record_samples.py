"""Gradcheck samples derived from the conformance records (tests.autograd.records.record_samples):
a primitive without a sample tuple of its own is gradchecked from its record, so a new elementwise
op needs nothing in tests/autograd (issue #31: one record per primitive)."""

from __future__ import annotations

import pytest

from conformance.ops import RECORDS
from reference.autograd import gradcheck, gradgradcheck
from reference.ops import RULES
from tests.autograd import op_records
from tests.autograd.records import record_samples
from tests.autograd.test_gradcheck import _draw

DERIVED = sorted(name for name, record in RECORDS.items() if record_samples(record) is not None)


def test_the_elementwise_records_derive_samples():
    assert {"tanh", "sin", "atan2", "erfinv", "lgamma"} <= set(DERIVED)
    assert record_samples(RECORDS["tanh"])[0][2:] == ([(2, 3)], "a")
    assert record_samples(RECORDS["log"])[0][3] == "p"  # inside [0, inf): the domain's gate
    assert record_samples(RECORDS["atanh"])[0][3] == "f"  # inside (-1, 1)
    assert record_samples(RECORDS["atan2"])[0][2] == [(2, 3), (2, 3)]
    for name in ("mm", "sum", "polygamma", "acosh"):  # not elementwise, parameters, another placement
        assert record_samples(RECORDS[name]) is None, name


def test_a_primitive_without_a_tuple_takes_its_records_samples(monkeypatch):
    monkeypatch.setattr(op_records, "OP_RECORDS", {})
    monkeypatch.setattr(op_records, "family_records", lambda: {})
    monkeypatch.setattr(op_records, "extra_samples", lambda: {})
    op_records._merge_family_records()
    assert set(op_records.OP_RECORDS) == set(DERIVED) & set(RULES)
    assert op_records.OP_RECORDS["sin"][0][0] == "record"


@pytest.mark.parametrize("name", DERIVED)
def test_derived_samples_pass_gradcheck(name):
    for label, fn, shapes, kinds, *opts in record_samples(RECORDS[name]):
        assert gradcheck(fn, _draw(shapes, kinds, 0), name=f"{name}[{label}]")
        if not opts:
            assert gradgradcheck(fn, _draw(shapes, kinds, 1), name=f"{name}[{label}]")
