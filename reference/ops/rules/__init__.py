"""THE derivative table: every primitive of the reference, declared once, one module per op family.

Read an entry as a line of PyTorch's ``derivatives.yaml``: the op, its ``grad_fn`` name, the
forward kernel, one VJP formula per input (``c`` is the node's context: saved tensors by name,
the op's parameters, input ``shapes``/``dtypes``; ``g`` is the incoming gradient), and which
tensors the formulas read. Formulas use differentiable Tensor ops from :mod:`reference.ops.api`
(imported as ``A``), so the backward of a backward is recorded like any other computation and
higher-order gradients need no extra rules. Broadcasting is undone by the engine, which sums a
gradient down to its input's shape (as PyTorch's ``validate_outputs`` does).

``jvp`` is the forward-mode rule (read by :mod:`reference.autograd.forward_ad`): one linear
formula per input ``formula(c, t)`` (``t``: that input's tangent; ``c``: primal inputs by name,
``result``, parameters), or a function of all tangents for variadic and multi-output ops, or one
of derivatives.yaml's shorthands: ``AUTO_ELEMENT_WISE`` (the Jacobian is diagonal, so the VJP
formula applied to the tangent is the JVP), ``AUTO_LINEAR`` (the op is linear: the op itself on
the tangents), ``BILINEAR`` (``f(t_a, b) + f(a, t_b)``), ``SAME_VIEW`` (the same view of the
tangent). No JVP is derived from VJPs, so forward mode checks the reverse mode.

``batch`` is the vmap rule (read by :mod:`reference.autograd.batching`): ``batch(b, params)``
computes the op on the physical values ``b`` holds (batch dims, batch size) and returns
``(value, batch_dim)``; or a shorthand (``BATCH_ELEMENTWISE``, ``BATCH_REDUCE``, ``BATCH_DIM``,
``BATCH_MATMUL``), or ``view_rule(shift)`` for a view op (how its parameters shift). An entry
without one runs vmap's slice-loop-stack fallback (counted; an error with allow_fallback=False).

The table is one registry (:data:`RULES`, filled by :func:`rule`) split by family, each module
readable on its own like HIPS/autograd's ``numpy_vjps.py``: :mod:`.elementwise`,
:mod:`.reductions`, :mod:`.matmul`, :mod:`.shape` (views and joining), :mod:`.indexing`,
:mod:`.nn`, :mod:`.conv`, and every other module of this package (each one family). Importing
this package loads them all: a new family is a new module here, nothing else to edit. Shared
helpers live in modules whose names start with ``_``.

A family module may declare which of its primitives are public functions and under which names:
``EXPORTS = {rule name: Export(...)}`` (:class:`reference.ops.rule.Export`) for single-input ones,
``MULTI_EXPORTS = {rule name: MultiExport(...)}`` for binary and ternary ones; :data:`EXPORTS` and
:data:`MULTI_EXPORTS` gather them by family and :mod:`reference.ops.public` generates the functions, in-place twins, Tensor
methods and namespace names from them. Which primitives accept complex tensors is the rule's
``complex_inputs`` field, declared inline or by the family module's ``COMPLEX_INPUTS`` (``True``: all
of the family's; or their names), which this package applies when it loads the family.
"""

import importlib
import pkgutil

from reference.ops.rules.registry import RULES, family_of, rule

#: The family modules, in load order (alphabetical; a module that reads another's rules at
#: import time imports that module itself).
FAMILIES = tuple(
    sorted(
        m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_") and m.name != "registry"
    )
)

#: family -> {rule name: Export}: the family modules' ``EXPORTS`` (single-input ops)
EXPORTS: dict = {}
#: family -> {rule name: MultiExport}: the family modules' ``MULTI_EXPORTS`` (binary and ternary ops)
MULTI_EXPORTS: dict = {}


def _declared(family, module, attr):
    """The primitives a family module's ``attr`` (``EXPORTS``, ``MULTI_EXPORTS``, ``COMPLEX_INPUTS``) names: each must
    be a primitive of that family. ``COMPLEX_INPUTS = True``: all of them."""
    names = getattr(module, attr, "")
    if names is True:
        return [n for n in RULES if family_of(n) == family]
    names = list(names) if isinstance(names, dict) else names.split()
    for name in names:
        if name not in RULES or family_of(name) != family:
            raise ValueError(f"rules.{family}.{attr} names {name!r}, which is not a primitive of that family")
    return names


for _family in FAMILIES:
    _module = importlib.import_module(f"{__name__}.{_family}")
    _declared(_family, _module, "EXPORTS")
    EXPORTS[_family] = dict(getattr(_module, "EXPORTS", {}))
    _declared(_family, _module, "MULTI_EXPORTS")
    if hasattr(_module, "MULTI_EXPORTS"):
        MULTI_EXPORTS[_family] = dict(_module.MULTI_EXPORTS)
    for _name in _declared(_family, _module, "COMPLEX_INPUTS"):  # (Rule.complex_inputs)
        RULES[_name].complex_inputs = True

__all__ = ["EXPORTS", "FAMILIES", "MULTI_EXPORTS", "RULES", "family_of", "rule"]
