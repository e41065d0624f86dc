"""PyTorch's rejection of float16 / bfloat16 by its CPU linear algebra (torch 2.13, verified op by op
in tests/autograd/test_torch_linalg_low_precision.py): LAPACK has no half-precision routines, so
either the dispatch of the kernel fails (``NotImplementedError: "lu_cpu" not implemented for
'Half'``) or the op's meta function refuses low precision first (``RuntimeError: linalg.inv: Low
precision dtypes not supported. Got Half``). The reference's kernels would otherwise compute in
float16 (or fail inside NumPy with another error)."""

from __future__ import annotations

_LOW = {"float16": "Half", "bfloat16": "BFloat16"}


def low_name(x):
    """PyTorch's name of ``x``'s dtype when it is float16 / bfloat16, else None."""
    return _LOW.get(str(x.dtype))


def no_kernel(x, kernel):
    """The dispatch error of a CPU kernel with no half-precision instance."""
    name = low_name(x)
    if name is not None:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{name}'")


def no_low_precision(x, fname):
    """checkFloatingOrComplex(..., allow_low_precision_dtypes=false)."""
    name = low_name(x)
    if name is not None:
        raise RuntimeError(f"{fname}: Low precision dtypes not supported. Got {name}")
