"""The reference ``Tensor``: explicit storage, views that alias it, a shared version counter.

Storage model (PyTorch's): a tensor that is not a view owns a flat, C-contiguous 1-D array, its
*storage*. A view holds the same storage and a geometry (``size``, ``stride`` in elements,
``storage_offset``); its NumPy array is ``as_strided`` over the storage, so writes through any
view are seen by the base and by every other view. The base and all its views share one version
counter (a one-element list) that every in-place write bumps.

A view may carry PyTorch's conjugate or negative bit (``z.conj()``, ``z.conj().imag``): it is a
:class:`LazyTensor`, whose ``_data`` resolves the bit on each read and whose in-place writes store
the inverse into the shared storage (:func:`write_data`); views that change more than the geometry
record the steps that remake them from their base (``ViewMeta.replay``, PyTorch's view_fn).

Autograd state: ``grad_fn``/``_output_nr`` (the node that produced the tensor), ``requires_grad``
(leaves only), ``grad``, and for views the root ``_base`` plus a :class:`ViewMeta` (how the view
was created, and the version at which its ``grad_fn`` was last set: a later in-place write
elsewhere in the storage regenerates it as ``AsStridedBackward0``, as PyTorch does).

Operations live in :mod:`reference.ops.api`; the methods here are thin forwards to them.
"""

from __future__ import annotations

import threading
import weakref

import ml_dtypes
import numpy as np

from reference.autograd.layout import (
    _c_strides,
    _carry_error,
    contiguous_strides,
    is_channels_last,
    result_strides,
    strided_array,
)
from reference.autograd.levels import unbatched_error
from reference.autograd.table import ops
from reference.backend import device_of, is_floating, is_inexact, namespace_for_device, namespace_of

float32 = np.dtype("float32")
float64 = np.dtype("float64")
int64 = np.dtype("int64")
int32 = np.dtype("int32")
int16 = np.dtype("int16")
int8 = np.dtype("int8")
uint8 = np.dtype("uint8")
bool_ = np.dtype("bool")
float16 = np.dtype("float16")
bfloat16 = np.dtype(ml_dtypes.bfloat16)  # NumPy has none: ml_dtypes' (kind "V", so tested by name)
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")


def is_floating_dtype(dt):
    """PyTorch's is_floating_point for a dtype: float16/32/64 and bfloat16."""
    return is_floating(dt)


def is_complex_dtype(dt):
    return dt.kind == "c"


def differentiable_dtype(dt):
    """The dtypes autograd differentiates (PyTorch's isDifferentiableType): floating and complex."""
    return is_inexact(dt)


def default_complex_dtype():
    """PyTorch's default complex dtype follows the default float dtype (float64 -> complex128)."""
    return complex128 if default_dtype.value == float64 else complex64


class device:
    """A torch-like device: ``cpu`` (NumPy arrays), ``cuda[:N]`` (CuPy arrays on GPU N) or the
    test-only ``strict`` device (reference.testing.strict_xp: NumPy behind CuPy's walls, which
    stands in for a GPU in the CPU tests without claiming to be one)."""

    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        if isinstance(type, str) and ":" in type:
            type, idx = type.split(":", 1)
            index = int(idx)
        if type not in ("cpu", "cuda", "strict"):
            raise RuntimeError(
                "Expected one of cpu, cuda, strict device type at start of device string: "
                f"{type}{'' if index is None else f':{index}'}"
            )
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}'{'' if self.index is None else f', index={self.index}'})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")


class DefaultDtype:
    """``T.set_default_dtype``'s dtype, ``default_dtype.value``: what factories and type promotion
    give a Python float (process-wide, as PyTorch's default dtype)."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = float32


class DefaultDevice(threading.local):
    """``T.set_default_device``'s device, ``default_device.value``: where factories put tensors given
    no ``device=`` (thread-local, as PyTorch keeps it in a ``threading.local``)."""

    def __init__(self):
        self.value = CPU


default_dtype = DefaultDtype()
default_device = DefaultDevice()


def device_of_array(a):
    """The :class:`device` an array lives on."""
    kind, index = device_of(a)
    return CPU if kind == "cpu" else device(kind, index)


def namespace_of_device(dev):
    """The array namespace of a :class:`device` (NumPy for the CPU)."""
    return np if dev.type == "cpu" else namespace_for_device(dev.type)


DEFAULT, MULTI_OUTPUT_NODE, NO_GRAD_MODE = "DEFAULT", "MULTI_OUTPUT_NODE", "NO_GRAD_MODE"
IN_CUSTOM_FUNCTION = "IN_CUSTOM_FUNCTION"  # an output view of a custom autograd.Function


class ViewMeta:
    """How a differentiable view was made (PyTorch's CreationMeta) and its grad_fn's version.

    ``replay``: for a view whose chain from its base holds a view that changes more than the
    geometry (``conj``, ``_neg_view``, ``view_as_real``, ``view_as_complex``: PyTorch's
    VIEW_FUNCTIONS_WITH_METADATA_CHANGE), the steps that remake it from the base (PyTorch's
    view_fn): ``(rule, params)`` or ``("as_strided", size, stride, offset)``; None otherwise (the
    view is then remade by its geometry alone)."""

    __slots__ = ("creation_meta", "attr_version", "replay")

    def __init__(self, creation_meta, attr_version, replay=None):
        self.creation_meta = creation_meta
        self.attr_version = attr_version
        self.replay = replay


class RemovableHandle:
    def __init__(self, container, key):
        self._container = container
        self._key = key

    def remove(self):
        self._container[:] = [(k, h) for k, h in self._container if k is not self._key]


class Tensor:
    # Autograd state defaults (class attributes, so creating a tensor sets only what differs).
    _storage = None  # the flat storage array; None for a root until a view needs it
    _offset = 0
    _requires_grad = False
    _grad_fn = None
    _output_nr = 0
    grad = None
    _base = None  # the root tensor, for views
    _view = None  # ViewMeta, for views
    _hooks = None
    _accumulator = None
    _wrapped = False  # a Python number wrapped as a 0-d tensor (type promotion)
    _tangents = None  # forward-mode tangents by level id (reference.autograd.forward_ad)
    _batched = None  # vmap: (physical value, batch dim) by level id (reference.autograd.batching)
    _vmap_copied = False  # vmap: a view whose physical value is a copy (writes through it refused)
    _conj = False  # PyTorch's conjugate bit (is_conj): the values are the conjugates of the storage's
    _neg = False  # PyTorch's negative bit (is_neg): the values are the negatives of the storage's
    _lazy = False  # either bit is set: a LazyTensor (below), whose _data resolves them on each read
    __hash__ = object.__hash__
    __array_priority__ = 1000

    def __init__(self, data, dtype=None, requires_grad=False):
        """``T.Tensor(data)``: like ``torch.Tensor(data)``, the default float dtype unless told otherwise
        (``T.tensor`` infers the dtype from the data instead)."""
        dt = dtype if dtype is not None else default_dtype.value
        if _is_array(data):  # a device array stays on its device
            arr = namespace_of(data).array(data, dtype=dt, copy=True)
        else:
            arr = np.array(data, dtype=dt, copy=True)
        _init_root(self, arr)
        if requires_grad:
            self.requires_grad_()

    # ---- storage and geometry -------------------------------------------------------------
    @property
    def shape(self):
        return self._data.shape

    def size(self, dim=None):
        return self._data.shape if dim is None else self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    @property
    def dtype(self):
        return self._data.dtype

    def stride(self, dim=None):
        if self._data.size == 0:  # NumPy gives an empty array zero strides; PyTorch keeps contiguous ones
            st = contiguous_strides(self._data.shape)
        else:
            st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        return self._offset

    def is_contiguous(self, memory_format=None):
        name = getattr(memory_format, "name", memory_format)
        if name in (None, "contiguous_format", "preserve_format"):
            return bool(self._data.flags.c_contiguous)
        rank = 4 if name == "channels_last" else 5
        return self._data.ndim == rank and is_channels_last(self._data.shape, self.stride())

    def is_floating_point(self):
        return is_floating_dtype(self._data.dtype)

    def is_complex(self):
        return self._data.dtype.kind == "c"

    @property
    def device(self):
        if type(self._data) is np.ndarray:
            return CPU
        return device_of_array(self._data)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    @property
    def _version(self):
        return self._vc[0]

    def _is_view(self):
        return self._base is not None

    def numpy(self, *, force=False):
        if self._batched is not None:
            unbatched_error(self, "numpy()")
        if type(self._data) is not np.ndarray:
            if force:
                return self._data.get()
            raise TypeError(
                f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        if force:
            return self._data
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self._lazy:  # numpy() shares memory, which holds the unresolved values
            bit, fix = ("conjugate", "conj") if self._conj else ("negative", "neg")
            raise RuntimeError(
                f"Can't call numpy() on Tensor that has {bit} bit set. Use tensor.resolve_{fix}().numpy() instead."
            )
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def item(self):
        if self._batched is not None:
            unbatched_error(self, "item()")
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def tolist(self):
        if self._batched is not None:
            unbatched_error(self, "tolist()")
        return self._data.tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __repr__(self):
        extra = ""
        if self.grad_fn is not None:
            extra = f", grad_fn=<{self.grad_fn.name()}>"
        elif self.requires_grad:
            extra = ", requires_grad=True"
        dev = self.device
        if dev is not CPU:  # PyTorch prints the device of a non-CPU tensor: device='cuda:0'
            extra = f", device='{dev}'{extra}"
        host = self._data if dev is CPU else self._data.get()
        return f"tensor({np.array2string(host, separator=', ')}, dtype={self.dtype}{extra})"

    # ---- autograd state -------------------------------------------------------------------
    @property
    def grad_fn(self):
        vm = self._view
        if vm is None:
            return self._grad_fn
        if self._grad_fn is None and not self._base.requires_grad:
            return None
        if vm.attr_version != self._vc[0]:
            # An in-place write elsewhere in the storage: the view's history is regenerated from
            # its base's (an indirect rebase, PyTorch's NOTE [ View + Inplace detection ]). The graph
            # does it (reference.autograd.graph.regenerate_grad_fn): it sits above the Tensor, whose
            # module imports none of the core's upper layers, so it is reached through the table.
            ops.regenerate_grad_fn(self)
        return self._grad_fn

    @property
    def requires_grad(self):
        if self._requires_grad or self._grad_fn is not None:
            return True
        return self._base is not None and self._view is not None and self._base.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a "
                    "computed variable in a subgraph that doesn't require differentiation use "
                    "var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not is_inexact(self._data.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    def retain_grad(self):
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None:  # PyTorch's C++ is_leaf: the stored grad_fn, not a regenerated one
            return
        fn = self.grad_fn
        if fn.retains_grad is None:
            fn.retains_grad = {}
        fn.retains_grad[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self):
        fn = self._grad_fn
        if fn is None or not fn.retains_grad:
            return False
        ref = fn.retains_grad.get(self._output_nr)
        return ref is not None and ref() is self

    def register_hook(self, hook):
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        key = object()
        fn = self.grad_fn
        if fn is None:  # a leaf: its hooks run on the gradient arriving at AccumulateGrad
            if self._hooks is None:
                self._hooks = []
            container = self._hooks
        else:
            if fn.pre_hooks is None:
                fn.pre_hooks = {}
            container = fn.pre_hooks.setdefault(self._output_nr, [])
        container.append((key, hook))
        return RemovableHandle(container, key)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        # (the engine sits above the Tensor: reached through the table, reference.autograd.engine.backward)
        ops.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A tensor sharing storage and version counter, outside the graph (not a view)."""
        out = _alias(self)
        return out

    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        out = _alias(self)
        out._vc = [0]  # changes through .data are not tracked by autograd
        return out

    def _copy(self):
        """A detached copy with its own storage (for AccumulateGrad)."""
        return _make(self._data.copy())

    def _accumulate_inplace(self, other):
        self._data += other._data.astype(self._data.dtype, copy=False)
        self._vc[0] += 1


def _infer_dtype(data):
    if isinstance(data, Tensor):
        return data.dtype
    arr = data if _is_array(data) else np.asarray(data)
    if is_floating(arr.dtype):
        return default_dtype.value if not _is_array(data) else arr.dtype
    if arr.dtype.kind in "iu":
        return int64 if not _is_array(data) else arr.dtype
    if arr.dtype.kind == "b":
        return bool_
    if arr.dtype.kind == "c":  # Python complex numbers: the default complex dtype, as in PyTorch
        return default_complex_dtype() if not _is_array(data) else arr.dtype
    raise TypeError(f"data of dtype {arr.dtype} is not supported by reference tensors")


def _is_array(data):
    """An array of any namespace (NumPy, CuPy, strict), not a Python number or a NumPy scalar."""
    if isinstance(data, np.ndarray):
        return True
    mod = type(data).__module__
    return mod == "reference.testing.strict_xp" or mod.split(".")[0] == "cupy"


def _init_root(t, arr):
    flags = arr.flags
    writeable = getattr(flags, "writeable", True)  # (CuPy's flags have no writeable: always writeable)
    if not flags.c_contiguous or not writeable:
        xp = namespace_of(arr)
        copy = xp.ascontiguousarray(arr).copy() if not writeable else xp.ascontiguousarray(arr)
        _carry_error(arr, copy)  # (an error tracker finds bounds by memory: the copy keeps arr's)
        arr = copy
    t._data = arr
    t._vc = [0]


def storage_of(t):
    """The flat storage array ``t`` lives in (a root's is its own data, flattened without copying)."""
    if t._storage is None:
        t._storage = t._data.reshape(-1)
    return t._storage


def _make(arr):
    """A new root tensor owning ``arr`` (made contiguous); no autograd state."""
    t = Tensor.__new__(Tensor)
    if type(arr) is np.ndarray:
        flags = arr.flags
        if flags.c_contiguous and flags.writeable:  # a fresh kernel result: _init_root inlined
            t._data = arr
            t._vc = [0]
            return t
    elif not _is_array(arr):
        arr = np.asarray(arr)
    flags = arr.flags
    if flags.c_contiguous and getattr(flags, "writeable", True):  # (CuPy's flags have no writeable)
        t._data = arr
        t._vc = [0]
    else:
        _init_root(t, arr)
    return t


def zeros_tensor(shape, dtype, like=None):
    """Zeros of ``shape``/``dtype`` on the device of the tensor ``like`` (the CPU without one)."""
    xp = np if like is None else namespace_of(like._data)
    return _make(xp.zeros(shape, dtype=dtype))


def strided_result(arr, strides):
    """A new root tensor holding ``arr`` with ``strides`` (None: row-major)."""
    if strides is None or arr.size == 0:
        return _make(arr)
    if not hasattr(arr, "shape"):  # a Python or NumPy scalar
        arr = np.asarray(arr)
    if tuple(strides) == contiguous_strides(arr.shape):  # (NumPy may give a size-1 dim another stride)
        if arr.strides == _c_strides(arr):
            return _make(arr)
        out = arr.copy(order="C")
        _carry_error(arr, out)
        return _make(out)
    t = Tensor.__new__(Tensor)
    t._data, t._storage = strided_array(arr, strides)
    t._vc = [0]
    return t


def result_tensor(layout, inputs, arr):
    """The result tensor of an op of ``layout`` on ``inputs``, holding the values ``arr``, with the
    strides PyTorch gives it (:mod:`reference.autograd.layout`)."""
    if not hasattr(arr, "shape"):  # a Python or NumPy scalar from a kernel
        arr = np.asarray(arr)
    return strided_result(arr, result_strides(layout, inputs, arr.shape))


def _alias(t):
    """Same storage, same version counter, no autograd history (``detach``)."""
    if t._lazy:  # detach() / .data of a conjugate (negative) view keep its bits, as in PyTorch
        out = LazyTensor.__new__(LazyTensor)
        out._raw, out._conj, out._neg = t._raw, t._conj, t._neg
    else:
        out = Tensor.__new__(Tensor)
        out._data = t._data
    out._storage = storage_of(t)
    out._offset = t._offset
    out._vc = t._vc
    if t._batched is not None:  # under vmap: the same batched value, each level's physical detached too
        out._batched = {level: (value.detach(), bdim) for level, (value, bdim) in t._batched.items()}
    return out


def make_view(src, size, stride, offset, creation_meta, dtype=None, conj=False, neg=False):
    """A view of ``src``'s storage with the given geometry; its ``_base`` is the root tensor.
    ``dtype``: the view reads the storage's bytes as another dtype (``view_as_real``: a complex
    storage as its float pairs; geometry in elements of ``dtype``). ``conj`` / ``neg``: the view
    flips the conjugate / negative bit (``conj()``, ``_neg_view``); every view keeps its source's."""
    storage = storage_of(src)
    if dtype is not None and dtype != storage.dtype:
        if src._conj:
            raise RuntimeError(
                "torch.Tensor.view is not supported for conjugate view tensors when converting to a different dtype."
            )
        storage = storage.view(dtype)
    item = storage.itemsize
    xp = namespace_of(storage)
    if any(n == 0 for n in size):
        arr = xp.zeros(size, dtype=storage.dtype)
    else:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if (
            offset < 0
            or last >= storage.size
            or min(((n - 1) * s for n, s in zip(size, stride)), default=0) < 0
        ):
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset} are out "
                f"of bounds for storage of size {storage.size}"
            )
        if xp is np and storage.flags.c_contiguous:
            # the array over the storage's buffer directly: what as_strided makes, without its
            # Python-level wrapper (about 4 us against 0.4 us: a view's cost is mostly this call)
            arr = np.ndarray(
                tuple(size), storage.dtype, storage, offset * item, tuple(s * item for s in stride)
            )
        else:
            arr = xp.lib.stride_tricks.as_strided(
                storage[offset:], shape=tuple(size), strides=tuple(s * item for s in stride)
            )
    conj, neg = src._conj ^ conj, src._neg ^ neg
    if conj or neg:
        out = LazyTensor.__new__(LazyTensor)
        out._raw, out._conj, out._neg = arr, conj, neg
    else:
        out = Tensor.__new__(Tensor)
        out._data = arr
    out._storage = storage
    out._offset = offset
    out._vc = src._vc
    out._base = src._base if src._base is not None else src
    if src._view is not None and creation_meta == DEFAULT:
        creation_meta = src._view.creation_meta
    out._view = ViewMeta(creation_meta, src._vc[0])
    return out


class LazyTensor(Tensor):
    """A view with PyTorch's conjugate and/or negative bit set (``z.conj()``, ``z.conj().imag``).

    ``_raw`` is the strided array over the shared storage, as any view's ``_data`` is; ``_data``,
    the values every kernel and method reads, resolves the bits on each read: the storage's
    elements under the view, conjugated and/or negated, in a new read-only array with the view's
    own strides (so result layouts, expanded and overlapping geometries are kept). An in-place
    write stores the inverse transform through :func:`write_data` (the same transform: both are
    involutions). Nothing is cached, so a write to the storage through any alias is seen by the
    next read. Only these views pay for the bits; any other tensor keeps a plain ``_data``.
    """

    _lazy = True

    @property
    def _data(self):
        out = resolve_bits(self._raw, self._conj, self._neg)
        # under an error tracker (which finds a bound by memory address), the resolved copy keeps the
        # storage's bound: conjugation and negation do not change the modulus of an error
        _carry_error(self._raw, out)
        return out

    @_data.setter
    def _data(self, arr):
        self._raw = arr

    @property
    def shape(self):
        return self._raw.shape

    @property
    def dtype(self):
        return self._raw.dtype

    @property
    def ndim(self):
        return self._raw.ndim

    def dim(self):
        return self._raw.ndim

    def numel(self):
        return self._raw.size

    def size(self, dim=None):
        return self._raw.shape if dim is None else self._raw.shape[_wrap_dim(dim, self._raw.ndim)]

    def _accumulate_inplace(self, other):
        write_data(self, self._data + other._data.astype(self.dtype, copy=False))
        self._vc[0] += 1

    def __deepcopy__(self, memo):
        """PyTorch's Tensor.__deepcopy__ of a conjugate / negative view: a new tensor with the values
        resolved (its storage copied, then conj_physical / neg: the view's strides when dense)."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at "
                "the moment.  If you were attempting to deepcopy a module, this may be because of a "
                "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
            )
        out = ops.clone(self.detach())
        memo[id(self)] = out
        return out

    def _copy(self):
        """A copy with its own storage that keeps the bits and the strides (a gradient that
        AccumulateGrad steals: PyTorch's detach() of a conjugate view keeps the bit)."""
        out = LazyTensor.__new__(LazyTensor)
        out._raw, out._storage = strided_array(self._raw.copy(), self.stride())
        out._conj, out._neg, out._vc = self._conj, self._neg, [0]
        return out


def resolve_bits(raw, conj, neg):
    """The values of the strided array ``raw`` conjugated (``conj``) and/or negated (``neg``), in
    a new array with ``raw``'s strides: the storage span ``raw`` covers is transformed, then
    viewed with ``raw``'s geometry (strides are never negative in the reference)."""
    xp = namespace_of(raw)
    if raw.size == 0:
        return xp.zeros(raw.shape, dtype=raw.dtype)
    item = raw.itemsize
    span = 1 + sum((n - 1) * s for n, s in zip(raw.shape, raw.strides)) // item
    flat = xp.lib.stride_tricks.as_strided(raw, shape=(span,), strides=(item,))
    if conj:
        flat = xp.conj(flat)  # (a new array)
    if neg:
        flat = xp.negative(flat)
    out = xp.lib.stride_tricks.as_strided(flat, shape=raw.shape, strides=raw.strides)
    if type(out) is np.ndarray:
        out.flags.writeable = False  # a write must go to the storage (write_data), not to this copy
    return out


def write_data(t, values):
    """Store ``values`` as ``t``'s values: into its storage, through its conjugate / negative bits."""
    if not t._lazy:
        t._data[...] = values
        return
    xp = namespace_of(t._raw)
    if t._conj:
        values = xp.conj(values)
    if t._neg:
        values = xp.negative(values)
    t._raw[...] = values


def storage_like(shape, stride, offset, storage_size, values):
    """``values`` in a new tensor with the geometry ``shape``/``stride``/``offset`` over a new
    storage of ``storage_size`` elements, so that replay steps, which name storage positions, pick
    the same elements of it as of the tensor that had that geometry."""
    if offset == 0 and tuple(stride) == contiguous_strides(shape) and storage_size == values.numel():
        return ops.clone(values, memory_format="contiguous_format")
    root = _make(namespace_of(values._data).zeros(storage_size, dtype=values.dtype))
    out = make_view(root, shape, stride, offset, DEFAULT)
    ops.copy_(out, values)
    return out


def _geometry(t):
    """``t``'s geometry in its storage: what :func:`storage_like` reproduces."""
    return t.shape, t.stride(), t._offset, storage_of(t).size


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n
