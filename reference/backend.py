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

from reference.testing import strict_xp  # the test-only device's namespace (a leaf: NumPy only)

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
    """The namespace of the given arrays (``None`` entries, Python numbers and NumPy scalars,
    which every namespace accepts, are ignored).

    All arrays must live in one namespace; mixing NumPy and CuPy (or strict) arrays is an error
    rather than an implicit device transfer.
    """
    found = None
    for a in arrays:
        if a is None or isinstance(a, (int, float, complex, np.generic)):
            continue
        xp = np if type(a) is np.ndarray else _module_of(a)
        if found is None:
            found = xp
        elif xp is not found:
            raise BackendError(
                f"arrays from different backends were mixed ({found.__name__} and {xp.__name__}); "
                "move them to one device first"
            )
    return found if found is not None else np


def _module_of(a) -> ModuleType:
    if isinstance(a, np.ndarray):
        return np
    mod = type(a).__module__
    if mod == _STRICT:
        return strict_xp
    if mod.split(".")[0] == "cupy":
        import cupy

        return cupy
    if isinstance(a, (list, tuple)):
        return np
    raise BackendError(f"expected a NumPy or CuPy array, got {type(a).__name__}")


# ---- devices ------------------------------------------------------------------------------------------
# A device is (type, index) as PyTorch names it: ("cpu", None) for NumPy, ("cuda", N) for CuPy on GPU N,
# and ("strict", None) for the test-only strict namespace (reference.testing.strict_xp), which stands
# in for a GPU array in the CPU tests without claiming to be one.

_STRICT = strict_xp.__name__
DEVICE_TYPES = ("cpu", "cuda", "strict")


def namespace_for_device(type: str) -> ModuleType:
    """The array namespace that holds data on a device of ``type``."""
    if type == "cpu":
        return np
    if type == "cuda":
        return _import_cupy()
    if type == "strict":
        return strict_xp
    raise BackendError(f"device type {type!r} is not one of {DEVICE_TYPES}")


def device_of(a) -> tuple:
    """``(type, index)`` of the device an array lives on (NumPy: ``("cpu", None)``)."""
    if type(a) is np.ndarray or isinstance(a, np.generic):
        return ("cpu", None)
    mod = type(a).__module__
    if mod == _STRICT:
        return ("strict", None)
    if mod.split(".")[0] == "cupy":
        return ("cuda", int(a.device.id))
    raise BackendError(f"expected a NumPy or CuPy array, got {type(a).__name__}")


def to_device(a, type: str, index=None):
    """``a`` copied to the device ``(type, index)`` (``a`` itself when it is there already).

    Transfers are explicit: device to host with ``.get()`` (CuPy's and the strict namespace's),
    host to device with the target namespace's ``asarray``."""
    src = device_of(a)
    if src[0] == type and (type != "cuda" or index is None or src[1] == index):
        return a
    host = a if src[0] == "cpu" else a.get()
    if type == "cpu":
        return host
    xp = namespace_for_device(type)
    if type == "cuda":
        with xp.cuda.Device(0 if index is None else index):
            return xp.asarray(host)
    return xp.asarray(host)


def xp_fn(name: str):
    """The function ``name`` of the namespace of its array arguments (``xp_fn("multiply")`` for
    a rule's ``forward=np.multiply``): NumPy's for NumPy arrays, CuPy's for CuPy arrays."""

    numpy_fn = getattr(np, name)

    def call(*args, **kwargs):
        # NumPy operands (the common case, tested inline: this runs on every op) skip the search
        for a in args:
            if type(a) is not np.ndarray:
                return getattr(namespace_of(*args), name)(*args, **kwargs)
        return numpy_fn(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.numpy_function = numpy_fn  # for a caller that already knows its operands are NumPy's
    return call


def data_ptr(a) -> int:
    """The address of an array's first element (NumPy's ``__array_interface__``, CuPy's
    ``a.data.ptr``, which the strict namespace also gives)."""
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0]
    return a.data.ptr


def special_of(xp) -> ModuleType:
    """The special-function module for namespace ``xp``: ``scipy.special`` for NumPy,
    ``cupyx.scipy.special`` for CuPy, the strict namespace's own ``special`` for strict arrays."""
    if xp is np:
        import scipy.special

        return scipy.special
    if xp.__name__ == "cupy":
        import cupyx.scipy.special

        return cupyx.scipy.special
    return xp.special


def scipy_linalg_of(xp) -> ModuleType:
    """``scipy.linalg`` for NumPy, ``cupyx.scipy.linalg`` for CuPy, the strict namespace's own
    ``scipy_linalg`` for strict arrays (solve_triangular, expm, lu_factor: what NumPy lacks)."""
    if xp is np:
        import scipy.linalg

        return scipy.linalg
    if xp.__name__ == "cupy":
        import cupyx.scipy.linalg

        return cupyx.scipy.linalg
    return xp.scipy_linalg


def add_at(a, index, values) -> None:
    """Unbuffered ``a[index] += values`` (repeated indices accumulate), in ``a``'s namespace:
    ``np.add.at``, CuPy's ``cupyx.scatter_add``, the strict namespace's ``add.at``."""
    ufunc_at("add", a, index, values)


#: the scatters CuPy's own kernel does: only the sum. A maximum or minimum is scattered in rounds
#: (exact selections, NumPy's semantics): on the first GPU runs scatter_reduce(amax) on CuPy 14.2
#: through cupyx.scatter_max was 1.32e-08 off NumPy's np.maximum.at on float64 data (a selection,
#: bound 0; tests/autograd/test_gpu_tensor.py), where the rounds agree bit for bit on the strict device
_CUPYX_SCATTER = {"add": "scatter_add"}


def ufunc_at(name, a, index, values) -> None:
    """Unbuffered ``ufunc.at`` (``name``: add, maximum, minimum, multiply) in ``a``'s namespace;
    on CuPy ``cupyx.scatter_add`` for a sum. CuPy has no ``multiply.at`` (its ufuncs scatter only
    add, subtract, maximum, minimum and the bitwise ops): off NumPy a product, a maximum and a
    minimum are scattered by :func:`_at_in_rounds`."""
    xp = namespace_of(a)
    if xp.__name__ == "cupy" and name in _CUPYX_SCATTER:
        import cupyx

        getattr(cupyx, _CUPYX_SCATTER[name])(a, index, values)
    elif xp is np or name in _CUPYX_SCATTER:
        getattr(xp, name).at(a, index, values)
    else:
        _at_in_rounds(getattr(xp, name), a, index, values)


def _at_in_rounds(op, a, index, values) -> None:
    """``op.at(a, index, values)`` for a tuple of integer index arrays: round ``r`` applies the
    ``r``-th update of every element at once (``a[i] = op(a[i], v)``; no element twice in a
    round), so each element sees its updates in NumPy's order, and the result is NumPy's bit for
    bit although the op (a product) rounds."""
    xp = namespace_of(a)
    coords = xp.broadcast_arrays(*index)
    if not coords or coords[0].size == 0:
        return
    values = xp.broadcast_to(values, coords[0].shape).reshape(-1)
    coords = [c.reshape(-1) for c in coords]
    key = xp.ravel_multi_index(tuple(coords), a.shape)
    order = xp.argsort(key, kind="stable")
    ranked = key[order]
    pos = xp.arange(ranked.size)
    first = xp.ones(ranked.shape, dtype=bool)
    first[1:] = ranked[1:] != ranked[:-1]
    rank = xp.empty_like(pos)
    rank[order] = pos - running_extreme(xp.where(first, pos, 0), 0, largest=True)  # (the rank in its group)
    for r in range(int(rank.max()) + 1):
        now = rank == r
        at = tuple(c[now] for c in coords)
        a[at] = op(a[at], values[now])


def running_extreme(x, axis: int, largest: bool):
    """``maximum.accumulate`` (``largest``) or ``minimum.accumulate`` of ``x`` along ``axis``, in
    ``x``'s namespace: CuPy's ufuncs accumulate only add and multiply. A log-step (Hillis-Steele)
    scan: after the step of shift ``k`` each element holds the extreme of the ``2k`` elements ending
    at it. Exact and equal to NumPy's, bit for bit: max and min round nothing, and each step takes
    ``op(earlier, later)`` as the accumulation does, so ties (+-0) and NaN resolve the same way."""
    xp = namespace_of(x)
    op = xp.maximum if largest else xp.minimum
    out = xp.moveaxis(x, axis, 0).copy()
    k = 1
    while k < out.shape[0]:
        out[k:] = op(out[:-k], out[k:])  # (the right side is a new array: no overlap in the write)
        k *= 2
    return xp.ascontiguousarray(xp.moveaxis(out, 0, axis))


def asarray(data, dtype=None, device: str | None = None):
    """``data`` as an array on ``device`` (``None``/``"cpu"``: NumPy; ``"cuda"``: CuPy)."""
    if device in (None, "cpu"):
        xp = default_namespace() if device is None else np
    elif device == "cuda" or (isinstance(device, str) and device.startswith("cuda:")):
        xp = _import_cupy()
    elif device == "strict":
        xp = strict_xp
    else:
        raise BackendError(f"device={device!r} is not 'cpu', 'cuda' or 'strict'")
    return xp.asarray(data, dtype=dtype)


def to_numpy(a):
    """A NumPy copy (or view) of ``a``, from any backend."""
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
