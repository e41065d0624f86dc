"""Mixed precision as users run it (issue #33): program cases under a cast policy.

A program case with ``"amp": "mixed_bfloat16"`` or ``"mixed_float16"`` (``--dtypes`` selects such
cases) has float32 inputs (the variables: parameters and data) and runs its forward — every step up
to and including ``loss = ...`` — under each framework's mixed-precision recipe with the policy's
compute dtype (:data:`LOW_DTYPE`: bfloat16 or float16); the ending (the backward calls) runs outside
it, as users write a training step:

* PyTorch: ``with torch.autocast("cpu", dtype=torch.bfloat16 | torch.float16):`` around the forward;
  in ``torch:compile`` / ``torch:aot_eager`` the same ``with`` *inside* each compiled function (as
  users write a compiled mixed-precision step; Dynamo traces it). Autocast casts per op, by its
  documented CPU lists (:data:`LOWER`, :data:`FLOAT32`, :data:`PROMOTE` below);
* JAX: the casts a JAX user writes by hand (a jmp-style policy: parameters float32, compute in the
  low dtype): ``jnp.matmul`` / ``lax.conv_general_dilated`` of operands cast to it with
  ``preferred_element_type=jnp.float32`` (float32 accumulation), the result cast back to it; the
  losses of :data:`FLOAT32` on float32 inputs; everything else in the dtypes of its inputs (``jnp``
  promotion: bfloat16 with float32 is float32); the same text under ``jax.jit`` and op by op;
* TensorFlow: the semantics of the ``tf.keras.mixed_precision`` policies ``"mixed_bfloat16"`` /
  ``"mixed_float16"`` (variables float32, compute in the low dtype). The programs are raw TensorFlow,
  not Keras layers, so the functional namespace applies the casts explicitly: the compute dtype for
  the layers' products (matmul, conv), float32 for the losses (Keras computes losses in float32:
  ``keras.losses.Loss`` casts ``y_pred`` to float32 when the policy is mixed), normalisations in
  float32 returned in their input's dtype (Keras 3's ``ops.layer_normalization`` "computes in at least
  float32 precision" and ``LayerNormalization`` casts the output to the compute dtype), and
  TensorFlow, which does not promote, is given PyTorch's promotion explicitly (a cast of the narrower
  operand) in every binary op. Keras's loss scaling (``LossScaleOptimizer``) is an optimizer's and
  is not applied: gradients are compared unscaled.

So one cast table, PyTorch's documented CPU autocast policy, describes what each framework's program
runs in; JAX's and TensorFlow's programs apply it by hand as their docs tell users to (their policies
name a compute dtype, not per-op lists). The reference's values stay the exact mathematics of the
program (float64 from the float32 inputs); the casts are roundings in the bound: the error tracker
runs the program under a :class:`CastPolicy`, which gives every kernel the precision the policy
says it runs in and adds the rounding of each cast of an input to a narrower dtype
(``u_low·|x|``). The reference runs the forward with the casts made explicit
(:func:`reference_autocast`: an operand of a low-precision op is a copy of it marked in the low dtype,
so the backward kernels of that op, which see the copies, run in it too, as PyTorch's do).
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np

import reference
from conformance.case import AMP_POLICIES
from conformance.case import AMP_VARIABLES as VARIABLES
from reference.backend import data_ptr
from reference.errors import REFERENCE_U, UNIT_ROUNDOFF, Precision, _is_float, _spec

#: Each policy's compute dtype (the variables are float32, :data:`VARIABLES`). ``mixed_float16``:
#: PyTorch's CPU autocast takes float16 as well as bfloat16 (torch 2.13, ``torch/amp/autocast_mode.py``:
#: ``device_supported_dtypes = [torch.bfloat16, torch.float16]`` for ``"cpu"``) and applies the same
#: CPU op lists to either (``aten/src/ATen/autocast_mode.cpp``: the ``AutocastCPU`` kernels are
#: registered for ``lower_precision_fp``, the dtype autocast was entered with; the docs' heading names
#: bfloat16, "CPU Ops that can autocast to bfloat16"; ``test_program_amp.py`` checks float16); JAX's jmp-style
#: policies and TensorFlow's ``mixed_float16`` Keras policy name float16 as the compute dtype.
LOW_DTYPE = {"mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}
assert set(LOW_DTYPE) == set(AMP_POLICIES)

AUTOCAST_DOCS = "https://pytorch.org/docs/stable/amp.html#cpu-op-specific-behavior (PyTorch 2.x, CPU)"


def low_dtype(policy: str) -> str:
    """The compute dtype of a mixed-precision policy (:data:`LOW_DTYPE`)."""
    return LOW_DTYPE[policy]


#: "CPU Ops that can autocast to bfloat16" (AUTOCAST_DOCS): they run in bfloat16 (their float32
#: operands cast down) with float32 accumulation (at::opmath_type; oneDNN's bf16 GEMM/convolution).
LOWER = (
    "conv1d", "conv2d", "conv3d", "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm",
    "linear", "_convolution", "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention",
    "_native_multi_head_attention",
)  # fmt: skip
#: "CPU Ops that can autocast to float32" (AUTOCAST_DOCS), those the reference has: run in float32
#: (a bfloat16 operand cast up, exactly).
FLOAT32 = (
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "prod", "cdist", "mse_loss",
    "cosine_embedding_loss", "nll_loss", "hinge_embedding_loss", "poisson_nll_loss",
    "smooth_l1_loss", "cross_entropy", "l1_loss", "huber_loss", "margin_ranking_loss",
    "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "kl_div",
    "multilabel_margin_loss",
)  # fmt: skip
#: "CPU Ops that promote to the widest input type" (AUTOCAST_DOCS).
PROMOTE = ("cat", "stack", "index_copy")
#: Not in the lists: "run in the type they would run in without autocast" (the docs); for these
#: mixed-dtype normalisations (a bfloat16 input, float32 weight and bias) what PyTorch 2.13 did is
#: recorded (``tests/conformance/test_program_amp.py`` checks it): the output has the *input's* dtype,
#: not the promoted one (the CPU kernels take mixed dtypes and compute in float32 inside).
INPUT_DTYPE = ("layer_norm", "batch_norm", "group_norm")

#: The ``reference`` entry points :func:`reference_autocast` casts for (the program vocabulary's):
#: Tensor methods and functions of ``reference`` / ``reference.nn.functional``.
_LOWER_METHODS = ("__matmul__", "matmul", "mm", "bmm")
_LOWER_FUNCTIONS = ("matmul", "mm", "bmm")
_LOWER_NN = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)
_FLOAT32_NN = tuple(n for n in FLOAT32 if n not in ("prod", "cdist"))

_RANK = {"bfloat16": 0, "float16": 0, "float32": 1, "float64": 2}


def amp_accumulator(framework: str) -> str | None:
    """The accumulator of the policy's low-precision kernels (bfloat16 or float16): float32 for PyTorch
    (opmath, as for bfloat16 and float16 cases) and for JAX (the program asks for it:
    ``preferred_element_type=jnp.float32`` in dot and conv; ``jnp.sum`` upcasts half types for the
    computation); TensorFlow documents none (the compute dtype)."""
    return None if framework.split(":")[0] == "tensorflow" else "float32"


class CastPolicy:
    """The tracker's side of a cast policy (:attr:`reference.errors.Tracker.policy`): the dtype each
    array is in (by memory, as errors are: a view's is its base's; an array never seen is a variable,
    :data:`VARIABLES`), and for each kernel the precision it runs in:

    * inside an entry point of the policy's lists (:func:`reference_autocast` pushes its dtype), that
      dtype — every kernel of a decomposition included;
    * elsewhere in the forward (the autocast region), the widest dtype of its floating inputs
      (type promotion);
    * outside it (the ending: every backward kernel), the *narrowest*: PyTorch's engine casts a
      gradient to the dtype of the tensor it is for, and a bfloat16 op's backward formula computes
      in bfloat16 from its saved bfloat16 operands; taking the narrowest dtype of a kernel's inputs
      (a float32 input cast down, with its rounding) covers both, and bounds a promoting kernel
      (bfloat16 with float32, computed in float32) the more loosely, never less.

    An input in a wider dtype than the kernel's is cast down: its error grows by the rounding,
    ``u·|x|`` (the cast of an exact value rounds too: the reference does not round it)."""

    def __init__(self, base, low: str = "bfloat16"):
        self.base = base  # reference.errors.Precision of the variables (float32, the accumulation contract)
        self.low = low  # the policy's compute dtype (LOW_DTYPE): what LOWER ops run in
        self.autocast = False  # inside the program's forward
        self.forced = []  # dtypes pushed by reference_autocast's entry points (innermost last)
        self._roots = []  # (start, end, array kept alive, dtype)
        self._composites = []  # per kernel being bounded: whether it pushed a dtype (a composite)
        self._marks = []  # per kernel being bounded: the dtype its outputs are in when not its precision's
        self.casting = None  # the dtype of the cast whose copy is the next kernel (_cast)

    def dtype_of(self, arr, default=None) -> str:
        """The dtype ``arr`` is in (``default``, else the variables', where it was never seen)."""
        if isinstance(arr, np.ndarray) and arr.size:
            ptr = data_ptr(arr)
            for start, end, _, dtype in reversed(self._roots):
                if start <= ptr < end:
                    return dtype
        return default or self.base.dtype

    def mark(self, arr, dtype: str) -> None:
        if isinstance(arr, np.ndarray) and arr.size:
            start = data_ptr(arr)
            self._roots.append((start, start + arr.nbytes, arr, dtype))

    def precision(self, dtype: str):
        half = dtype in ("bfloat16", "float16")
        return Precision(
            # (FTZ is a float32 mode: bfloat16's subnormals are float32's; float16 is computed in float32)
            dtype=dtype,
            accumulate=self.base.accumulate if half else None,
            flush=self.base.flush and dtype != "float16",
        )

    def kernel(self, tracker, rule, arrays, outs, errs):
        """(the kernel's Precision, its inputs' errors with the casts' roundings)."""
        floats = [i for i, a in enumerate(arrays) if _is_float(a) and a.dtype.kind == "f"]
        # an untracked 0-d operand is a wrapped Python number: computed with, never cast (it is
        # "float64" here: it decides no dtype and rounds nowhere, PyTorch's opmath keeps it exact)
        dtypes = {i: self.dtype_of(arrays[i], "float64" if np.ndim(arrays[i]) == 0 else None) for i in floats}
        numbers = {i for i, d in dtypes.items() if d == "float64"}
        dtypes = {i: d for i, d in dtypes.items() if i not in numbers}
        if self.casting is not None:  # the copy that is a cast (_cast): exact but for the cast's rounding
            dtype, self.casting = self.casting, None
            errs = list(errs)
            if _RANK[dtypes.get(0, dtype)] > _RANK[dtype]:
                cast = (UNIT_ROUNDOFF[dtype] + REFERENCE_U) * np.abs(np.asarray(arrays[0], dtype=np.float64))
                errs[0] = cast if errs[0] is None else errs[0] + cast
            self._composites.append(False)
            self._marks.append(dtype)
            return self.precision("float64"), errs  # (the copy's own rounding: the reference's only)
        self._marks.append(None)
        if self.forced:
            dtype = self.forced[-1]
        elif not dtypes:
            dtype = self.base.dtype
        elif self.autocast:  # type promotion: a 0-d operand (a wrapped Python number) does not
            # promote a dimensioned one (PyTorch's rule: dimensioned tensors, then 0-d ones, then numbers)
            ranked = [d for i, d in dtypes.items() if np.ndim(arrays[i])] or list(dtypes.values())
            dtype = max(ranked, key=_RANK.get)
        else:
            dtype = min(dtypes.values(), key=_RANK.get)
        errs = list(errs)
        u = UNIT_ROUNDOFF[dtype] + REFERENCE_U
        for i, d in dtypes.items():
            if _RANK[d] > _RANK[dtype]:  # cast down: rounded to the kernel's dtype
                cast = u * np.abs(np.asarray(arrays[i], dtype=np.float64))
                errs[i] = cast if errs[i] is None else errs[i] + cast
        composite = _spec(rule).kind == "composite"
        if composite:  # its decomposition's kernels run in its dtype (popped by produced)
            self.forced.append(dtype)
        self._composites.append(composite)
        return self.precision(dtype), errs

    def carry(self, src, dst, err, write):
        """The bound of ``dst`` holding ``src``'s values: a move keeps ``src``'s dtype; an in-place
        op's result written into a narrower storage is rounded to it (PyTorch writes ``self``'s dtype)."""
        have, into = self.dtype_of(src), self.dtype_of(dst)
        if not write:
            self.mark(dst, have)
        elif _RANK[have] > _RANK[into]:
            err = err + (UNIT_ROUNDOFF[into] + REFERENCE_U) * np.abs(np.asarray(src, dtype=np.float64))
        return err

    def produced(self, tracker, outs, precision) -> None:
        """After the kernel's bound: its outputs are in its dtype."""
        if self._composites and self._composites.pop():
            self.forced.pop()
        dtype = (self._marks.pop() if self._marks else None) or precision.dtype
        for o in outs:
            if _is_float(o):
                self.mark(o, dtype)


@contextlib.contextmanager
def policy_region(policy: CastPolicy, dtype: str | None):
    """Every kernel inside runs in ``dtype`` (None: the policy's own choice)."""
    if dtype is None:
        yield
        return
    policy.forced.append(dtype)
    try:
        yield
    finally:
        policy.forced.pop()


def _cast(policy, x, dtype):
    """Autocast's cast of an operand: a float tensor in another dtype becomes a copy marked ``dtype``
    (a clone: exact in the reference; the tracker adds the cast's rounding when ``dtype`` is narrower)."""
    if not isinstance(x, reference.Tensor) or x.dtype.kind != "f":
        return x
    if policy.dtype_of(x._data) == dtype:
        return x
    policy.casting = dtype
    try:
        return x.clone()
    finally:
        policy.casting = None


def _entry(policy, fn, kind):
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if not policy.autocast:
            return fn(*args, **kwargs)
        if kind == "input":  # the output in the input's dtype (INPUT_DTYPE: what PyTorch 2.13 did)
            dtype = policy.dtype_of(args[0]._data) if isinstance(args[0], reference.Tensor) else None
            with policy_region(policy, dtype):
                return fn(*args, **kwargs)
        dtype = policy.low if kind == "lower" else VARIABLES
        args = [_cast(policy, a, dtype) for a in args]
        kwargs = {k: _cast(policy, v, dtype) for k, v in kwargs.items()}
        with policy_region(policy, dtype):
            return fn(*args, **kwargs)

    return wrapped


@contextlib.contextmanager
def reference_autocast(policy: CastPolicy):
    """The forward region of the reference's bound run: the policy's casts made explicit at the entry
    points the programs use (:data:`LOWER` ops' operands copied to bfloat16, :data:`FLOAT32` ops run in
    float32, :data:`INPUT_DTYPE` ops in their input's dtype) and ``policy.autocast`` on."""
    F = reference.nn.functional
    patches = [(reference.Tensor, n, "lower") for n in _LOWER_METHODS]
    patches += [(reference, n, "lower") for n in _LOWER_FUNCTIONS]
    patches += [(F, n, "lower") for n in _LOWER_NN if hasattr(F, n)]
    patches += [(F, n, "float32") for n in _FLOAT32_NN if hasattr(F, n)]
    patches += [(F, n, "input") for n in INPUT_DTYPE if hasattr(F, n)]
    saved = [(owner, name, owner.__dict__[name]) for owner, name, _ in patches if name in owner.__dict__]
    for owner, name, kind in patches:
        if name in owner.__dict__:
            setattr(owner, name, _entry(policy, owner.__dict__[name], kind))
    policy.autocast = True
    try:
        yield
    finally:
        policy.autocast = False
        for owner, name, fn in saved:
            setattr(owner, name, fn)


__all__ = [
    "AMP_POLICIES",
    "FLOAT32",
    "INPUT_DTYPE",
    "LOWER",
    "LOW_DTYPE",
    "PROMOTE",
    "CastPolicy",
    "amp_accumulator",
    "low_dtype",
    "reference_autocast",
]
