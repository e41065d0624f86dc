"""``reference.autograd``: the Tensor, the graph, the engine and grad modes (PyTorch's semantics).

``grad`` and ``backward`` are PyTorch's ``torch.autograd.grad``/``torch.autograd.backward``;
``gradcheck``/``gradgradcheck`` compare against central finite differences in float64.
"""

from reference.autograd import (
    batching,  # noqa: F401  (forward mode and batching register their steps with the dispatcher:
    forward_ad,  # noqa: F401  reference.autograd.table; T.autograd.forward_ad)
    function,
    graph,  # noqa: F401  (T.autograd.graph)
)
from reference.autograd.anomaly import detect_anomaly, set_detect_anomaly
from reference.autograd.checks import GradcheckError, gradcheck, gradgradcheck
from reference.autograd.engine import backward, grad
from reference.autograd.function import Function, FunctionCtx
from reference.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from reference.autograd.graph import AutogradError
from reference.autograd.tensor import Tensor

__all__ = [
    "AutogradError",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Tensor",
    "backward",
    "detect_anomaly",
    "forward_ad",
    "function",
    "graph",
    "set_detect_anomaly",
    "enable_grad",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "is_grad_enabled",
    "no_grad",
    "set_grad_enabled",
]
