"""The array namespace the reference computes with: NumPy by default, CuPy on a GPU.

Kernels never write ``np.`` for math that CuPy must also run: they ask :func:`namespace_of`
for the namespace of their inputs and use that. Only host-side bookkeeping (shapes, index
tables built once) uses NumPy directly.

Selecting CuPy:

* ``REFGRAD_BACKEND=cupy`` in the environment makes :func:`default_namespace` CuPy;
* ``asarray(data, device="cuda")`` puts one array on the GPU.

Either raises :class:`BackendError` with the reason when CuPy cannot be imported or no CUDA
device is visible; it never silently falls back to NumPy.
"""

from __future__ import annotations

import os
from types import ModuleType

import numpy as np

_BACKENDS = ("numpy", "cupy")


class BackendError(RuntimeError):
    """The requested array backend is unknown or cannot run on this machine."""


def _import_cupy() -> ModuleType:
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise BackendError(
            "backend 'cupy' was requested but CuPy is not importable "
            f"({exc}); install refgrad[cupy] on a machine with CUDA"
        ) from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # pragma: no cover - depends on the machine
        raise BackendError(f"backend 'cupy' was requested but CUDA is unusable: {exc}") from exc
    if count < 1:  # pragma: no cover - depends on the machine
        raise BackendError("backend 'cupy' was requested but no CUDA device is visible")
    return cupy


def cupy_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        _import_cupy()
    except BackendError:
        return False
    return True


def get_namespace(name: str) -> ModuleType:
    """The array module called ``name`` (``"numpy"`` or ``"cupy"``)."""
    if name == "numpy":
        return np
    if name == "cupy":
        return _import_cupy()
    raise BackendError(f"backend={name!r} is not one of {_BACKENDS}")


def default_namespace() -> ModuleType:
    """The namespace named by ``REFGRAD_BACKEND`` (default ``numpy``)."""
    return get_namespace(os.environ.get("REFGRAD_BACKEND", "numpy").strip().lower() or "numpy")


def namespace_of(*arrays) -> ModuleType:
    """The namespace of the given arrays (``None`` entries are ignored).

    All arrays must live in one namespace; mixing NumPy and CuPy arrays is an error rather
    than an implicit device transfer.
    """
    found = None
    for a in arrays:
        if a is None:
            continue
        xp = np if isinstance(a, (np.ndarray, np.generic)) else _module_of(a)
        if found is None:
            found = xp
        elif xp is not found:
            raise BackendError(
                f"arrays from different backends were mixed ({found.__name__} and {xp.__name__}); "
                "move them to one device first"
            )
    return found if found is not None else np


def _module_of(a) -> ModuleType:
    mod = type(a).__module__.split(".")[0]
    if mod == "cupy":
        import cupy

        return cupy
    if hasattr(a, "__array__") or isinstance(a, (int, float, complex, list, tuple)):
        return np
    raise BackendError(f"expected a NumPy or CuPy array, got {type(a).__name__}")


def asarray(data, dtype=None, device: str | None = None):
    """``data`` as an array on ``device`` (``None``/``"cpu"``: NumPy; ``"cuda"``: CuPy)."""
    if device in (None, "cpu"):
        xp = default_namespace() if device is None else np
    elif device == "cuda" or (isinstance(device, str) and device.startswith("cuda:")):
        xp = _import_cupy()
    else:
        raise BackendError(f"device={device!r} is not 'cpu' or 'cuda'")
    return xp.asarray(data, dtype=dtype)


def to_numpy(a):
    """A NumPy copy (or view) of ``a``, from either backend."""
    if isinstance(a, np.ndarray):
        return a
    get = getattr(a, "get", None)
    return get() if callable(get) else np.asarray(a)


# ---- dtype categories -----------------------------------------------------------------------------
# NumPy has no bfloat16: ml_dtypes' is a structured-kind dtype (``kind == "V"``), so ``kind == "f"``
# misses it. Every test for "floating" / "differentiable" goes through these two.

try:
    import ml_dtypes as _ml_dtypes

    _BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _BFLOAT16 = None


def is_floating(dtype) -> bool:
    """PyTorch's is_floating_point for a NumPy dtype: float16, bfloat16, float32, float64."""
    kind = dtype.kind
    return kind == "f" or (kind == "V" and dtype == _BFLOAT16)


def is_inexact(dtype) -> bool:
    """Floating or complex: the dtypes autograd differentiates (PyTorch's isDifferentiableType)."""
    kind = dtype.kind
    return kind == "f" or kind == "c" or (kind == "V" and dtype == _BFLOAT16)
