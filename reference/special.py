"""``reference.special``: PyTorch's ``torch.special`` names, filled by the family modules of
:mod:`reference.ops.functions` (their ``NAMESPACES["special"]``)."""

from reference.ops.functions import export as _export

globals().update(_export().get("special", {}))
__all__ = sorted(_export().get("special", {}))
