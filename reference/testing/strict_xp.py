"""A strict array namespace: NumPy arithmetic behind CuPy's walls, for CPU tests of device code.

A :class:`StrictArray` wraps a NumPy array and computes with NumPy (so its results are NumPy's,
bit for bit), but refuses everything a CuPy array refuses, and a little more:

* implicit conversion to NumPy: ``np.asarray(a)``, ``np.array(a)``, ``a.__array__()`` raise
  ``TypeError`` with CuPy's message ("Implicit conversion to a NumPy array is not allowed");
  the explicit transfers are CuPy's ``a.get()`` and ``asnumpy(a)``;
* mixing with a raw NumPy array (of any rank) in an operator or in a namespace function raises
  ``TypeError`` (CuPy's "Unsupported type <class 'numpy.ndarray'>"); Python numbers and NumPy
  scalars (``np.float64(2)``) mix freely, as in CuPy. The exceptions are CuPy's own: the creation
  functions ``asarray``/``array`` (the explicit host-to-device copy) and NumPy index arrays in
  ``a[idx]`` / ``a[idx] = v`` (CuPy converts those, see ``_prepare_slice_list``);
* NumPy functions on it: ``np.exp(a)``, ``np.concatenate([a, b])``, ``np.add.at(a, ...)``,
  ``np.lib.stride_tricks.as_strided(a, ...)``, and SciPy (``scipy.special.erf(a)``,
  ``scipy.linalg.solve(a, b)``) raise ``TypeError``. This is *stricter* than CuPy, whose
  ``__array_ufunc__``/``__array_function__`` forward some NumPy calls (``np.exp``) to CuPy but
  not others (``np.lib.stride_tricks``, ``np.add.at``, everything SciPy): which calls happen to
  be forwarded is not a contract the reference should lean on, so here none is. Code must ask
  :func:`reference.backend.namespace_of` for the namespace of its data and call that.

It also lacks what CuPy 14 lacks (the failures of the first GPU run, issue 35): no ``errstate``/
``seterr`` (CuPy signals no floating-point errors) nor the other NumPy names of ``_NOT_IN_CUPY``;
ufuncs take only ``out``/``dtype``/``casting`` and array or scalar operands, and ``reduce``,
``accumulate``, ``reduceat``, ``at`` only where CuPy has them (``_UFUNC_METHODS``); ``where``
refuses a Python bool as its condition; ``special`` offers only cupyx.scipy.special's names.

The namespace (this module) is what ``namespace_of`` returns for strict arrays: NumPy's API
(creation, math, ``linalg``, ``fft``, ``lib.stride_tricks.as_strided``, ufunc methods such as
``add.at``), each function taking and returning strict arrays; ``special`` is its stand-in for
``cupyx.scipy.special`` (see :func:`reference.backend.special_of`). Reductions return 0-d
arrays, not NumPy scalars, as CuPy's do.

Device: strict arrays live on a test-only device ``strict`` (``reference.device('strict')``,
printed ``device='strict'``). They stand in for GPU arrays in the CPU tests but never claim to be
on CUDA: a tensor on it is neither ``is_cuda`` nor ``is_cpu``, ``.cuda()`` does not produce it,
and mixing it with CPU tensors fails exactly as CUDA with CPU does in PyTorch.

It lives in ``reference/`` (not ``tests/``) because the device registry of
:mod:`reference.backend` maps the ``strict`` device to it, and the reference must not import the
test tree; it is also usable on its own to check any kernel for namespace discipline.
"""

from __future__ import annotations

import types

import numpy as _np

_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct a NumPy "
    "array explicitly."
)
_TRANSFER_OK = frozenset({"asarray", "array"})  # CuPy's explicit host-to-device copies


def _unsupported(obj):
    return TypeError(f"Unsupported type {type(obj)}")


class _Flags:
    """CuPy's flags: contiguity and ownership, no ``writeable`` (CuPy arrays are always writeable)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, f):
        self.c_contiguous, self.f_contiguous, self.owndata = f.c_contiguous, f.f_contiguous, f.owndata

    def __getitem__(self, name):
        return {
            "C_CONTIGUOUS": self.c_contiguous,
            "F_CONTIGUOUS": self.f_contiguous,
            "OWNDATA": self.owndata,
        }[name]


class _MemoryPointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


def _unwrap(x, allow_numpy=False):
    """Strict arrays to NumPy, recursively through lists/tuples/dicts; raw NumPy arrays refused."""
    t = type(x)
    if t is StrictArray:
        return x._a
    if t is _np.ndarray:
        if allow_numpy:
            return x
        raise _unsupported(x)
    if t is tuple or t is list:
        return t(_unwrap(v, allow_numpy) for v in x)
    if t is slice:
        return slice(_unwrap(x.start), _unwrap(x.stop), _unwrap(x.step))
    return x


def _wrap(r):
    """NumPy results back to strict arrays (NumPy scalars from reductions become 0-d arrays)."""
    t = type(r)
    if t is _np.ndarray:
        return StrictArray(r)
    if isinstance(r, _np.generic):
        return StrictArray(_np.asarray(r))
    if t is tuple or t is list:
        return t(_wrap(v) for v in r)
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # NumPy's result namedtuples (eigh, svd, ...)
        return tuple(_wrap(v) for v in r)
    return r


def _call(fn, name, args, kwargs):
    allow = name in _TRANSFER_OK
    return _wrap(fn(*_unwrap(args, allow), **{k: _unwrap(v, allow) for k, v in kwargs.items()}))


class StrictArray:
    """A NumPy array that behaves toward NumPy like a CuPy array (see the module docstring)."""

    __slots__ = ("_a",)
    __array_ufunc__ = None  # np.exp(a), np.add(a, b): TypeError; NumPy's binary operators defer to ours

    def __init__(self, a):
        if type(a) is not _np.ndarray:
            raise TypeError(f"StrictArray wraps a numpy.ndarray, not {type(a).__name__}")
        self._a = a

    # ---- the walls ------------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__qualname__", getattr(func, "__name__", repr(func)))
        raise TypeError(
            f"numpy.{name} was called on a strict (device) array; use the array's namespace "
            "(reference.backend.namespace_of) instead of NumPy"
        )

    def __array_namespace__(self, api_version=None):
        import reference.testing.strict_xp as xp

        return xp

    # ---- explicit transfer ----------------------------------------------------------------------
    def get(self, stream=None, order="C", out=None):
        """The data as a NumPy array (a copy, as CuPy's device-to-host transfer is)."""
        return _np.array(self._a, copy=True)

    # ---- attributes -----------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    strides = property(lambda self: self._a.strides)
    flags = property(lambda self: _Flags(self._a.flags))
    T = property(lambda self: StrictArray(self._a.T))
    mT = property(lambda self: StrictArray(_np.swapaxes(self._a, -1, -2)))

    @property
    def real(self):
        return StrictArray(_np.asarray(self._a.real))

    @real.setter
    def real(self, value):
        self._a.real = _unwrap(value)

    @property
    def imag(self):
        return StrictArray(_np.asarray(self._a.imag))

    @imag.setter
    def imag(self, value):
        self._a.imag = _unwrap(value)

    @property
    def base(self):
        b = self._a.base
        return None if b is None else StrictArray(b) if type(b) is _np.ndarray else None

    @property
    def device(self):
        return "strict"

    @property
    def data(self):
        """CuPy's memory pointer (``a.data.ptr``: the address of the first element)."""
        return _MemoryPointer(self._a.__array_interface__["data"][0])

    def __getattr__(self, name):
        # The ndarray methods (astype, reshape, sum, copy, view, transpose, conj, ...) through the walls.
        if name.startswith("__") or name in ("ctypes", "tobytes", "tofile", "dump", "dumps"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return _wrap(attr)
        return lambda *args, **kwargs: _call(attr, name, args, kwargs)

    # ---- Python protocols -----------------------------------------------------------------------
    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __index__(self):
        if self._a.ndim != 0 or self._a.dtype.kind not in "iu":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._a)

    def __repr__(self):
        return "strict_" + repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec) if self._a.ndim == 0 else str(self._a)

    def __copy__(self):
        return StrictArray(self._a.copy())

    def __deepcopy__(self, memo):
        return StrictArray(self._a.copy())

    def __reduce__(self):
        return (StrictArray, (self._a,))

    __hash__ = None

    # ---- indexing -------------------------------------------------------------------------------
    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, allow_numpy=True)])

    def __setitem__(self, key, value):
        self._a[_unwrap(key, allow_numpy=True)] = _unwrap(value, allow_numpy=True)


def _operand(x):
    t = type(x)
    if t is StrictArray:
        return x._a
    if t is _np.ndarray:
        raise _unsupported(x)
    if isinstance(x, (int, float, complex, bool, _np.generic)):
        return x
    return NotImplemented


def _binop(op, reflected=False):
    def method(self, other):
        o = _operand(other)
        if o is NotImplemented:
            return NotImplemented
        return _wrap(op(o, self._a) if reflected else op(self._a, o))

    return method


def _inplace(op):
    def method(self, other):
        o = _operand(other)
        if o is NotImplemented:
            return NotImplemented
        op(self._a, o)
        return self

    return method


import operator as _op  # noqa: E402

for _name, _fn in {
    "add": _op.add,
    "sub": _op.sub,
    "mul": _op.mul,
    "truediv": _op.truediv,
    "floordiv": _op.floordiv,
    "mod": _op.mod,
    "pow": _op.pow,
    "matmul": _op.matmul,
    "and": _op.and_,
    "or": _op.or_,
    "xor": _op.xor,
    "lshift": _op.lshift,
    "rshift": _op.rshift,
}.items():
    setattr(StrictArray, f"__{_name}__", _binop(_fn))
    setattr(StrictArray, f"__r{_name}__", _binop(_fn, reflected=True))
    setattr(StrictArray, f"__i{_name}__", _inplace(getattr(_op, f"i{_name}")))
for _name, _fn in {
    "lt": _op.lt,
    "le": _op.le,
    "gt": _op.gt,
    "ge": _op.ge,
    "eq": _op.eq,
    "ne": _op.ne,
}.items():
    setattr(StrictArray, f"__{_name}__", _binop(_fn))
StrictArray.__neg__ = lambda self: StrictArray(_np.asarray(-self._a))
StrictArray.__pos__ = lambda self: StrictArray(_np.asarray(+self._a))
StrictArray.__abs__ = lambda self: StrictArray(_np.asarray(abs(self._a)))
StrictArray.__invert__ = lambda self: StrictArray(_np.asarray(~self._a))
StrictArray.__divmod__ = lambda self, other: _wrap(divmod(self._a, _unwrap(other)))


# ---- the namespace ----------------------------------------------------------------------------------


# What CuPy's ufuncs accept (cupy/_core/_kernel.pyx, class ufunc, CuPy 14): ``__call__`` takes
# only ``out``, ``dtype`` and ``casting`` ("Wrong arguments" for ``where=``, ``order=``, ...);
# ``reduce`` and ``accumulate`` exist for add and multiply only (they are ``sum``/``cumsum``,
# ``prod``/``cumprod``), ``reduceat`` for add only, ``at`` for the ufuncs with a scatter kernel;
# the others raise NotImplementedError ("`cupy_maximum.accumulate` is not supported yet").
_UFUNC_KWARGS = frozenset({"out", "dtype", "casting"})
_UFUNC_METHODS = {
    "reduce": frozenset({"add", "multiply"}),
    "accumulate": frozenset({"add", "multiply"}),
    "reduceat": frozenset({"add"}),
    "at": frozenset({"add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"}),
}


class _Ufunc:
    """A ufunc of the strict namespace: ``__call__`` and the methods (``at``, ``reduce``, ``outer``,
    ``accumulate``, ``reduceat``) over strict arrays, with CuPy's limits (``_UFUNC_KWARGS``,
    ``_UFUNC_METHODS``): operands are arrays or scalars, never lists ("Universal Functions only
    work with CuPy array or scalar", CuPy's differences from NumPy)."""

    __slots__ = ("_u", "__name__")

    def __init__(self, u):
        self._u = u
        self.__name__ = u.__name__

    def __call__(self, *args, **kwargs):
        wrong = set(kwargs) - _UFUNC_KWARGS
        if wrong:
            raise TypeError(f"Wrong arguments {dict((k, kwargs[k]) for k in sorted(wrong))} (CuPy's ufuncs)")
        for arg in args:
            if isinstance(arg, (list, tuple)):
                raise _unsupported(arg)
        return _call(self._u, self.__name__, args, kwargs)

    def _method(self, name):
        if self.__name__ not in _UFUNC_METHODS[name]:
            raise NotImplementedError(f"`cupy_{self.__name__}.{name}` is not supported yet (CuPy)")
        return getattr(self._u, name)

    def at(self, a, indices, b=None):
        at = self._method("at")
        if type(a) is not StrictArray:
            raise _unsupported(a)
        # indices may be NumPy arrays (CuPy's scatter converts them, as indexing does); values may not
        idx = _unwrap(indices, allow_numpy=True)
        at(a._a, idx, *(() if b is None else (_unwrap(b),)))

    def __getattr__(self, name):
        attr = self._method(name) if name in _UFUNC_METHODS else getattr(self._u, name)
        if callable(attr):
            return lambda *args, **kwargs: _call(attr, name, args, kwargs)
        return attr

    def __repr__(self):
        return f"<strict ufunc {self.__name__!r}>"


def _function(fn, name):
    def call(*args, **kwargs):
        return _call(fn, name, args, kwargs)

    call.__name__ = call.__qualname__ = name
    return call


class _Submodule(types.ModuleType):
    """``linalg``, ``fft``, ``special``, ``lib.stride_tricks``: a NumPy/SciPy module behind the walls."""

    def __init__(self, name, source):
        super().__init__(f"{__name__}.{name}")
        self._source = source

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _lookup(self._source, name)


def _lookup(source, name):
    obj = getattr(source, name)
    if isinstance(obj, _np.ufunc):
        return _Ufunc(obj)
    if isinstance(obj, type) or isinstance(obj, types.ModuleType) or not callable(obj):
        return obj  # dtypes, scalar types, constants (pi, inf, newaxis), finfo/iinfo
    return _function(obj, name)


linalg = _Submodule("linalg", _np.linalg)
fft = _Submodule("fft", _np.fft)
lib = types.SimpleNamespace(stride_tricks=_Submodule("lib.stride_tricks", _np.lib.stride_tricks))


# cupyx.scipy.special's functions (its __init__.py, CuPy 14): the stand-in offers no others.
_CUPYX_SPECIAL = frozenset(
    "bdtr bdtrc bdtri beta betainc betaincinv betaln binom boxcox boxcox1p btdtr btdtri cbrt chdtr "
    "chdtrc chdtri cosdg cosm1 cotdg digamma ellipeinc ellipj ellipk ellipkinc ellipkm1 entr erf erfc "
    "erfcinv erfcx erfinv exp1 exp10 exp2 expi expit expm1 expn exprel fdtr fdtrc fdtri gamma gammainc "
    "gammaincc gammainccinv gammaincinv gammaln gammasgn gdtr gdtrc huber i0 i0e i1 i1e inv_boxcox "
    "inv_boxcox1p j0 j1 k0 k0e k1 k1e kl_div lambertw log1p log_expit log_ndtr log_softmax loggamma "
    "logit logsumexp lpmv multigammaln nbdtr nbdtrc nbdtri ndtr ndtri pdtr pdtrc pdtri poch polygamma "
    "pseudo_huber psi radian rel_entr rgamma round shichi sici sinc sindg softmax sph_harm_y "
    "spherical_yn tandg wright_bessel xlog1py xlogy y0 y1 yn zeta zetac".split()
)


class _Special(_Submodule):
    """``cupyx.scipy.special``'s functions on SciPy's arithmetic."""

    def __getattr__(self, name):
        if not name.startswith("__") and name not in _CUPYX_SPECIAL:
            raise AttributeError(f"module 'cupyx.scipy.special' has no attribute {name!r}")
        return super().__getattr__(name)

    @staticmethod
    def polygamma(n, x):
        """cupyx's polygamma ends in ``cupy.where(n == 0, ...)``: a Python int ``n`` makes that
        condition a Python bool, which cupy.where refuses (see :func:`where`)."""
        import scipy.special

        where(n == 0, x, x)  # the condition CuPy's polygamma builds, refused as CuPy refuses it
        return _call(scipy.special.polygamma, "polygamma", (n, x), {})


def _special():
    import scipy.special

    return _Special("special", scipy.special)


# NumPy names CuPy lacks (NumPy 2's public functions absent from cupy/__init__.py, CuPy 14): CuPy
# signals no floating-point errors, so it has no errstate/seterr; the rest are not implemented.
_NOT_IN_CUPY = frozenset(
    "errstate seterr geterr seterrcall geterrcall getbufsize setbufsize spacing geomspace insert "
    "nditer nested_iters ndenumerate frompyfunc einsum_path nanquantile nanpercentile "
    "histogram_bin_edges isnat polyder polydiv polyint unstack vecdot matvec vecmat block bmat "
    "asmatrix matrix memmap busday_count busday_offset is_busday datetime_as_string".split()
)


def where(condition, x=None, y=None):
    """CuPy's ``where``: ``condition.astype('?')`` first (cupy/_sorting/search.py), so a Python
    bool or number as the condition raises AttributeError there; NumPy's takes it."""
    if x is not None and y is not None and not hasattr(condition, "astype"):
        raise AttributeError(f"{type(condition).__name__!r} object has no attribute 'astype' (cupy.where)")
    return _call(_np.where, "where", tuple(a for a in (condition, x, y) if a is not None), {})


# Names whose NumPy versions are not array functions, kept as NumPy's (dtype machinery).
ndarray = StrictArray


def asnumpy(a, stream=None, order="C", out=None):
    """CuPy's explicit device-to-host copy; NumPy arrays and scalars pass through."""
    if type(a) is StrictArray:
        return a.get()
    return _np.asarray(a)


def isscalar(x):
    return _np.isscalar(x)


def __getattr__(name):
    if name == "special":
        mod = _special()
        globals()["special"] = mod
        return mod
    if name == "scipy_linalg":  # the stand-in for cupyx.scipy.linalg
        import scipy.linalg

        mod = _Submodule("scipy_linalg", scipy.linalg)
        globals()["scipy_linalg"] = mod
        return mod
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _NOT_IN_CUPY:
        raise AttributeError(f"module 'cupy' has no attribute {name!r} (the strict namespace models CuPy)")
    return _lookup(_np, name)
