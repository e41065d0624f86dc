"""``reference.fft``: PyTorch's ``torch.fft`` names, filled by the family modules of
:mod:`reference.ops.functions` (their ``NAMESPACES["fft"]``)."""

from reference.ops.functions import export as _export

globals().update(_export().get("fft", {}))
__all__ = sorted(_export().get("fft", {}))
