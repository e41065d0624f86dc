"""The public functions generated from the rule family modules' ``EXPORTS`` (reference.ops.public,
issue #31: one place per op): each exported name is the generated function, the namespaces agree,
the function runs its rule, and a name exported twice is refused."""

from __future__ import annotations

import pytest

import reference as T
import reference.special
from reference.ops import api as A
from reference.ops import public
from reference.ops.functions import export as family_exports
from reference.ops.functions import pointwise as P
from reference.ops.rule import Export
from reference.ops.rules import EXPORTS, RULES

SPACES = {"reference": T, "methods": T.Tensor, "nn.functional": T.nn.functional, "special": reference.special}
HOMES = {"elementwise": A, "pointwise": P}
DECLARED = [
    (family, rule_name, export)
    for family, declared in sorted(EXPORTS.items())
    for rule_name, export in declared.items()
]


def test_the_table_declares_exports():
    assert {"elementwise", "pointwise"} <= {family for family, _, _ in DECLARED}
    assert len(DECLARED) >= 40


@pytest.mark.parametrize("family, rule_name, export", DECLARED, ids=[d[1] for d in DECLARED])
def test_every_exported_name_is_its_generated_function(family, rule_name, export):
    for dest, names in export.destinations().items():
        for name in names:
            fn = public.DESTINATIONS[dest][name]
            assert getattr(SPACES[dest], name) is fn, f"{dest}.{name}"
            assert family_exports()[dest][name] is fn
            assert fn.__name__ == (rule_name + "_" if name.endswith("_") else rule_name)
            if dest != "special" and family in HOMES:  # the family's function module reads it as its own
                assert getattr(HOMES[family], name) is fn
                assert name in dir(HOMES[family])


def test_the_namespaces_agree():
    """A name that is both a function of ``reference`` and a Tensor method is one function."""
    generated = public.DESTINATIONS
    both = set(generated["reference"]) & set(generated["methods"])
    assert {"tanh", "sin", "arcsin_", "sgn"} <= both
    for name in both:
        assert getattr(T, name) is getattr(T.Tensor, name) is generated["reference"][name]
    assert T.nn.functional.tanh is T.tanh and reference.special.expit is T.sigmoid
    assert reference.special.gammaln is T.lgamma and reference.special.psi is T.digamma


@pytest.mark.parametrize("family, rule_name, export", DECLARED, ids=[d[1] for d in DECLARED])
def test_a_generated_function_runs_its_rule(family, rule_name, export):
    x = T.tensor([0.25, 0.5], dtype=T.float64, requires_grad=True)
    function = public.FUNCTIONS[family].get(rule_name)  # (neg exports its twin only)
    if function is not None:
        assert function(x).grad_fn.rule is RULES[rule_name]
    twin = public.FUNCTIONS[family].get(rule_name + "_")
    if twin is not None:
        y = x * 1.0
        assert twin(y) is y
        assert y.grad_fn.rule is RULES[export.inplace_rule or rule_name]


def test_an_integer_input_computes_in_the_default_float_dtype():
    assert T.sin(T.tensor([1, 2])).dtype == T.float32  # call="float"
    assert T.sgn(T.tensor([1, -2])).dtype == T.int64  # call="same"
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        T.tensor([1, 2]).sin_()  # inplace="checked"


def test_a_name_exported_twice_is_refused():
    exports = {
        "elementwise": {"tanh": Export(reference="tanh")},
        "pointwise": {"sin": Export(reference="tanh")},
    }
    with pytest.raises(ValueError, match="reference name 'tanh' is exported twice"):
        public.build(exports)


def test_an_export_checks_its_fields():
    with pytest.raises(ValueError, match="Export.call must be"):
        Export(call="int")
    with pytest.raises(ValueError, match="Export.inplace must be"):
        Export(inplace="later")


def test_generate_runs_once():
    with pytest.raises(RuntimeError, match="runs once"):
        public.generate(EXPORTS)
