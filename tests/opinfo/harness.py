"""PyTorch's OpInfo samples run through the reference and compared with torch.

For every OpInfo of ``torch.testing._internal.common_methods_invocations.op_db`` that supports
autograd in float64 on CPU, :func:`run_entry` finds the reference's callable *from the OpInfo
alone* (no op is named here), converts each sample input to reference tensors and compares with
torch:

* ``forward``: the outputs (tuples / namedtuples elementwise; dtypes and shapes exactly; integer
  and bool outputs exactly, floating outputs within the tolerance below);
* ``vjp``: ``autograd.grad`` of the floating outputs with one random cotangent (the same values
  on both sides) with respect to every input tensor that requires grad;
* ``vjp_vjp``: the gradient of that VJP (``create_graph=True``) with a second random cotangent,
  with respect to the inputs and the first cotangent (as ``gradgradcheck`` does);
* ``jvp``: ``torch.func.jvp`` against ``reference.func.jvp`` with random tangents;
* ``vmap``: ``torch.func.vmap`` against ``reference.func.vmap(..., allow_fallback=False)``, the
  floating inputs batched (batch of 2: the sample and a perturbed copy) at dim 0;
* ``vmap_vjp``: ``vmap`` of the VJP, primals and cotangents batched;
* ``inplace``: the in-place variant (``x.add_``) on a clone of the input, forward and VJP.

Which callable: an OpInfo whose ``op`` is the public torch function at its name
(``torch.X``, ``torch.nn.functional.X``, ``torch.linalg.X``...) maps to the same path under
``reference``; a Tensor method (``__radd__``, ``cdouble``) maps to the reference Tensor's method;
an OpInfo whose ``op`` is a wrapper written in torch's test modules (``lambda x: x.view(...)``)
runs that same program text with ``torch`` bound to ``reference`` (its globals re-bound), which
is what ``import reference as T`` is for. ``torch.ops.aten`` overloads have no public API and are
"not implemented" by category; so is an op whose result dtype the reference refuses with its typed
error (``DtypeNotSupported``: ``chalf``'s complex32, which has no NumPy storage), with its reason.

Tolerance (derived, not tuned): float64 results are compared with an absolute tolerance per
tensor ``eps * (8 + n) * m``. ``eps`` is float64's machine epsilon; ``n`` the total number of
elements of the sample's tensors, an upper bound on the length of any accumulation the op
performs (the rounding error of a sum of n terms is at most about ``n * eps * sum|terms|``);
``8`` a few ulps for the elementwise kernels (libm functions are accurate to about one ulp,
composite formulas chain a few); ``m`` the magnitude at which rounding happens: the largest
finite magnitude in the torch or reference result, or, when larger, the magnitude of the terms
an accumulation may combine: ``max(1, max|input|)**2`` (products of two operands, as in matmul)
times ``max(1, max|direction|)`` for each random cotangent / tangent the check feeds in (so a
sum whose terms cancel is not held to the size of its small result). NaN must match NaN,
infinities must match exactly, integer and bool results must be equal.
A one-part-in-1e9 error in a forward value or 1e-6 in a gradient is far above this bound
(tests/opinfo/test_opinfo.py plants both). Only after a comparison fails with it, two derived
second looks: outputs fixed only up to a gauge (singular / eigen vectors' signs) are compared
through the sample's ``output_process_fn_grad`` (the function torch's own gradient tests
differentiate), and the tolerance gains the problem's conditioning, ``eps * (8 + n) *
sum_j |d out / d x_j| |x_j|`` computed exactly with the reference's forward mode
(:func:`conditioning`). If that fails too, a third: the first-order rounding of the
computation's intermediates (:func:`rounding_bound`: the error tracker of reference/errors run
through the reference's graph, every elementwise primitive rounding by the elementwise term),
for derivative maps that round intermediates they then treat as independent (PyTorch's
layer_norm backward forms x_hat = rstd·x - rstd·mean). A planted 1e-9 error stays outside all
three (tests plant it).

Checks respect the OpInfo: ``supports_forward_ad`` / ``supports_gradgrad`` / ``check_batched_grad``
false, or a torch test decorated as an expected failure or skip on CPU float64 (``TestBwdGradients``
``test_fn_grad``..., ``TestVmapOperatorsOpInfo``), make that check "n/a" with the reason; so does
torch itself raising on the sample (e.g. ``torch.func.vmap`` of a data-dependent op).
"""

from __future__ import annotations

import functools
import types
import unittest
import zlib

import numpy as np

import reference as T

EPS = float(np.finfo(np.float64).eps)
#: The dtype the OpInfo samples are drawn in: "float64" (the default survey) or "complex128"
#: (the complex survey, ``python -m tests.opinfo.survey --dtype complex128``). In complex128 mode
#: cotangents and tangents of complex tensors are complex, complex outputs are compared as
#: complex values (real and imaginary parts, same tolerance on the modulus of the difference).
MODE = {"dtype": "float64"}


def set_dtype(name):
    if name not in ("float64", "complex128"):
        raise ValueError(f"OpInfo survey dtype must be float64 or complex128, got {name!r}")
    MODE["dtype"] = name
    entries.cache_clear()


def _dtype():
    import torch

    return getattr(torch, MODE["dtype"])


def _complex_mode():
    return MODE["dtype"] == "complex128"


ELEMENTWISE_ULPS = 8
BATCH = 2
CHECKS = ("forward", "vjp", "vjp_vjp", "jvp", "vmap", "vmap_vjp", "inplace")
FIRST_ORDER = ("forward", "vjp")


class Unsupported(Exception):
    """A sample (or op) the reference cannot express: complex, float16, sparse, aten-only..."""

    def __init__(self, category, detail=""):
        super().__init__(f"{category}: {detail}" if detail else category)
        self.category = category


class Missing(Exception):
    """The reference has no callable for the op."""


class Departure(Exception):
    """The reference disagrees with torch."""


class NotApplicable(Exception):
    """The check does not apply (torch's own flags, or torch raising on it)."""


# ---------------------------------------------------------------------------------------------
# the OpInfo database


@functools.cache
def op_db():
    import torch  # noqa: F401
    from torch.testing._internal.common_methods_invocations import op_db as db

    return db


def entry_key(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def differentiable(op):
    """Whether torch's OpInfo runs its gradient tests for this op in the survey's dtype on CPU."""
    if not (op.supports_autograd and _dtype() in op.supported_dtypes("cpu")):
        return False
    if _complex_mode():  # OpInfo: supports_complex_autograd (defaults to supports_autograd)
        flag = getattr(op, "supports_complex_autograd", None)
        value = flag("cpu") if callable(flag) else flag
        return bool(op.supports_autograd if value is None else value)
    return True


@functools.cache
def all_entries():
    """``{key: OpInfo}`` for every OpInfo of op_db, by key (``name`` or ``name.variant``)."""
    out = {}
    for op in op_db():
        out.setdefault(entry_key(op), op)
    return out


@functools.cache
def entries():
    """``{key: OpInfo}`` for the OpInfos supporting autograd in float64 on CPU, in op_db order."""
    return {k: op for k, op in all_entries().items() if differentiable(op)}


def _torch_disables(op, cls_names, test_names):
    """The reason when torch's own test ``cls.test`` is an expected failure or skipped for
    CPU float64 on this OpInfo, else None."""

    for info in op.decorators or ():
        if not hasattr(info, "cls_name"):  # precisionOverride, toleranceOverride: not about failures
            continue
        if info.cls_name is not None and info.cls_name not in cls_names:
            continue
        if info.test_name is not None and info.test_name not in test_names:
            continue
        if info.device_type is not None and info.device_type != "cpu":
            continue
        if info.dtypes is not None and _dtype() not in info.dtypes:
            continue
        if not info.active_if:
            continue
        test = f"{info.cls_name}.{info.test_name}" if info.test_name else f"every {info.cls_name} test"
        for dec in info.decorators:
            if dec is unittest.expectedFailure:
                return f"torch marks {test} an expected failure"
            name = getattr(dec, "__qualname__", "") or ""
            if "skip" in name.lower():
                return f"torch skips {test}"
    return None


def torch_flags(op):
    """``{check: reason}`` for the checks the OpInfo itself turns off."""
    out = {}
    grad = _torch_disables(op, {"TestBwdGradients", "TestGradients"}, {"test_fn_grad"})
    if grad:
        out["vjp"] = grad
    if not op.supports_gradgrad:
        out["vjp_vjp"] = "OpInfo: supports_gradgrad=False"
    else:
        r = _torch_disables(op, {"TestBwdGradients", "TestGradients"}, {"test_fn_gradgrad"})
        if r:
            out["vjp_vjp"] = r
    if not op.supports_forward_ad:
        out["jvp"] = "OpInfo: supports_forward_ad=False"
    else:
        r = _torch_disables(op, {"TestFwdGradients", "TestGradients"}, {"test_forward_mode_AD"})
        if r:
            out["jvp"] = r
    r = _torch_disables(op, {"TestVmapOperatorsOpInfo"}, {"test_vmap_exhaustive", "test_op_has_batch_rule"})
    if r:
        out["vmap"] = r
    if not op.check_batched_grad:
        out["vmap_vjp"] = "OpInfo: check_batched_grad=False"
    else:
        r = _torch_disables(op, {"TestOperators"}, {"test_vmapvjp"})
        if r:
            out["vmap_vjp"] = r
    if op.inplace_variant is None:
        out["inplace"] = "OpInfo: no in-place variant"
    elif not op.supports_inplace_autograd:
        out["inplace"] = "OpInfo: supports_inplace_autograd=False"
    return out


# ---------------------------------------------------------------------------------------------
# torch objects -> reference objects


@functools.cache
def _module_map():
    import torch
    import torch.nn.functional

    return {
        torch: T,
        torch.nn: T.nn,
        torch.nn.functional: T.nn.functional,
        torch.linalg: T.linalg,
        torch.special: T.special,
        torch.fft: T.fft,
    }


class _MissingModule:
    """Stands for a torch module the reference lacks; any use says which."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise Missing(f"reference has no module for {self._name} (needs {self._name}.{attr})")


def translate(obj):
    """The reference counterpart of a torch module or public torch function used by a wrapper."""
    import torch

    if isinstance(obj, types.ModuleType):
        if obj in _module_map():
            return _module_map()[obj]
        if obj.__name__.startswith("torch"):
            return _MissingModule(obj.__name__)
        return obj
    if isinstance(obj, torch.dtype):
        try:
            return to_reference_dtype(obj)
        except Unsupported:
            return obj  # a wrapper that uses it meets a torch dtype in the reference and says so
    return obj


_rebound_globals: dict[int, dict] = {}


def rebind(fn):
    """The Python function ``fn`` (a wrapper from torch's test modules) with its torch modules
    re-bound to reference's: the same program text, run on ``reference``."""
    if not isinstance(fn, types.FunctionType):
        return fn
    key = id(fn.__globals__)
    if key not in _rebound_globals:
        _rebound_globals[key] = {k: translate(v) for k, v in fn.__globals__.items()}
    closure = None
    if fn.__closure__:
        closure = tuple(types.CellType(_translate_cell(c)) for c in fn.__closure__)
    new = types.FunctionType(fn.__code__, _rebound_globals[key], fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    return new


def _translate_cell(cell):
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return None
    if isinstance(value, types.FunctionType):
        return rebind(value)
    return translate(value)


def to_reference_dtype(dtype):
    name = str(dtype).removeprefix("torch.")
    if dtype.is_complex and not _complex_mode():
        raise Unsupported("complex", f"dtype {dtype}")
    ref = getattr(T, name, None)
    if not isinstance(ref, np.dtype):
        raise Unsupported("dtype not in reference", f"{dtype}")
    return ref


def _resolve_path(root, path):
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _method_caller(name):
    def call(self, *args, **kwargs):
        method = getattr(self, name, None)
        if method is None:
            raise Missing(f"reference Tensor has no method {name}")
        return method(*args, **kwargs)

    call.__name__ = name
    return call


def category(op):
    """The not-implemented category an OpInfo falls in by its nature, or None."""
    import torch

    fn = op.op
    module = getattr(fn, "__module__", "") or ""
    if op.name.startswith("sparse.") or module.startswith("torch._C._sparse") or "sparse" in op.name:
        return "sparse-only"
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return "aten operator (torch.ops.aten, no public API)"
    if isinstance(fn, types.FunctionType) and "wrapper_set_seed" in fn.__code__.co_names:
        return "random (needs explicit noise)"
    return None


def reference_callable(op):
    """The reference's callable for the OpInfo (raises Missing / Unsupported)."""
    import torch

    cat = category(op)
    if cat is not None:
        raise Unsupported(cat)
    fn = op.op
    if _resolve_path(torch, op.name) is fn:
        ref = _resolve_path(T, op.name)
        if ref is None:
            raise Missing(f"reference.{op.name}")
        return ref
    module = getattr(fn, "__module__", None)
    if isinstance(fn, (types.MethodDescriptorType, types.WrapperDescriptorType)) or module == "torch._tensor":
        name = fn.__name__
        if getattr(T.Tensor, name, None) is None:
            raise Missing(f"reference.Tensor.{name}")
        return _method_caller(name)
    if isinstance(fn, types.FunctionType):
        return rebind(fn)
    raise Missing(f"no reference counterpart for {fn!r}")


def inplace_name(op):
    fn = op.inplace_variant
    return getattr(fn, "__name__", None) if fn is not None else None


# ---------------------------------------------------------------------------------------------
# samples


class Converted:
    """A sample converted: the reference pytree, and the differentiable tensors of both sides
    in the same order (the leaves that require grad)."""

    def __init__(self, sample):
        self.torch_leaves = []  # torch tensors requiring grad, in traversal order
        self.ref_leaves = []
        self.n_elements = 0
        self.template = (sample.input, tuple(sample.args), dict(sample.kwargs))
        self.ref = self._convert(self.template)

    def _convert(self, obj):
        import torch

        if isinstance(obj, torch.Tensor):
            if obj.layout != torch.strided:
                raise Unsupported("sparse-only", f"layout {obj.layout}")
            if obj.is_complex() and not _complex_mode():
                raise Unsupported("complex", "complex tensor in the sample")
            dtype = to_reference_dtype(obj.dtype)
            self.n_elements += obj.numel()
            if obj._base is not None and obj.is_leaf and not obj.is_conj() and not obj.is_neg():
                # a view into a larger storage (made under no_grad); a conjugate view (complex
                # samples) is converted by value: the reference has no conjugate views. The
                # storage is copied as it lies in memory (from the base's first element, torch
                # strides being non-negative), not in the base's logical order: a base that is
                # itself strided (a transposed LAPACK result) lays its elements out differently,
                # and ``obj``'s strides index that memory.
                base = obj._base.detach()
                start = base.storage_offset()
                span = max(
                    t.storage_offset() - start + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
                    if t.numel()
                    else 0
                    for t in (base, obj)
                )
                memory = torch.as_strided(base, (span,), (1,), start).numpy().copy()
                with T.no_grad():
                    ref = T.tensor(memory, dtype=dtype).as_strided(
                        tuple(obj.shape), obj.stride(), obj.storage_offset() - start
                    )
                ref.requires_grad_(bool(obj.requires_grad))
            else:
                values = obj.detach().resolve_conj().resolve_neg().numpy().copy()
                ref = T.tensor(values, dtype=dtype, requires_grad=bool(obj.requires_grad))
            if obj.requires_grad:
                self.torch_leaves.append(obj)
                self.ref_leaves.append(ref)
            return ref
        if isinstance(obj, torch.dtype):
            return to_reference_dtype(obj)
        if isinstance(obj, torch.Size):
            return tuple(obj)
        if isinstance(obj, torch.device):
            return str(obj)
        if isinstance(obj, (torch.memory_format, torch.layout)):
            ref = getattr(T, str(obj).removeprefix("torch."), None)
            if ref is None:
                raise Unsupported("argument not in reference", str(obj))
            return ref
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*(self._convert(v) for v in obj))
        if isinstance(obj, (list, tuple)):
            return type(obj)(self._convert(v) for v in obj)
        if isinstance(obj, dict):
            return {k: self._convert(v) for k, v in obj.items()}
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
            return rebind(obj)
        if isinstance(obj, torch.nn.Module) and not list(obj.parameters()):
            # a stateless module (PairwiseDistance as a distance_function): its forward's program
            # text re-bound to reference, on the module's own attributes
            forward = rebind(type(obj).forward)
            return lambda *args, **kwargs: forward(obj, *args, **kwargs)
        if isinstance(obj, complex) and not _complex_mode():
            raise Unsupported("complex", "complex scalar in the sample")
        return obj


def substitute(template, is_tensor, leaves):
    """``template`` with its grad-requiring tensors replaced, in order, by ``leaves``."""
    it = iter(leaves)

    def sub(obj):
        if is_tensor(obj):
            return next(it) if obj.requires_grad else obj
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return type(obj)(*(sub(v) for v in obj))
        if isinstance(obj, (list, tuple)):
            return type(obj)(sub(v) for v in obj)
        if isinstance(obj, dict):
            return {k: sub(v) for k, v in obj.items()}
        return obj

    return sub(template)


def _is_torch_tensor(x):
    import torch

    return isinstance(x, torch.Tensor)


def _is_ref_tensor(x):
    return isinstance(x, T.Tensor)


def samples(op, key=None):
    """The OpInfo's CPU samples in the survey's dtype with requires_grad, reproducibly (seeded by the key)."""
    import torch

    key = key or entry_key(op)
    torch.manual_seed(zlib.crc32(key.encode()))
    return iter(op.sample_inputs("cpu", _dtype(), requires_grad=True))


def describe(sample, limit=300):
    import torch

    def d(obj):
        if isinstance(obj, torch.Tensor):
            return f"Tensor{tuple(obj.shape)}:{str(obj.dtype).removeprefix('torch.')}" + (
                "(rg)" if obj.requires_grad else ""
            )
        if isinstance(obj, (list, tuple)):
            inner = ", ".join(d(v) for v in obj)
            return f"[{inner}]" if isinstance(obj, list) else f"({inner})"
        if isinstance(obj, dict):
            return "{" + ", ".join(f"{k}={d(v)}" for k, v in obj.items()) + "}"
        if isinstance(obj, types.FunctionType):
            return obj.__name__
        return repr(obj)

    text = d(sample.input)
    if sample.args:
        text += ", " + ", ".join(d(a) for a in sample.args)
    if sample.kwargs:
        text += ", " + ", ".join(f"{k}={d(v)}" for k, v in sample.kwargs.items())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# comparison


def _leaves(obj, is_tensor):
    if is_tensor(obj) or obj is None or isinstance(obj, (bool, int, float)):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [leaf for v in obj for leaf in _leaves(v, is_tensor)]
    if isinstance(obj, dict):
        return [leaf for k in sorted(obj) for leaf in _leaves(obj[k], is_tensor)]
    return [obj]


def _as_array(x, torch_side):
    if x is None:
        return None
    if torch_side:
        import torch

        if isinstance(x, torch.Tensor):
            return x.detach().numpy(force=True)
        return np.asarray(x)
    if isinstance(x, T.Tensor):
        return np.asarray(x.detach().numpy())
    return np.asarray(x)


def magnitude(arrays):
    """The largest finite magnitude among the arrays (at least 1)."""
    m = 1.0
    for a in arrays:
        a = np.asarray(a, dtype=np.float64) if not isinstance(a, np.ndarray) else a
        if a.dtype.kind in "fc" and a.size:
            finite = np.abs(a[np.isfinite(a)])
            if finite.size:
                m = max(m, float(finite.max()))
    return m


def tolerance(n_elements, t, r, scale=1.0):
    finite = [np.abs(a[np.isfinite(a)]) for a in (t, r)]
    m = max([float(a.max()) for a in finite if a.size] + [scale])
    return EPS * (ELEMENTWISE_ULPS + n_elements) * m


def compare(torch_out, ref_out, n_elements, what, zeros_for_none=False, scale=1.0, conditioning=None):
    """Raise Departure naming the first leaf that differs. ``conditioning`` (one array per leaf,
    from :func:`conditioning`) adds the problem's conditioning term to the tolerance."""
    t_leaves = _leaves(torch_out, _is_torch_tensor)
    r_leaves = _leaves(ref_out, _is_ref_tensor)
    if len(t_leaves) != len(r_leaves):
        raise Departure(f"{what}: torch gives {len(t_leaves)} outputs, reference {len(r_leaves)}")
    for i, (tl, rl) in enumerate(zip(t_leaves, r_leaves)):
        where = f"{what}[{i}]" if len(t_leaves) > 1 else what
        t = _as_array(tl, True)
        r = _as_array(rl, False)
        if zeros_for_none and (t is None) != (r is None):
            t = np.zeros_like(r) if t is None else t
            r = np.zeros_like(t) if r is None else r
        if t is None or r is None:
            if t is not r:
                raise Departure(f"{where}: torch gives {tl!r}, reference {type(rl).__name__}")
            continue
        if t.shape != r.shape:
            raise Departure(f"{where}: shape {t.shape} in torch, {r.shape} in reference")
        if _is_torch_tensor(tl) and _is_ref_tensor(rl) and t.dtype != r.dtype:
            raise Departure(f"{where}: dtype {t.dtype} in torch, {r.dtype} in reference")
        if t.dtype.kind in "fc":
            wide = np.complex128 if t.dtype.kind == "c" or r.dtype.kind == "c" else np.float64
            tf, rf = t.astype(wide), r.astype(wide)
            nan_t, nan_r = np.isnan(tf), np.isnan(rf)
            if (nan_t != nan_r).any():
                idx = np.argwhere(nan_t != nan_r)[0]
                raise Departure(
                    f"{where}: at {tuple(int(i) for i in idx)} torch {tf[tuple(idx)]!r}, reference {rf[tuple(idx)]!r}"
                )
            inf = np.isinf(tf) | np.isinf(rf)
            if (tf[inf] != rf[inf]).any():
                idx = np.argwhere(inf & (tf != rf))[0]
                raise Departure(
                    f"{where}: at {tuple(int(i) for i in idx)} torch {tf[tuple(idx)]!r}, reference {rf[tuple(idx)]!r}"
                )
            ok = ~(nan_t | inf)
            tol = tolerance(n_elements, tf, rf, scale)
            if conditioning is not None and conditioning[i] is not None:
                tol = tol + EPS * (ELEMENTWISE_ULPS + n_elements) * np.broadcast_to(conditioning[i], tf.shape)
            bound = getattr(conditioning, "bound", None)
            if bound is not None and i < len(bound) and bound[i] is not None:
                tol = tol + np.broadcast_to(bound[i], tf.shape)
            err = np.where(ok, np.abs(tf - rf), 0.0)
            if (err > tol).any():
                idx = tuple(int(i) for i in np.unravel_index(np.argmax(err - tol), err.shape))
                tol_at = float(np.asarray(tol)[idx]) if np.ndim(tol) else tol
                raise Departure(
                    f"{where}: max |diff| {float(err[idx]):.3g} > tolerance {tol_at:.3g} at {idx}: "
                    f"torch {tf[idx].item()!r}, reference {rf[idx].item()!r}"
                    + (" (tolerance with the problem's conditioning)" if conditioning is not None else "")
                    + (" and the rounding through its intermediates" if bound is not None else "")
                )
        elif not np.array_equal(t, r):
            idx = np.argwhere(t != r)
            at = tuple(int(i) for i in idx[0]) if idx.size else ()
            raise Departure(f"{where}: exact values differ at {at}: torch {t[at]!r}, reference {r[at]!r}")


#: Resource limits of :func:`conditioning` (not tolerances: past the limit the failure stands,
#: the harness is only stricter): one jvp per input element, vmapped a chunk at a time.
CONDITIONING_MAX_ELEMENTS = 2048
CONDITIONING_CHUNK = 128


def conditioning(fn, inputs):
    """The conditioning term of the tolerance: for each output leaf of ``fn(*inputs)`` (reference
    tensors; floating, real), ``sum_j |d out / d input_j| * |input_j|`` over every element j of
    every input, computed exactly with the reference's forward mode (a ``jvp`` along ``|input_j| e_j`` for
    every element, vmapped).

    Derivation: an algorithm that is backward stable computes ``f(x + dx)`` (plus rounding of the
    result, the elementwise term of :func:`tolerance`) with ``|dx_j| <= c u |x_j|``; to first
    order that moves each output by at most ``c u sum_j |J_ij| |x_j|`` (Skeel's componentwise
    condition number times ``|x|``; e.g. ``exp(A)``'s entries through the Frechet derivative,
    which scaling and squaring amplifies). With ``c = ELEMENTWISE_ULPS + n`` as for the
    elementwise term, compare tolerates ``eps (8 + n) (m + cond)``. For a derivative check
    ``fn`` is the derivative map itself (the VJP as a function of the primals, the VJP of the
    VJP as a function of the primals and the first cotangent, the JVP of primals and tangents):
    its inputs' perturbations include the cotangents and tangents, whose terms
    ``|d out / d ct| |ct|`` are the magnitudes of the terms a linear map adds (so results that
    are small by cancellation are not held to their own size). Only computed after a check
    failed with the elementwise tolerance alone; a check whose conditioning cannot be computed
    (complex inputs, the reference's forward mode failing) keeps its failure."""
    xs = tuple(x.detach() for x in inputs)
    for x in xs:
        if x.dtype.kind != "f":
            raise Unsupported("conditioning", "only real floating inputs")
    if sum(x.numel() for x in xs) > CONDITIONING_MAX_ELEMENTS:
        raise Unsupported("conditioning", "too many input elements for one jvp each")
    out = _leaves(fn(*xs), _is_ref_tensor)
    acc = [None if o is None else np.zeros(tuple(o.shape)) for o in out]
    for k, x in enumerate(xs):
        values = np.abs(x.numpy()).reshape(-1)
        if not values.size:
            continue

        def along(direction, k=k):
            tangents = tuple(direction if i == k else T.zeros_like(y) for i, y in enumerate(xs))
            return T.func.jvp(fn, xs, tangents)[1]

        # the jvps along |x_j| e_j, a chunk of directions at a time under vmap
        for start in range(0, values.size, CONDITIONING_CHUNK):
            stop = min(start + CONDITIONING_CHUNK, values.size)
            directions = np.zeros((stop - start, values.size))
            directions[np.arange(stop - start), np.arange(start, stop)] = values[start:stop]
            tan = T.func.vmap(along)(T.tensor(directions.reshape((stop - start, *x.shape)), dtype=x.dtype))
            for a, t in zip(acc, _leaves(tan, _is_ref_tensor)):
                if a is not None and t is not None:
                    a += np.abs(np.asarray(t.detach().numpy(), dtype=np.float64)).sum(0)
    return acc


def _vjp_map(f, k):
    """``(*inputs, *cotangents) -> vjp of f at inputs`` (``f`` returns a tuple) with
    reference.func, so that forward mode can differentiate it again."""

    def g(*args):
        _, pull = T.func.vjp(f, *args[:k])
        return pull(tuple(args[k:]))

    return g


class _Terms(list):
    """The conditioning arrays per output leaf (None where not computed), with ``bound``: the
    first-order rounding bound per leaf (:func:`rounding_bound`), added to the tolerance as it is."""

    bound = None


def rounding_bound(fn, inputs):
    """The third derived term of the tolerance: a first-order rounding analysis of ``fn`` at
    ``inputs`` through the intermediates of the graph the reference runs (one array per output
    leaf).

    Derivation: the conditioning term (:func:`conditioning`) is the error of a backward stable
    algorithm, one whose result is the exact ``fn`` of slightly perturbed *inputs*. A derivative
    map is often not backward stable that way: it rounds intermediate quantities it then treats
    as independent. PyTorch's layer_norm backward (aten/src/ATen/native/cpu/layer_norm_kernel.cpp)
    forms x_hat = a·x + b with a = rstd and b = -rstd·mean, so x_hat carries rounding
    u·rstd·(|x| + |mean|) however small x - mean is; with one normalized element x - mean = 0
    exactly, ``fn`` does not depend on x at all (the conditioning term is 0) while torch's weight
    gradient is u·rstd·|x|·|dy| (-7.6e-14 at x = -4.83, rstd = 316). The classical first-order
    analysis bounds the error of an algorithm by sum over its intermediates v of
    |d out / d v|·(rounding of v): here the rounding of mean (relative to |x|) reaches x - mean
    and is multiplied by rstd, u·rstd·|x|·|dy|, the size of torch's term. It is computed with the
    error tracker of reference/errors (:func:`reference.errors.bound_of`, which carries each
    primitive's rounding forward through the derivatives of what follows), in float64 for both
    sides, with one change: every elementwise primitive rounds by the harness's own elementwise
    assumption (``ELEMENTWISE_ULPS`` ulps of its result, the elementwise term of
    :func:`tolerance`) instead of its declaration, which may include a framework's documented
    algorithmic error (PyTorch's trigamma truncation, XLA's lgamma near its zeros): those stay
    departures here. Sums (``products``), linear algebra (Higham's bounds) and decompositions keep
    their derived declarations."""
    import reference.errors as E

    arrays = []
    for x in inputs:
        a = x.detach().numpy()
        if a.dtype.kind != "f":
            raise Unsupported("rounding analysis", "only real floating inputs")
        arrays.append(np.asarray(a, dtype=np.float64))
    with _elementwise_rounding_tracker()(E.Precision("float64")) as tracker:  # as errors.bound_of
        tensors = [T.tensor(a, dtype=T.float64, requires_grad=True) for a in arrays]
        for t, a in zip(tensors, arrays):
            tracker.set_error(t, np.zeros(a.shape))
        outs = _flat_outputs(fn(*tensors))
        return [None if o is None else np.array(tracker.error_of(o), dtype=np.float64) for o in outs]


def _elementwise_rounding_tracker():
    import reference.errors as E
    from reference.ops.rule import BATCH_ELEMENTWISE

    uniform = E.elementwise(ELEMENTWISE_ULPS / 2, "tests/opinfo/harness.py: the elementwise term")

    class ElementwiseRounding(E.Tracker):
        """reference.errors' tracker whose elementwise primitives round by ``ELEMENTWISE_ULPS``
        ulps of their result (2·4·(u + u_ref)·|y| = 8·eps·|y|), their declared error set aside;
        input errors still propagate through each primitive's derivative."""

        def _propagate(self, rule, arrays, params, outs, aux, errs=None):
            spec = E._spec(rule)
            if spec.kind not in ("derived", "elementwise", "own_bound") or rule.batch != BATCH_ELEMENTWISE:
                return super()._propagate(rule, arrays, params, outs, aux, errs)
            errs = self._errs(arrays) if errs is None else errs
            self._suspended += 1
            try:
                return [
                    E._elementwise(rule, arrays, errs, params, outs, aux)
                    + self._own(uniform, outs[0], params, arrays)
                ]
            finally:
                self._suspended -= 1

    return ElementwiseRounding


def _flat_outputs(out):
    leaves = _leaves(out, _is_ref_tensor)
    if any(leaf is not None and not _is_ref_tensor(leaf) for leaf in leaves):
        raise Unsupported("rounding analysis", "non-tensor outputs")
    return tuple(leaves)


def _conditioned(raw, fn, inputs, recompare):
    """After the check failed (``raw``): ``recompare(conditioning)`` with the conditioning term of
    ``fn`` at ``inputs`` (see :func:`conditioning`); if that fails too, or the conditioning cannot
    be computed, ``recompare`` once more with the rounding analysis's bound added
    (:func:`rounding_bound`). The last failure stands when a term cannot be computed."""
    cond = None
    try:
        cond = conditioning(fn, inputs)
    except Exception:  # noqa: BLE001 - no conditioning term: on to the rounding analysis
        pass
    if cond is not None:
        try:
            recompare(cond)
            return
        except Departure as e:
            raw = e
    try:
        bound = rounding_bound(fn, inputs)
    except Exception:  # noqa: BLE001 - no bound: the failure stands as it was
        raise raw from None
    terms = _Terms(cond if cond is not None else [None] * len(bound))
    terms.bound = bound
    recompare(terms)


# ---------------------------------------------------------------------------------------------
# the checks


def _rng(key, index, salt):
    return np.random.default_rng(zlib.crc32(f"{key}|{index}|{salt}".encode()))


def _floating_outputs(out):
    """Indices of torch output leaves that are floating tensors requiring grad."""
    return [
        i
        for i, leaf in enumerate(_leaves(out, _is_torch_tensor))
        if _is_torch_tensor(leaf) and leaf.requires_grad
    ]


def _random_like(rng, t):
    if t.is_complex():
        return rng.standard_normal(tuple(t.shape)) + 1j * rng.standard_normal(tuple(t.shape))
    return rng.standard_normal(tuple(t.shape))


def _pair(values, like_torch):
    import torch

    tt = torch.tensor(values, dtype=like_torch.dtype)
    rt = T.tensor(values, dtype=to_reference_dtype(like_torch.dtype))
    return tt, rt


def _ref_call(what, fn, *args, **kwargs):
    from reference.ops.functions._low_precision import DtypeNotSupported

    try:
        return fn(*args, **kwargs)
    except (Departure, NotApplicable, Unsupported):
        raise
    except DtypeNotSupported as e:  # the reference's typed refusal of a dtype it has no storage for
        raise Unsupported(f"dtype not in reference: {e.dtype} ({e.reason})") from None
    except Missing as e:
        raise Departure(f"{what}: reference lacks {e}") from None
    except Exception as e:  # noqa: BLE001 - any reference error is a departure, reported by type and message
        raise Departure(f"{what}: reference raises {type(e).__name__}: {_short(e)}") from None


def _torch_call(what, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        raise NotApplicable(f"torch raises in {what}: {type(e).__name__}: {_short(e)}") from None


def _short(e, limit=200):
    text = str(e).split("\n")[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Case:
    """One sample of one OpInfo, ready to check."""

    def __init__(self, op, ref_fn, sample, key, index):
        self.op, self.ref_fn, self.sample, self.key, self.index = op, ref_fn, sample, key, index
        self.conv = Converted(sample)
        self.n = self.conv.n_elements
        tensors = [x for x in _leaves(self.conv.template, _is_torch_tensor) if _is_torch_tensor(x)]
        # the scale of the terms an accumulation may combine: products of two input magnitudes
        self.scale = magnitude(_as_array(x, True) for x in tensors) ** 2
        post = sample.output_process_fn_grad
        self.torch_post = post
        self.ref_post = rebind(post) if isinstance(post, types.FunctionType) else post

    # the op as a function of the differentiable tensors
    def torch_f(self, *xs):
        inp, args, kwargs = substitute(self.conv.template, _is_torch_tensor, xs)
        return self.op.op(inp, *args, **kwargs)

    def ref_f(self, *xs):
        inp, args, kwargs = substitute(self.conv.ref, _is_ref_tensor, xs)
        return self.ref_fn(inp, *args, **kwargs)

    def _processes(self, torch_out):
        """Whether the sample post-processes its outputs (``output_process_fn_grad`` is not the
        identity). Such a sample declares the determined part of its outputs: it is the function
        torch's own gradient tests differentiate (``|U|``, ``U @ Vh`` and ``S`` for svd,
        ``(L, |V|)`` for eig/eigh, whose singular / eigen vectors are fixed only up to a sign or
        phase per column, a gauge that differs between LAPACK builds)."""
        return self.torch_post(torch_out) is not torch_out

    def _post_ref(self, out):
        return _ref_call("output_process_fn_grad", self.ref_post, out)

    @staticmethod
    def _through_post(raw, check):
        """Run ``check`` (the comparison of ``post∘op``) after the raw outputs differed (``raw``)."""
        try:
            check()
        except Departure as e:
            raise Departure(f"{raw} (and through output_process_fn_grad: {e})") from None

    def forward(self):
        t = _torch_call("forward", self.torch_f, *self.conv.torch_leaves)
        r = _ref_call("forward", self.ref_f, *self.conv.ref_leaves)
        try:
            compare(t, r, self.n, "output", scale=self.scale)
        except Departure as raw:
            t_cmp, r_cmp, ref_f = t, r, self.ref_f
            if self._processes(t):
                # outputs fixed only up to a gauge: compare the part the sample declares determined
                t_cmp, r_cmp = self.torch_post(t), self._post_ref(r)
                try:
                    compare(t_cmp, r_cmp, self.n, "output", scale=self.scale)
                    return t, r
                except Departure as e:
                    raw = Departure(f"{raw} (and through output_process_fn_grad: {e})")
                ref_f = self._post_op
            _conditioned(
                raw,
                ref_f,
                self.conv.ref_leaves,
                lambda cond: compare(t_cmp, r_cmp, self.n, "output", scale=self.scale, conditioning=cond),
            )
        return t, r

    def _post_op(self, *xs):
        return self._post_ref(self.ref_f(*xs))

    def _grad_map(self, idx):
        """The reference's VJP as a function of (primals, cotangents of outputs ``idx``)."""
        k = len(self.conv.ref_leaves)

        def outs(*xs):
            leaves = _leaves(self._post_op(*xs), _is_ref_tensor)
            return tuple(leaves[i] for i in idx)

        return _vjp_map(outs, k)

    def _vjp_parts(self, t_out, r_out, create_graph=False):
        import torch

        t_post = self.torch_post(t_out)
        r_post = _ref_call("output_process_fn_grad", self.ref_post, r_out)
        t_l = _leaves(t_post, _is_torch_tensor)
        r_l = _leaves(r_post, _is_ref_tensor)
        idx = _floating_outputs(t_post)
        if not idx or not self.conv.torch_leaves:
            raise NotApplicable("no differentiable output or input")
        rng = _rng(self.key, self.index, "ct")
        t_ct, r_ct = [], []
        for i in idx:
            tt, rt = _pair(_random_like(rng, t_l[i]), t_l[i])
            if create_graph:
                tt.requires_grad_(True)
                rt.requires_grad_(True)
            t_ct.append(tt)
            r_ct.append(rt)
        self._idx = idx
        t_outs = [t_l[i] for i in idx]
        r_outs = [r_l[i] for i in idx]
        for i, ro in zip(idx, r_outs):
            if not (_is_ref_tensor(ro) and ro.requires_grad):
                raise Departure(f"vjp: output {i} requires grad in torch, not in reference")
        t_g = torch.autograd.grad(
            t_outs, self.conv.torch_leaves, t_ct, allow_unused=True, create_graph=create_graph
        )
        r_g = _ref_call(
            "vjp",
            T.autograd.grad,
            r_outs,
            self.conv.ref_leaves,
            r_ct,
            allow_unused=True,
            create_graph=create_graph,
        )
        return t_g, r_g, t_ct, r_ct

    def vjp(self):
        t_out, r_out = self.forward()
        t_g, r_g, t_ct, r_ct = self._vjp_parts(t_out, r_out)
        scale = self.scale * magnitude(c.numpy() for c in t_ct)
        try:
            compare(t_g, r_g, self.n, "grad", zeros_for_none=True, scale=scale)
        except Departure as raw:
            _conditioned(
                raw,
                self._grad_map(self._idx),
                [*self.conv.ref_leaves, *r_ct],
                lambda cond: compare(
                    t_g, r_g, self.n, "grad", zeros_for_none=True, scale=scale, conditioning=cond
                ),
            )

    def vjp_vjp(self):
        import torch

        t_out, r_out = self.forward()
        t_g, r_g, t_ct, r_ct = self._vjp_parts(t_out, r_out, create_graph=True)
        scale = self.scale * magnitude(c.detach().numpy() for c in t_ct)
        grad_map = self._grad_map(self._idx)
        try:
            compare(t_g, r_g, self.n, "grad", zeros_for_none=True, scale=scale)
        except Departure as raw:
            _conditioned(
                raw,
                grad_map,
                [*self.conv.ref_leaves, *r_ct],
                lambda cond: compare(
                    t_g, r_g, self.n, "grad", zeros_for_none=True, scale=scale, conditioning=cond
                ),
            )
        sel = [i for i, g in enumerate(t_g) if g is not None and g.requires_grad]
        if not sel:
            raise NotApplicable("torch's first gradient does not depend on the inputs")
        rng = _rng(self.key, self.index, "ct2")
        t_v, r_v = zip(*(_pair(_random_like(rng, t_g[i]), t_g[i]) for i in sel))
        wrt_t = list(self.conv.torch_leaves) + t_ct
        wrt_r = list(self.conv.ref_leaves) + r_ct
        t_gg = torch.autograd.grad([t_g[i] for i in sel], wrt_t, list(t_v), allow_unused=True)
        r_sel = [(g, v) for i, v in zip(sel, r_v) if (g := r_g[i]) is not None and g.requires_grad]
        if r_sel:
            r_gg = _ref_call(
                "vjp_vjp",
                T.autograd.grad,
                [g for g, _ in r_sel],
                wrt_r,
                [v for _, v in r_sel],
                allow_unused=True,
            )
        else:
            r_gg = [None] * len(wrt_r)
        scale = scale * magnitude(v.numpy() for v in t_v)
        try:
            compare(t_gg, r_gg, self.n, "gradgrad", zeros_for_none=True, scale=scale)
        except Departure as raw:
            k = len(self.conv.ref_leaves) + len(r_ct)
            second = _vjp_map(lambda *a: tuple(grad_map(*a)[i] for i in sel), k)
            _conditioned(
                raw,
                second,
                [*self.conv.ref_leaves, *r_ct, *r_v],
                lambda cond: compare(
                    t_gg, r_gg, self.n, "gradgrad", zeros_for_none=True, scale=scale, conditioning=cond
                ),
            )

    def jvp(self):
        import torch

        if not self.conv.torch_leaves:
            raise NotApplicable("no differentiable input")
        rng = _rng(self.key, self.index, "tangent")
        t_p = tuple(x.detach() for x in self.conv.torch_leaves)
        r_p = tuple(x.detach() for x in self.conv.ref_leaves)
        pairs = [_pair(_random_like(rng, x), x) for x in t_p]
        t_t = tuple(p[0] for p in pairs)
        r_t = tuple(p[1] for p in pairs)
        scale = self.scale * magnitude(t.numpy() for t in t_t)

        def check(torch_f, ref_f):
            t_res = _torch_call("torch.func.jvp", torch.func.jvp, torch_f, t_p, t_t)
            r_res = _ref_call("jvp", T.func.jvp, ref_f, r_p, r_t)
            try:
                compare(t_res[0], r_res[0], self.n, "jvp primal out", scale=self.scale)
            except Departure as raw:
                _conditioned(
                    raw,
                    ref_f,
                    r_p,
                    lambda cond: compare(
                        t_res[0], r_res[0], self.n, "jvp primal out", scale=self.scale, conditioning=cond
                    ),
                )
            try:
                compare(t_res[1], r_res[1], self.n, "jvp tangent out", zeros_for_none=True, scale=scale)
            except Departure as raw:
                k = len(r_p)
                _conditioned(
                    raw,
                    lambda *a: T.func.jvp(ref_f, a[:k], a[k:])[1],
                    [*r_p, *r_t],
                    lambda cond: compare(
                        t_res[1],
                        r_res[1],
                        self.n,
                        "jvp tangent out",
                        zeros_for_none=True,
                        scale=scale,
                        conditioning=cond,
                    ),
                )

        try:
            check(self.torch_f, self.ref_f)
        except Departure as raw:  # outputs fixed up to a gauge: the jvp of post∘op
            if not self._processes(_torch_call("forward", self.torch_f, *t_p)):
                raise
            self._through_post(
                raw,
                lambda: check(
                    lambda *xs: self.torch_post(self.torch_f(*xs)),
                    lambda *xs: self._post_ref(self.ref_f(*xs)),
                ),
            )

    def _batched(self, salt):
        import torch

        rng = _rng(self.key, self.index, salt)
        t_b, r_b = [], []
        for x in self.conv.torch_leaves:
            base = x.detach().numpy()
            u = rng.uniform(-1.0, 1.0, size=base.shape)
            stacked = np.stack([base, base * (1.0 + 0.1 * u)])
            t_b.append(torch.tensor(stacked, dtype=x.dtype))
            r_b.append(T.tensor(stacked, dtype=to_reference_dtype(x.dtype)))
        return t_b, r_b

    def vmap(self):
        import torch

        if not self.conv.torch_leaves:
            raise NotApplicable("no differentiable input")
        t_b, r_b = self._batched("vmap")
        dims = (0,) * len(t_b)

        def check(torch_f, ref_f):
            t_res = _torch_call("torch.func.vmap", torch.func.vmap(torch_f, in_dims=dims), *t_b)
            mapped = T.func.vmap(ref_f, in_dims=dims, allow_fallback=False)
            r_res = _ref_call("vmap", mapped, *r_b)
            try:
                compare(t_res, r_res, self.n * BATCH, "vmap out", scale=self.scale * 1.1**2)
            except Departure as raw:
                _conditioned(
                    raw,
                    mapped,
                    r_b,
                    lambda cond: compare(
                        t_res, r_res, self.n * BATCH, "vmap out", scale=self.scale * 1.1**2, conditioning=cond
                    ),
                )

        try:
            check(self.torch_f, self.ref_f)
        except Departure as raw:  # outputs fixed up to a gauge: vmap of post∘op
            if not self._processes(_torch_call("forward", self.torch_f, *self.conv.torch_leaves)):
                raise
            self._through_post(
                raw,
                lambda: check(
                    lambda *xs: self.torch_post(self.torch_f(*xs)),
                    lambda *xs: self._post_ref(self.ref_f(*xs)),
                ),
            )

    def vmap_vjp(self):
        import torch

        if not self.conv.torch_leaves:
            raise NotApplicable("no differentiable input")
        t_out = _torch_call("forward", self.torch_f, *self.conv.torch_leaves)
        idx = _floating_outputs(t_out)
        if not idx:
            raise NotApplicable("no differentiable output")
        t_l = _leaves(t_out, _is_torch_tensor)
        t_b, r_b = self._batched("vmap_vjp")
        rng = _rng(self.key, self.index, "vmap_ct")
        t_cb, r_cb = [], []
        for i in idx:
            values = rng.standard_normal((BATCH, *t_l[i].shape))
            if t_l[i].is_complex():
                values = values + 1j * rng.standard_normal((BATCH, *t_l[i].shape))
            t_cb.append(torch.tensor(values, dtype=t_l[i].dtype))
            r_cb.append(T.tensor(values, dtype=to_reference_dtype(t_l[i].dtype)))
        k = len(t_b)

        def make(func_mod, f, is_tensor):
            def g(*xs_cts):
                xs, cts = xs_cts[:k], xs_cts[k:]

                def sel(*ys):
                    ls = _leaves(f(*ys), is_tensor)
                    return tuple(ls[i] for i in idx)

                _, fn = func_mod.vjp(sel, *xs)
                return fn(tuple(cts))

            return g

        dims = (0,) * (k + len(idx))
        t_res = _torch_call(
            "torch.func.vmap(vjp)",
            torch.func.vmap(make(torch.func, self.torch_f, _is_torch_tensor), in_dims=dims),
            *t_b,
            *t_cb,
        )
        r_res = _ref_call(
            "vmap(vjp)",
            T.func.vmap(make(T.func, self.ref_f, _is_ref_tensor), in_dims=dims, allow_fallback=False),
            *r_b,
            *r_cb,
        )
        scale = self.scale * 1.1**2 * magnitude(c.numpy() for c in t_cb)
        compare(t_res, r_res, self.n * BATCH, "vmap(vjp) out", zeros_for_none=True, scale=scale)

    def inplace(self):
        import torch

        name = inplace_name(self.op)
        if self.sample.broadcasts_input:
            raise NotApplicable("the sample broadcasts its input (no in-place form)")
        inp = self.sample.input
        if not (_is_torch_tensor(inp) and inp.requires_grad):
            raise NotApplicable("input is not a differentiable tensor")
        _, args, kwargs = self.conv.template
        _, r_args, r_kwargs = self.conv.ref
        t_x = inp.clone()
        r_x = self.conv.ref[0].clone()
        if name == "<lambda>" and self.op.name.startswith("nn.functional."):
            # torch.nn.functional's in-place form: OpInfo wraps ``F.<fn>(x, ..., inplace=True)``
            fn = getattr(T.nn.functional, self.op.name[len("nn.functional.") :], None)
            if fn is None:
                raise Departure(f"inplace: reference has no {self.op.name}")
            t_out = _torch_call("in-place", self.op.inplace_variant, t_x, *args, **kwargs)
            r_out = _ref_call("inplace", lambda: fn(r_x, *r_args, inplace=True, **r_kwargs))
        else:
            if getattr(T.Tensor, name, None) is None:
                raise Departure(f"inplace: reference Tensor has no method {name}")
            t_out = _torch_call("in-place", getattr(t_x, name), *args, **kwargs)
            r_out = _ref_call("inplace", lambda: getattr(r_x, name)(*r_args, **r_kwargs))
        compare(t_out, r_out, self.n, "inplace output", scale=self.scale)
        compare(t_x, r_x, self.n, "inplace written input", scale=self.scale)
        if not t_x.requires_grad:
            return
        rng = _rng(self.key, self.index, "inplace_ct")
        tt, rt = _pair(_random_like(rng, t_x), t_x)
        t_g = torch.autograd.grad([t_x], self.conv.torch_leaves, [tt], allow_unused=True)
        r_g = _ref_call("inplace vjp", T.autograd.grad, [r_x], self.conv.ref_leaves, [rt], allow_unused=True)
        scale = self.scale * magnitude([tt.numpy()])
        compare(t_g, r_g, self.n, "inplace grad", zeros_for_none=True, scale=scale)


def run_check(case, check):
    """``("ok" | "n/a" | "fail", message)`` for one check on one case."""
    try:
        getattr(case, check)()
    except NotApplicable as e:
        return "n/a", str(e)
    except Departure as e:
        return "fail", str(e)
    except Unsupported as e:
        return "n/a", str(e)
    except Exception as e:  # noqa: BLE001 - reference calls are wrapped (Departure): this is torch's side
        return "n/a", f"torch side raises: {type(e).__name__}: {_short(e)}"
    return "ok", ""


def run_entry(key, checks=CHECKS, max_samples=None):
    """Run ``checks`` on the OpInfo ``key``.

    Returns ``{"status": "not implemented", "reason": ...}`` or
    ``{"status": "implemented", "samples": n, "checks": {check: {"ok": n, "n/a": [...], "fail": [...]}}}``
    where the lists hold ``{"sample": i, "input": description, "message": ...}``.
    """
    op = all_entries()[key]
    if not differentiable(op):
        return {"status": "not implemented", "reason": f"no CPU {MODE['dtype']} autograd"}
    missing = None
    try:
        ref_fn = reference_callable(op)
    except Missing as e:
        ref_fn, missing = None, f"missing in reference: {e}"
    except Unsupported as e:
        return {"status": "not implemented", "reason": e.category}
    if missing is not None:  # the category when no sample is expressible, else what is missing
        try:
            for index, sample in enumerate(samples(op, key)):
                Case(op, None, sample, key, index)
                break
        except Unsupported as e:
            return {"status": "not implemented", "reason": e.category}
        return {"status": "not implemented", "reason": missing}
    flags = torch_flags(op)
    results = {c: {"ok": 0, "n/a": [], "fail": []} for c in checks}
    for check in checks:
        if check in flags:
            results[check]["n/a"].append({"sample": "all", "message": flags[check]})
    n_run = 0
    unsupported = []
    for index, sample in enumerate(samples(op, key)):
        if max_samples is not None and n_run >= max_samples:
            break
        try:
            case = Case(op, ref_fn, sample, key, index)
        except Unsupported as e:
            unsupported.append(e.category)
            continue
        except Exception as e:  # noqa: BLE001 - a sample whose conversion fails is a departure
            n_run += 1
            for check in checks:
                results[check]["fail"].append(
                    {
                        "sample": index,
                        "input": describe(sample),
                        "message": f"conversion: {type(e).__name__}: {_short(e)}",
                    }
                )
            continue
        n_run += 1
        if n_run == 1:  # a wrapper calling something the reference lacks: no need to run every sample
            try:
                case.forward()
            except Unsupported as e:  # the op's result dtype has no storage in the reference
                return {"status": "not implemented", "reason": e.category}
            except Departure as e:
                if "AttributeError" in str(e) and "has no attribute" in str(e):
                    detail = str(e).split("AttributeError: ", 1)[1]
                    return {"status": "not implemented", "reason": f"missing in reference: {detail}"}
            except Exception:  # noqa: BLE001 - the checks below report it
                pass
        for check in checks:
            if check in flags:
                continue
            outcome, message = run_check(case, check)
            if outcome == "ok":
                results[check]["ok"] += 1
            else:
                results[check][outcome].append(
                    {"sample": index, "input": describe(sample), "message": message}
                )
    if n_run == 0:
        reason = unsupported[0] if unsupported else f"no {MODE['dtype']} samples"
        return {"status": "not implemented", "reason": reason}
    forward = results.get("forward")
    if forward is not None and not forward["ok"] and forward["fail"]:
        messages = [f["message"] for f in forward["fail"]]
        if all("AttributeError" in m and "has no attribute" in m for m in messages):
            detail = messages[0].split("AttributeError: ", 1)[1]
            return {"status": "not implemented", "reason": f"missing in reference: {detail}"}
    out = {"status": "implemented", "samples": n_run, "checks": results}
    if unsupported:
        out["unsupported_samples"] = {c: unsupported.count(c) for c in sorted(set(unsupported))}
    return out
