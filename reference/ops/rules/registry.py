"""The one registry of the derivative table: :data:`RULES`, filled by :func:`rule` from the family
modules of :mod:`reference.ops.rules`."""

from __future__ import annotations

import sys

from reference.autograd.dispatch import apply
from reference.autograd.table import RULES  # the core owns the table; the family modules fill it
from reference.ops.rule import Rule

_FAMILY: dict[str, str] = {}


def rule(name, node, inputs, **fields):
    """Declare primitive ``name`` (its ``grad_fn`` name ``node``, its tensor ``inputs``) once."""
    if name in RULES:
        raise ValueError(
            f"primitive {name!r} is declared twice in the derivative table "
            f"(first in {_FAMILY[name]!r}, again in {_caller_family()!r})"
        )
    RULES[name] = Rule(name, node, tuple(inputs), **fields)
    _FAMILY[name] = _caller_family()


def from_rule(name, *inputs, **params):
    """Apply rule ``name`` (Tensor inputs, keyword params), as the Tensor-level functions do: the
    way a rule's derivative formulas call other primitives of the table."""
    return apply(RULES[name], inputs, params)


def family_of(name):
    """The family module that declares primitive ``name`` (e.g. ``"elementwise"``)."""
    return _FAMILY[name]


def _caller_family():
    """The module calling :func:`rule` (one frame lookup: ``inspect.stack()`` reads every frame's
    source and made importing the table take seconds)."""
    return sys._getframe(2).f_globals.get("__name__", "?").rsplit(".", 1)[-1]
