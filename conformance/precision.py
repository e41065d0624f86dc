"""The arithmetic a framework computes a case in (its dtype, accumulator, TF32, flush-to-zero), from
the settings its worker reports: what the derived error bound of an op record or a program is for.
A leaf module: the record judge (conformance.ops.judge) and program cases (conformance.programs)
both read it."""

from __future__ import annotations

from conformance.case import PART_DTYPE
from reference.errors import Precision

#: The accumulation contract: the accumulator each framework promises for float16/bfloat16 sums.
ACCUMULATION = {
    "torch": (
        "float32",
        "PyTorch CPU kernels accumulate float16/bfloat16 in float32 (at::opmath_type / acc_type); "
        "the reduced-precision reductions of the docs' 'Numerical accuracy' notes "
        "(allow_fp16_reduced_precision_reduction) are CUDA GEMM flags",
    ),
    "jax": (
        None,
        "jax.numpy's sum/mean upcast float16/bfloat16 for the computation (jax._src.numpy.reductions: "
        "upcast_f16_for_computation=True), but lax.reduce_window (pooling) and the other ops state "
        "nothing: the contract is per op, and until records carry it the bound uses the dtype's u",
    ),
    "tensorflow": (None, "no documented accumulator for float16/bfloat16 sums: the bound uses the dtype's u"),
}


def precision_for(case, settings: dict, framework: str) -> Precision:
    """The arithmetic a framework's result is judged for: the case's dtype (a complex one's parts),
    the promised accumulator of half types, TF32, flush-to-zero, from the worker's settings."""
    acc = settings.get("accumulation")
    if acc is None:
        acc = ACCUMULATION.get(framework, (None, ""))[0]
    half = case.dtype in ("float16", "bfloat16")
    return Precision(
        # a complex dtype computes in its parts' dtype (the tracker sees the complex arrays and applies
        # the complex bounds of reference.errors.complex)
        dtype=PART_DTYPE.get(case.dtype, case.dtype),
        accumulate=acc if half and acc else None,
        tf32=bool(settings.get("tf32")) and case.dtype == "float32",
        # FTZ/DAZ are float32/float64 hardware modes: float16 is computed in float32, where its
        # subnormals are normal numbers; bfloat16's subnormals are float32's (flushed)
        flush=bool(settings.get("flush_denormal", False)) and case.dtype != "float16",
    )
