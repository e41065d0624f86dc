"""Which primitives accept complex tensors is each rule's ``complex_inputs`` field (declared inline or
by its family module's ``COMPLEX_INPUTS``), the one thing the dispatcher reads: no separate allow-list."""

from __future__ import annotations

import types

import pytest

import reference as T
from reference.ops.rules import RULES, _declared, family_of


def test_the_field_says_which_primitives_accept_complex_tensors():
    for name in ("add", "tanh", "sin", "sum", "gather", "view_as_real", "mm"):
        assert RULES[name].complex_inputs, name
    for name in ("erf", "maximum", "clamp", "floor", "sort"):
        assert not RULES[name].complex_inputs, name
    # a family declared whole: every primitive of it
    assert all(r.complex_inputs for n, r in RULES.items() if family_of(n) == "shape")


def test_the_dispatcher_reads_the_field(monkeypatch):
    z = T.tensor([0.5 + 0.25j], dtype=T.complex128)
    assert T.sin(z).dtype == T.complex128
    monkeypatch.setattr(RULES["sin"], "complex_inputs", False)
    with pytest.raises(NotImplementedError, match="\"sin_cpu\" not implemented for 'ComplexDouble'"):
        T.sin(z)


def test_a_family_declares_only_its_own_primitives():
    module = types.SimpleNamespace(COMPLEX_INPUTS="tanh sin")  # sin is pointwise's
    with pytest.raises(ValueError, match="rules.elementwise.COMPLEX_INPUTS names 'sin'"):
        _declared("elementwise", module, "COMPLEX_INPUTS")
    assert _declared("elementwise", types.SimpleNamespace(COMPLEX_INPUTS="tanh exp"), "COMPLEX_INPUTS") == [
        "tanh",
        "exp",
    ]
