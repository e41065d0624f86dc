"""``reference.nn``: only ``functional`` (no modules), as the subset of ``torch.nn`` the programs use."""

from reference.nn import functional

__all__ = ["functional"]
