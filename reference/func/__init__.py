"""Function transforms, mirroring ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``. See docs/func.md."""

from reference.autograd.forward_ad import MissingRuleError
from reference.func.pytree import TransformError
from reference.func.transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp

__all__ = [
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
