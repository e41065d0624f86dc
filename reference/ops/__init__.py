"""Primitives: the derivative table (:mod:`.rules`, one module per op family), array kernels (:mod:`.kernels`) and the
Tensor-level functions (:mod:`.api`) that PyTorch programs call."""

from reference.ops import api, kernels, methods, public, rules
from reference.ops.rules import RULES

public.generate(rules.EXPORTS, rules.MULTI_EXPORTS)  # the public functions the family modules declare
methods.bind()

__all__ = ["RULES", "api", "kernels", "rules"]
