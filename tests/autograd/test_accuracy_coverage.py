"""Every primitive of the derivative table is measured by an accuracy row or listed, with the
reason, under a category of tests/autograd/accuracy_coverage.py's NOT_MEASURED; docs/accuracy.md's
generated list agrees (issue 38)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference.autograd.table import RULES
from tests.autograd import accuracy_coverage as C


@pytest.fixture(scope="module")
def manifest():
    return C.manifest()  # ~20 s: every row's value, d1 and d2 passes


def test_every_primitive_is_measured_or_listed_and_no_listing_is_stale(manifest):
    assert C.problems(manifest) == []


def test_docs_not_measured_list_is_the_manifests(manifest):
    assert C.DOC.read_text().count(C.section(manifest)) == 1, "run python -m tests.autograd.accuracy_coverage"


def test_the_recorder_sees_a_rows_primitive_and_its_derivative_primitives():
    row = C.Row("t", "asin", lambda t: t.asin(), (np.array([0.25, -0.5]),))
    seen = C.passes(row)
    assert seen["value"] == {"asin"}
    assert "asin_d1" in seen["d1"] and "asin_d2" in seen["d2"] and "asin_d3" not in seen["d2"]
    assert RULES["asin"].forward.__name__ != "recorded"  # the wrappers are removed


def _without(man, name):
    listed = {n: c for n, c in man.listed.items() if n != name}
    return dataclasses.replace(man, listed=listed)


def test_problems_finds_an_unlisted_primitive_a_stale_name_and_a_contradiction(manifest):
    assert any(p.startswith("trace:") for p in C.problems(_without(manifest, "trace")))
    stale = dataclasses.replace(manifest, listed={**manifest.listed, "no_such_op": "sums"})
    assert any(p.startswith("no_such_op:") for p in C.problems(stale))
    measured = dataclasses.replace(manifest, listed={**manifest.listed, "sin": "sums"})
    assert any("sin: listed under 'sums' but measured by exact_table:sin" in p for p in C.problems(measured))
    reached = dataclasses.replace(manifest, listed={**manifest.listed, "asin_d2": "third order only"})
    assert any(
        p.startswith("asin_d2: listed under 'third order only' but reached") for p in C.problems(reached)
    )
