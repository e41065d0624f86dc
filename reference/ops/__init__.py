"""Primitives: the derivative table (:mod:`.derivatives`), array kernels (:mod:`.kernels`) and the
Tensor-level functions (:mod:`.api`) that PyTorch programs call."""

from reference.ops import api, derivatives, kernels, methods
from reference.ops.derivatives import RULES

methods.bind()

__all__ = ["RULES", "api", "derivatives", "kernels"]
