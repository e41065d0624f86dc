"""refgrad's reference: an independent, readable implementation of autodiff semantics.

``import reference as T`` gives a subset of PyTorch's API with PyTorch's names and semantics
(``T.tensor``, ``T.zeros``, ``x.backward()``, ``T.autograd.grad``, ``T.no_grad``,
``T.nn.functional``), so one program text runs on both; see docs/autograd.md.

``reference.conv`` holds array-level convolution (forward, backward and double backward and
the alternative algorithms frameworks dispatch to). ``reference.backend`` picks NumPy or CuPy.
"""

import numpy as _np

from reference import (  # noqa: F401
    autograd,
    backend,
    func,  # noqa: E402, F401  (T.func.vmap, like torch.func.vmap)
    nn,  # noqa: E402, F401
    ops,
    utils,  # noqa: F401  (T.utils.checkpoint)
)
from reference.autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled
from reference.autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from reference.autograd.tensor import (
    Tensor,
    complex64,
    complex128,
    float32,
    float64,
    int32,
    int64,
)
from reference.autograd.tensor import bool_ as bool  # noqa: A001 - PyTorch's name
from reference.autograd.tensor import default_dtype as _default_dtype
from reference.backend import is_floating
from reference.ops.api import (  # noqa: E402
    amax,
    amin,
    arange,
    as_strided,
    as_tensor,
    cat,
    chunk,
    clamp,
    clone,
    diagonal,
    div,
    eq,
    expand,
    eye,
    flatten,
    from_numpy,
    full,
    full_like,
    ge,
    gt,
    le,
    linspace,
    log_softmax,
    logical_and,
    logical_not,
    logical_or,
    lt,
    matmul,
    mean,
    narrow,
    ne,
    neg,
    ones,
    ones_like,
    permute,
    pow,
    reshape,
    select,
    softmax,
    split,
    squeeze,
    stack,
    sum,
    t,
    tensor,
    transpose,
    unbind,
    unsqueeze,
    where,
    zeros,
    zeros_like,
)
from reference.ops.functions import export as _export  # noqa: E402

for _name, _fn in _export().get("reference", {}).items():  # the family modules' functions
    if _name in globals():
        raise ValueError(f"reference.{_name} is defined twice (reference.ops.api and a family module)")
    globals()[_name] = _fn

float = float32  # noqa: A001 - PyTorch's alias
double = float64
cfloat = complex64
cdouble = complex128
long = int64
bool_ = bool


def is_tensor(obj):
    return isinstance(obj, Tensor)


def get_default_dtype():
    return _default_dtype.value


def set_default_dtype(dtype):
    dtype = _np.dtype(dtype)
    if not is_floating(dtype):
        raise TypeError(f"only floating-point types are supported as the default type, got {dtype}")
    _default_dtype.value = dtype


def __getattr__(name):
    if name in ("linalg", "special", "fft", "masked"):  # PyTorch's namespaces, filled by the family modules
        import importlib

        return importlib.import_module(f"reference.{name}")
    if name == "conv":  # reference.conv stays importable as an attribute
        import importlib

        return importlib.import_module("reference.conv")
    raise AttributeError(f"module 'reference' has no attribute {name!r}")


__all__ = [
    "Tensor",
    "autograd",
    "backend",
    "bool",
    "bool_",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "double",
    "enable_grad",
    "float",
    "float32",
    "float64",
    "get_default_dtype",
    "int32",
    "int64",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "is_grad_enabled",
    "is_tensor",
    "long",
    "nn",
    "no_grad",
    "ops",
    "set_default_dtype",
    "set_grad_enabled",
    "utils",
    "amax",
    "amin",
    "arange",
    "as_strided",
    "as_tensor",
    "cat",
    "chunk",
    "clamp",
    "clone",
    "diagonal",
    "div",
    "eq",
    "expand",
    "eye",
    "flatten",
    "from_numpy",
    "full",
    "full_like",
    "ge",
    "gt",
    "le",
    "linspace",
    "log_softmax",
    "logical_and",
    "logical_not",
    "logical_or",
    "lt",
    "matmul",
    "mean",
    "narrow",
    "ne",
    "neg",
    "ones",
    "ones_like",
    "permute",
    "pow",
    "reshape",
    "select",
    "softmax",
    "split",
    "squeeze",
    "stack",
    "sum",
    "t",
    "tensor",
    "transpose",
    "unbind",
    "unsqueeze",
    "where",
    "zeros",
    "zeros_like",
    "linalg",
    "special",
    "fft",
    "masked",
] + sorted(_export().get("reference", {}))
