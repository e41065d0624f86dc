"""``reference.utils``: PyTorch's ``torch.utils`` subset (``checkpoint``)."""

from reference.utils import checkpoint  # noqa: F401

__all__ = ["checkpoint"]
