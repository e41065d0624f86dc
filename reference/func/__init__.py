"""Function transforms, mirroring ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap``. See docs/func.md."""

from reference.autograd.batching import BatchRuleError, VmapError, fallback_counts, reset_fallback_counts
from reference.autograd.forward_ad import MissingRuleError
from reference.func.pytree import TransformError
from reference.func.transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from reference.func.vmap import vmap

__all__ = [
    "BatchRuleError",
    "VmapError",
    "fallback_counts",
    "reset_fallback_counts",
    "vmap",
    "MissingRuleError",
    "TransformError",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "vjp",
]
