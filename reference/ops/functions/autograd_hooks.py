"""Tensor methods of the autograd machinery that are not ops (``register_post_accumulate_grad_hook``)."""

from reference.autograd.graph_hooks import register_post_accumulate_grad_hook

__all__: list = []
METHODS = {"register_post_accumulate_grad_hook": register_post_accumulate_grad_hook}
