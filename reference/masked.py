"""``reference.masked``: PyTorch's ``torch.masked`` names, filled by the family modules of
:mod:`reference.ops.functions` (their ``NAMESPACES["masked"]``)."""

from reference.ops.functions import export as _export

globals().update(_export().get("masked", {}))
__all__ = sorted(_export().get("masked", {}))
