"""Kept for imports written before the table was split by family: the table is
:mod:`reference.ops.rules` (one registry, one module per op family)."""

from reference.ops.rules import RULES, rule  # noqa: F401
from reference.ops.rules.nn import batch_norm_backward_formulas  # noqa: F401
