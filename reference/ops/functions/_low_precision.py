"""PyTorch's rejection of float16 / bfloat16 by its CPU linear algebra (torch 2.13, verified op by op
in tests/autograd/test_torch_linalg_low_precision.py): LAPACK has no half-precision routines, so
either the dispatch of the kernel fails (``NotImplementedError: "lu_cpu" not implemented for
'Half'``) or the op's meta function refuses low precision first (``RuntimeError: linalg.inv: Low
precision dtypes not supported. Got Half``). The reference's kernels would otherwise compute in
float16 (or fail inside NumPy with another error)."""

from __future__ import annotations

from reference.scalar_types import scalar_type_name

_LOW = ("float16", "bfloat16")


class DtypeNotSupported(TypeError):
    """A PyTorch dtype the reference cannot hold. Every reference tensor is an array of its own
    dtype (NumPy's, float16 included; bfloat16 from ml_dtypes), so a dtype with no array type has no
    honest storage: PyTorch's complex32 (ComplexHalf, two float16 halves) is one, NumPy and
    ml_dtypes having no complex32. Holding its values in complex64 would report the wrong dtype
    and round differently (PyTorch rounds both parts to float16), so the reference refuses.
    A TypeError, like the reference's other refusals of a dtype it lacks."""

    def __init__(self, op, dtype, reason):
        self.op, self.dtype, self.reason = op, dtype, reason
        super().__init__(f"{op}: the reference has no {dtype} dtype: {reason}")


COMPLEX32_REASON = (
    "NumPy and ml_dtypes have no complex32 (ComplexHalf) array type, and float16's support "
    "(float16 storage, computed in float32 and rounded once) needs one"
)


def low_name(x):
    """PyTorch's name of ``x``'s dtype when it is float16 / bfloat16, else None."""
    return scalar_type_name(x.dtype) if str(x.dtype) in _LOW else None


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
