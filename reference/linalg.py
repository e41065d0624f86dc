"""``reference.linalg``: PyTorch's ``torch.linalg`` names, filled by the family modules of
:mod:`reference.ops.functions` (their ``NAMESPACES["linalg"]``)."""

from reference.ops.functions import export as _export

globals().update(_export().get("linalg", {}))
__all__ = sorted(_export().get("linalg", {}))
