"""Factories, dtypes and conversions beyond the core constructors of :mod:`reference.ops.api`.

dtypes: ``T.float16``/``T.half``, ``T.bfloat16`` (ml_dtypes' bfloat16: computed and converted,
but not differentiated, see ``Tensor.requires_grad_``), ``T.int8``/``int16``/``int32``/``uint8``
and PyTorch's aliases (``short``, ``int``, ``char``, ``byte``). ``T.device`` and the memory
formats. Type promotion queries: ``result_type``, ``promote_types``, ``can_cast``, ``finfo``,
``iinfo``. Tensor conversions: ``.half()``, ``.bfloat16()``, ``.double()``, ``.float()``,
``.long()``, ``.int()``, ``.short()``, ``.char()``, ``.byte()``, ``.bool()``, ``.type()``,
``.type_as()``, ``.new_tensor``/``new_full``/``new_empty``/``new_zeros``/``new_ones``,
``.cpu()``. ``T.empty`` and ``*.new_empty`` return zeros (uninitialised memory would make runs
differ).
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

from reference.autograd.tensor import (
    CPU,
    bfloat16,
    bool_,
    default_device,
    device,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    is_floating_dtype,
    uint8,
)
from reference.ops import api as A
from reference.scalar_types import scalar_type_name

half = float16
short = int16
int = int32  # noqa: A001 - PyTorch's alias
char = int8
byte = uint8
cfloat = None  # (complex dtypes: another issue)
del cfloat


class memory_format:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

empty = A.empty
empty_like = A.empty_like
logspace = A.logspace

# the dtypes with a legacy tensor type (torch.DoubleTensor, ...), by their PyTorch names
_TORCH_NAMES = {
    dt: scalar_type_name(dt)
    for dt in (float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool_)
}


def _dtype(d):
    return np.dtype(d)


def result_type(tensor, other):
    return A.result_type(tensor, other)


def promote_types(type1, type2):
    return A._promote(_dtype(type1), _dtype(type2))


def can_cast(from_, to):
    """PyTorch's can_cast: no cast to a lower category (float to integer, anything but bool to bool)."""
    return A._category(_dtype(from_)) <= A._category(_dtype(to))


class finfo:
    """torch.finfo: the limits of a floating dtype, as Python floats (bfloat16 through ml_dtypes)."""

    def __init__(self, type=None):
        dt = _dtype(type) if type is not None else A.default_dtype.value
        if not is_floating_dtype(dt):
            raise TypeError(f"torch.finfo() requires a floating point input type. Got {dt}")
        info = ml_dtypes.finfo(dt)
        self.dtype = str(dt)
        self.bits = builtins.int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -builtins.int(info.precision)

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


def iinfo(type):
    dt = _dtype(type)
    if dt.kind not in "iub":
        raise TypeError(f"torch.iinfo() requires an integer input type. Got {dt}")
    return np.iinfo(dt)


def is_floating_point(input):
    return input.is_floating_point()


__all__ = [
    "float16",
    "half",
    "bfloat16",
    "int8",
    "int16",
    "uint8",
    "short",
    "int",
    "char",
    "byte",
    "device",
    "memory_format",
    "contiguous_format",
    "preserve_format",
    "channels_last",
    "channels_last_3d",
    "empty",
    "empty_like",
    "logspace",
    "result_type",
    "promote_types",
    "can_cast",
    "finfo",
    "iinfo",
    "is_floating_point",
    "set_default_device",
    "get_default_device",
]

# ---- Tensor conversions -------------------------------------------------------------------------------


def _converter(dt):
    def convert(self, memory_format=None):
        return A.to(self, dt, memory_format=memory_format)

    return convert


_TYPE_NAMES = {f"torch.{name}Tensor": dt for dt, name in _TORCH_NAMES.items()}


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """``x.type()``: PyTorch's type string; ``x.type(dtype)`` / ``x.type("torch.DoubleTensor")``: a cast."""
    if dtype is None:
        return f"torch.{_TORCH_NAMES[self.dtype]}Tensor"
    if isinstance(dtype, str) and dtype in _TYPE_NAMES:
        dtype = _TYPE_NAMES[dtype]
    return A.to(self, _dtype(dtype))


def type_as(self, other):
    return A.to(self, other.dtype)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return A.tensor(
        data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return A.full(
        size, fill_value, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return A.empty(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    return A.zeros(
        *size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad
    )


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    return A.ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


def cpu(self, memory_format=None):
    """A copy on the CPU (``self`` when it is there): differentiable, as ``x.to("cpu")``."""
    return A.to(self, "cpu")


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy on a CUDA device (CuPy): ``device`` an index, ``"cuda:N"`` or a device; the current
    device (0) by default. Without CuPy and a GPU, the backend's error says why."""
    if device is None:
        device = "cuda"
    elif isinstance(device, builtins.int):
        device = f"cuda:{device}"
    return A.to(self, device)


def set_default_device(device):
    """``torch.set_default_device``: where factories (``T.tensor``, ``T.zeros``, ...) put tensors
    given no ``device=`` (None: the CPU)."""
    default_device.value = CPU if device is None else A.check_device(device)


def get_default_device():
    return default_device.value


METHODS = {
    "half": _converter(float16),
    "bfloat16": _converter(bfloat16),
    "float": _converter(float32),
    "double": _converter(float64),
    "long": _converter(int64),
    "int": _converter(int32),
    "short": _converter(int16),
    "char": _converter(int8),
    "byte": _converter(uint8),
    "bool": _converter(bool_),
    "type": type_,
    "type_as": type_as,
    "new_tensor": new_tensor,
    "new_full": new_full,
    "new_empty": new_empty,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "cpu": cpu,
    "cuda": cuda,
}
