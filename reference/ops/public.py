"""The public functions generated from the rule family modules' ``EXPORTS`` (issue #31: one place per op).

A family module of :mod:`reference.ops.rules` declares, beside its rules, which of them are public and
under which names: ``EXPORTS = {"tanh": Export(reference="tanh", methods="tanh tanh_", ...)}``
(:class:`reference.ops.rule.Export`). :func:`generate` makes, once the table is loaded, each op's
function and in-place twin from its rule:

* the function ``op(input)``: the rule on ``input`` (``call="float"``: an integer or bool input
  computes in the default float dtype, PyTorch's ``unary_float_op``; ``"same"``: in its own dtype);
* the in-place twin ``op_(self)``: the rule (or ``inplace_rule``) written into ``self``.

It files them by destination (:data:`DESTINATIONS`, merged by :func:`reference.ops.functions.export`
with the hand-written families' names, so ``reference``, ``Tensor``, ``reference.nn.functional`` and
``reference.special`` install them like any other), and by family (:data:`FUNCTIONS`): the family's
function module reads them as its own attributes (``A.tanh`` in :mod:`reference.ops.api` for
``elementwise``, ``P.sin`` in :mod:`reference.ops.functions.pointwise` for ``pointwise``), as the
derivative formulas call them. An op whose public function does more than call its rule (``neg``'s
bool check, ``abs_``'s complex refusal) stays hand-written in its function module.
"""

from __future__ import annotations

from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.table import RULES
from reference.autograd.tensor import default_dtype
from reference.backend import is_floating, is_inexact
from reference.scalar_types import scalar_type_name

#: family -> {name: function}: the generated functions of each rule family module
FUNCTIONS: dict[str, dict] = {}
#: destination ("reference", "methods", "nn.functional", "special") -> {name: function}
DESTINATIONS: dict[str, dict] = {}


def unary_float(rule, x, params=None):
    """``rule`` on ``x``; an integer or bool ``x`` computes in the default float dtype."""
    return apply(rule, (x,), params or {}, cast=None if is_inexact(x.dtype) else default_dtype.value)


def inplace_result_check(self, dt):
    """PyTorch's refusal to write a floating result ``dt`` into an integer ``self``."""
    if dt != self.dtype and (is_floating(dt) and not is_floating(self.dtype)):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {scalar_type_name(self.dtype)}"
        )


def unary_inplace(rule, self, params=None):
    """``rule`` written into ``self``, refused first for an integer ``self`` (its result is float)."""
    if not is_inexact(self.dtype):
        inplace_result_check(self, default_dtype.value)
    return apply_inplace(rule, self, (), params or {})


def _function(rule, call):
    if call == "float":

        def op(input):
            return unary_float(rule, input)

    else:

        def op(input):
            return apply(rule, (input,))

    return op


def _inplace(rule, kind):
    if kind == "checked":

        def op_(self):
            return unary_inplace(rule, self)

    else:

        def op_(self):
            return apply_inplace(rule, self, ())

    return op_


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}``, generated from its rule's export declaration (reference.ops.public)."
    return fn


def build(exports, rules=RULES):
    """``(functions, destinations)`` for ``exports`` (``{family: {rule name: Export}}``, the family
    modules' ``EXPORTS``): :data:`FUNCTIONS` and :data:`DESTINATIONS` as :func:`generate` files them.
    A name exported twice to one destination is an error naming it."""
    functions: dict[str, dict] = {}
    destinations: dict[str, dict] = {}
    for family, declared in exports.items():
        home = functions.setdefault(family, {})
        for rule_name, export in declared.items():
            function = _named(_function(rules[rule_name], export.call), rule_name)
            twin = _named(_inplace(rules[export.inplace_rule or rule_name], export.inplace), rule_name + "_")
            for dest, names in export.destinations().items():
                table = destinations.setdefault(dest, {})
                for name in names:
                    if name in table:
                        raise ValueError(
                            f"{dest} name {name!r} is exported twice (again by rule {rule_name!r} of {family!r})"
                        )
                    fn = table[name] = twin if name.endswith("_") else function
                    if dest != "special" or name == rule_name:  # (not torch.special's own spellings: expit)
                        home.setdefault(name, fn)
    return functions, destinations


def generate(exports):
    """Make and file the functions of ``exports`` (:func:`build`). Runs once, when :mod:`reference.ops`
    has loaded the table."""
    if FUNCTIONS:
        raise RuntimeError("reference.ops.public.generate runs once (the table is loaded once)")
    functions, destinations = build(exports)
    FUNCTIONS.update(functions)
    DESTINATIONS.update(destinations)


def family_function(family, name):
    """The generated function ``name`` of ``family`` (what its function module's ``__getattr__`` reads)."""
    try:
        return FUNCTIONS[family][name]
    except KeyError:
        raise AttributeError(name) from None
