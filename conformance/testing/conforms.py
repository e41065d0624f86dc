"""``assert_conforms``: a user's own framework function judged against a reference function.

    import torch, reference as T
    from refgrad.testing import assert_conforms

    def my_gelu(x):                      # the kernel under test (PyTorch, JAX or TensorFlow)
        return 0.5 * x * (1 + torch.erf(x / 2**0.5))

    def gelu_reference(x):               # the same function written with `import reference as T`
        return 0.5 * x * (1 + T.erf(x / 2**0.5))

    assert_conforms(my_gelu, gelu_reference, torch.randn(64, dtype=torch.float32))

Each check (``forward``, ``vjp``, ``jvp``; ``vjp_vjp`` for second order) runs the user's function
on its framework and the reference function in float64 under the error model
(:mod:`reference.errors`), which derives a bound for every element from the dtype's unit
roundoff through every primitive the reference function calls; the verdict is the harness's
(:func:`conformance.tolerance.judge_bounds`, plus one ulp of the expected value, as for op
records). No tolerance is set by hand. A departure raises ``AssertionError`` naming the check,
the element, both values, the bound and its terms, and a reproducer: an ``.npz`` of the exact
inputs and cotangents beside a script that replays the user's function on them.

The cotangents and tangents are drawn from a normal distribution (``seed``), rounded to the
dtype, so both sides see bit-identical data.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np

import reference as T
from conformance.checks import jax_check, reference_check, tf_check, torch_check
from conformance.ops.judge import bound_record
from conformance.tolerance import explain, judge_bounds, with_last_bit
from reference.errors import Precision, bound_of

CHECKS = ("forward", "vjp", "vjp_vjp", "jvp")
_RESULTS: list[dict] | None = None  # set by the pytest plugin (--refgrad-report)


class ConformanceError(AssertionError):
    """What :func:`assert_conforms` raises when a check does not pass (an AssertionError, so pytest
    reports it): a departure (``fail``, ``error_mismatch``), a check that judged no element
    (``refused``: "nothing judged") or a reference function that failed (``reference_error``).
    ``record`` is the check's result record."""

    def __init__(self, message: str, record: dict):
        super().__init__(message)
        self.record = record


class ReturnValueError(TypeError):
    """A function under test or a reference function returned something that is not one tensor of
    its framework (a Python float, a tuple, a NumPy array): the caller's mistake, never a verdict."""


def _describe(value) -> str:
    """A short account of a return value for an error message: its type and a prefix of its repr."""
    text = " ".join(repr(value).split())
    return (
        f"{type(value).__module__}.{type(value).__qualname__} ({text[:80]}{'...' if len(text) > 80 else ''})"
    )


def _is_framework_tensor(value, framework) -> bool:
    if framework == "torch":
        import torch

        return isinstance(value, torch.Tensor)
    if framework == "jax":
        import jax

        return isinstance(value, jax.Array)  # tracers included
    import tensorflow as tf

    return tf.is_tensor(value) or isinstance(value, tf.Variable)


def _checked(fn, framework, label):
    """``fn`` whose return value must be one tensor of ``framework`` (ReturnValueError otherwise)."""

    def call(*xs):
        out = fn(*xs)
        if not _is_framework_tensor(out, framework):
            raise ReturnValueError(
                f"assert_conforms: the function under test {label} returned {_describe(out)}, not a "
                f"{framework} tensor: it must return one {framework} tensor computed from its inputs "
                "(a Python number, a NumPy array or a tuple cannot be differentiated or judged)"
            )
        return out

    return call


def _checked_reference(reference_fn):
    """``reference_fn`` whose return value must be one ``reference`` tensor (ReturnValueError otherwise)."""
    label = getattr(reference_fn, "__qualname__", repr(reference_fn))

    def call(*xs):
        out = reference_fn(*xs)
        if not isinstance(out, T.Tensor):
            raise ReturnValueError(
                f"assert_conforms: the reference function {label} returned {_describe(out)}, not a "
                "reference tensor: it must return one tensor computed with `import reference as T`"
            )
        return out

    return call


# ---- frameworks ----------------------------------------------------------------------------------
def _framework_of(args, framework):
    if framework is not None:
        if framework not in ("torch", "jax", "tensorflow"):
            raise ValueError(f"framework={framework!r}: must be 'torch', 'jax' or 'tensorflow'")
        return framework
    for a in args:
        mod = type(a).__module__
        if mod.startswith("torch"):
            return "torch"
        if mod.startswith(("jax", "jaxlib")):
            return "jax"
        if mod.startswith("tensorflow"):
            return "tensorflow"
    raise ValueError(
        "framework=None: the arguments are not torch, JAX or TensorFlow tensors; pass framework='torch', "
        "'jax' or 'tensorflow' with NumPy arrays"
    )


def _as_numpy(a, dtype):
    if hasattr(a, "detach"):
        a = a.detach().cpu()
        if str(a.dtype) == "torch.bfloat16":
            a = a.float()
        a = a.numpy()
    elif hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        a = a.numpy()
    arr = np.asarray(a)
    return _rounded(arr.astype(np.float64), dtype)


def _rounded(a, dtype):
    """``a`` rounded to ``dtype`` and back to float64 (exact): the data both sides see."""
    import ml_dtypes

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    return np.asarray(a, dtype=np.float64).astype(np_dtype).astype(np.float64)


FLOAT_DTYPES = ("float64", "float32", "float16", "bfloat16")


def _dtype_name(a) -> str:
    return str(getattr(a, "dtype", "")).replace("torch.", "").replace("<dtype: '", "").rstrip("'>")


def _dtype_of(args, dtype):
    """The dtype every input runs in: ``dtype``, else the inputs' one floating dtype.

    Inputs of different floating dtypes with ``dtype=None`` are a ValueError: refgrad never
    changes an input's dtype silently (pass ``dtype=`` to convert them all, which each result
    then records as ``converted_inputs``)."""
    if dtype is not None:
        if dtype not in FLOAT_DTYPES:
            raise ValueError(f"dtype={dtype!r}: must be float64, float32, float16 or bfloat16")
        return dtype
    found = {i: _dtype_name(a) for i, a in enumerate(args) if _dtype_name(a) in FLOAT_DTYPES}
    if len(set(found.values())) > 1:
        which = ", ".join(f"input {i} is {name}" for i, name in found.items())
        raise ValueError(
            f"dtype=None: the inputs have different floating-point dtypes ({which}); refgrad does not "
            "promote them silently: pass inputs of one dtype, or dtype=... to run all of them in that dtype"
        )
    if found:
        return next(iter(found.values()))
    raise ValueError("dtype=None: no floating-point argument to take the dtype from; pass dtype=...")


def _named(arrays, extra):
    """The inputs' names (``"0"``, ``"1"``, ...: the check programs' ``grad_0``, ``gg_0``,
    ``tangent_0``) and the arrays by name, as :mod:`conformance.checks` reads them."""
    names = [str(i) for i in range(len(arrays))]
    return names, {**dict(zip(names, arrays)), **extra}


def _run_framework(framework, fn, check, arrays, extra, dtype):
    """The user's function on its framework (:mod:`conformance.checks`' program of the check, every
    input differentiated; JAX op by op, not under jax.jit): a list of float64 arrays, one per result."""
    names, a = _named(arrays, extra)
    if framework == "torch":
        import torch

        tdt = getattr(torch, dtype)

        def t(x, grad=False):
            return torch.tensor(x, dtype=tdt).requires_grad_(grad)

        out = torch_check(torch, check, fn, names, names, None, a, t)
        return [
            o.detach().float().numpy().astype(np.float64)
            if o.dtype == torch.bfloat16
            else o.detach().numpy().astype(np.float64)
            for o in (out[k] for k in _names(check, len(names)))
        ]
    if framework == "jax":
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jdt = getattr(jnp, dtype)

        def arr(x):
            return jnp.asarray(x, dtype=jdt)

        out = jax_check(jax, check, fn, names, names, None, a, arr, jax.vjp, lambda program: program)
        return [np.asarray(out[k], dtype=np.float64) for k in _names(check, len(names))]
    import tensorflow as tf

    tdt = getattr(tf, dtype)

    def c(x):
        return tf.constant(x, dtype=tdt)

    out = tf_check(tf, check, fn, names, names, None, a, c)
    return [np.asarray(tf.cast(out[k], tf.float64)) for k in _names(check, len(names))]


def _names(check, n):
    return {
        "forward": ["output"],
        "vjp": [f"grad_{i}" for i in range(n)],
        "vjp_vjp": ["g_grad_output"] + [f"g_{i}" for i in range(n)],
        "jvp": ["tangent_output"],
    }[check]


# ---- the public function ---------------------------------------------------------------------------
def assert_conforms(
    fn,
    reference_fn,
    *args,
    checks=("forward", "vjp", "jvp"),
    dtype=None,
    framework=None,
    seed=0,
    name=None,
):
    """Judge ``fn`` (PyTorch, JAX or TensorFlow) against ``reference_fn`` (``import reference as T``).

    ``args``: the inputs (framework tensors, or NumPy arrays with ``framework=``); every input is
    differentiated, in one dtype (``dtype=``, else the inputs' own: inputs of different floating
    dtypes are a ValueError unless ``dtype=`` says which to convert them to). ``fn`` returns one
    tensor of its framework and ``reference_fn`` one reference tensor (a ``TypeError`` naming the
    return value otherwise). Returns the list of result records (one per check); raises
    :class:`ConformanceError` (an AssertionError) on the first check that does not pass: a
    departure, a check that judged no element (``refused``, "nothing judged"), or a failure of the
    reference function (``reference_error``, never blamed on the framework).
    """
    unknown = [c for c in checks if c not in CHECKS]
    if unknown or not checks:
        raise ValueError(f"checks={checks!r}: each must be one of {', '.join(CHECKS)}")
    if not args:
        raise ValueError("assert_conforms: no inputs given (pass the inputs after the two functions)")
    framework = _framework_of(args, framework)
    dtype = _dtype_of(args, dtype)
    arrays = [_as_numpy(a, dtype) for a in args]
    label = name or getattr(fn, "__qualname__", repr(fn))
    precision = Precision(
        dtype=dtype,
        accumulate="float32" if framework == "torch" and dtype in ("float16", "bfloat16") else None,
    )
    converted = {
        f"input{i}": _dtype_name(a) for i, a in enumerate(args) if _dtype_name(a) and _dtype_name(a) != dtype
    }
    checked_fn = _checked(fn, framework, label)
    checked_reference = _checked_reference(reference_fn)
    config = f"{label}({', '.join(str(list(a.shape)) for a in arrays)}) {dtype}"
    records = []

    def record(check, judged, used, extra):
        rec = {
            "case_id": f"{label}-{_digest(arrays, extra)}",
            "framework": framework,
            "version": _version(framework),
            "check": check,
            "dtype": dtype,
            "verdict": judged["verdict"],
            "phase": "assert_conforms",
            "config": config,
            "max_ratio": judged.get("max_ratio"),
            "worst": judged.get("worst"),
            "bound": bound_record(precision, used),
            "case": {
                "op": label,
                "params": {},
                "shapes": {f"input{i}": list(a.shape) for i, a in enumerate(arrays)},
                "dtype": dtype,
                "seed": seed,
                "checks": list(checks),
            },
        }
        if converted:  # dtype= given: the inputs it converted, stated in every result
            rec["converted_inputs"] = {k: f"{v} -> {dtype}" for k, v in converted.items()}
        if judged["verdict"] != "pass":
            rec["reason"] = judged.get("reason") or explain(judged, f"{framework} {check} {config}")
        records.append(rec)
        if _RESULTS is not None:
            _RESULTS.append(rec)
        return rec

    def reference_side(program, inputs, check, extra):
        """The reference's values and bounds; a failure of the reference is its own verdict."""
        try:
            with np.errstate(all="ignore"):
                return bound_of(program, inputs, precision)
        except ReturnValueError:
            raise
        except Exception as exc:  # noqa: BLE001 - the reference function (the caller's code) failed
            what = "its forward computation" if check == "forward" else f"the {check} check"
            rec = record(
                check,
                {
                    "verdict": "reference_error",
                    "reason": f"the reference function raised {type(exc).__name__} in {what}: {exc}",
                },
                None,
                extra,
            )
            raise ConformanceError(
                f"reference_error: {framework} {check} of {config}: {rec['reason']} (the reference "
                f"function {getattr(reference_fn, '__qualname__', reference_fn)!r} failed, not {framework})",
                rec,
            ) from exc

    rng = np.random.default_rng(seed)
    # the forward check's values, and the output's shape
    forward = reference_side(checked_reference, arrays, "forward" if "forward" in checks else checks[0], {})
    out_shape = np.shape(forward[0][0])
    extra = {"grad_output": _rounded(rng.standard_normal(out_shape), dtype)}
    for i, a in enumerate(arrays):
        extra[f"gg_{i}"] = _rounded(rng.standard_normal(a.shape), dtype)
        extra[f"tangent_{i}"] = _rounded(rng.standard_normal(a.shape), dtype)
    n = len(arrays)
    input_names, named = _named(arrays, extra)
    for check in checks:
        if check == "forward":
            values, bounds, tracker = forward
        else:  # the check's program on the reference (conformance.checks), every input differentiated
            program, reads, _ = reference_check(T, check, checked_reference, input_names, input_names)
            values, bounds, tracker = reference_side(program, [named[k] for k in reads], check, extra)
        names = _names(check, n)
        expected = {nm: (v, with_last_bit(v, b, dtype)) for nm, v, b in zip(names, values, bounds) if v is not None}
        try:
            observed = dict(zip(names, _run_framework(framework, checked_fn, check, arrays, extra, dtype)))
        except ReturnValueError:
            raise  # the caller's mistake, not a verdict on the framework
        except Exception as exc:  # the user's function raised where the reference did not
            judged = {
                "verdict": "error_mismatch",
                "max_ratio": None,
                "worst": None,
                "reason": f"{framework} raised {type(exc).__name__}: {exc}",
            }
        else:
            judged = judge_bounds(observed, expected, dtype)
            if judged["verdict"] == "pass" and not _judged_elements(expected):
                judged = {
                    **judged,
                    "verdict": "refused",
                    "reason": "nothing judged: " + _nothing_judged(expected, dtype),
                }
        rec = record(check, judged, tracker.used, extra)
        if judged["verdict"] == "refused":
            detail = rec["reason"].removeprefix("nothing judged: ")
            raise ConformanceError(f"nothing judged: {framework} {check} of {config}: {detail}", rec)
        if judged["verdict"] != "pass":
            raise ConformanceError(_message(rec, fn, arrays, extra, framework, dtype), rec)
    return records


def _judged_elements(expected) -> int:
    """Elements a check compares numerically: a finite reference value with a finite bound."""
    total = 0
    for value, bound in expected.values():
        value = np.asarray(value, dtype=np.float64)
        bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), value.shape)
        total += int((np.isfinite(value) & np.isfinite(bound)).sum())
    return total


def _nothing_judged(expected, dtype) -> str:
    sizes = sum(np.size(v) for v, _ in expected.values())
    return (
        f"none of the {sizes} elements could be compared (each reference value is "
        f"non-finite, or past {dtype}'s range so that any value passes); choose inputs whose results "
        f"are finite and representable in {dtype}"
    )


def _digest(arrays, extra) -> str:
    h = hashlib.blake2b(digest_size=6)
    for a in [*arrays, *(extra[k] for k in sorted(extra))]:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _version(framework):
    import importlib

    try:
        return importlib.import_module(framework).__version__
    except Exception:  # noqa: BLE001 - the version is information, never a reason to fail
        return None


def _message(rec, fn, arrays, extra, framework, dtype) -> str:
    w = rec.get("worst") or {}
    lines = [
        f"{rec['verdict']}: {rec['framework']} {rec['check']} of {rec['config']}: {rec.get('reason', '')}"
    ]
    if w:
        index = ",".join(str(i) for i in w.get("index", []))
        lines.append(
            f"  element {w.get('output')}[{index}]: {framework} {w.get('observed')!r}, reference "
            f"{w.get('expected')!r}, |diff| = {abs(w.get('observed', 0) - w.get('expected', 0))!r} > bound "
            f"{w.get('bound')!r} (ratio {w.get('ratio')!r})"
        )
    terms = {k: v for k, v in rec["bound"].items() if k not in ("formula", "ops")}
    lines.append(f"  bound: {rec['bound']['formula']}; terms {json.dumps(terms, default=str)}")
    if rec["bound"].get("ops"):
        lines.append(f"  modelled primitives: {', '.join(sorted(rec['bound']['ops']))}")
    lines.append("  reproducer: " + _reproducer(fn, arrays, extra, framework, dtype, rec))
    return "\n".join(lines)


def _reproducer(fn, arrays, extra, framework, dtype, rec) -> str:
    """An .npz of the exact data and a script beside it that replays the user's function."""
    where = Path(os.environ.get("REFGRAD_REPRO_DIR") or tempfile.gettempdir()) / "refgrad-reproducers"
    where.mkdir(parents=True, exist_ok=True)
    stem = f"{rec['case_id']}-{rec['check']}".replace("/", "_").replace("<", "_").replace(">", "_")
    npz = where / f"{stem}.npz"
    np.savez(npz, **{f"input{i}": a for i, a in enumerate(arrays)}, **extra)
    module = getattr(fn, "__module__", None) or "__main__"
    qual = getattr(fn, "__qualname__", "?")
    importable = module != "__main__" and "<" not in qual
    name = getattr(fn, "__name__", None)
    if inspect.isbuiltin(fn) and name and getattr(sys.modules.get(module), name, None) is fn:
        load = f"from {module} import {name} as fn\n"  # a builtin (torch.sin): no source, its module's name
    elif importable and not inspect.isbuiltin(fn):  # the function under test, imported from where it lives
        file = inspect.getsourcefile(fn) or ""
        root = Path(file).resolve().parents[module.count(".")] if file else Path.cwd()
        load = f"sys.path.insert(0, {str(root)!r})\nfrom {module} import {qual.split('.')[0]} as _owner\n"
        load += f"fn = _owner{''.join('.' + p for p in qual.split('.')[1:])}\n"
    else:
        try:
            load = textwrap.dedent(inspect.getsource(fn)) + f"\nfn = {qual.split('.')[-1]}\n"
        except (OSError, TypeError):
            load = "fn = ...  # the function under test: paste it here\n"
    w = rec.get("worst") or {}
    script = where / f"{stem}.py"
    script.write_text(
        f'"""refgrad assert_conforms reproducer: {rec["verdict"]} of {rec["check"]} ({framework}, {dtype}).\n\n'
        f'{rec.get("reason", "")}\n"""\n'
        "import sys\n\nimport numpy as np\n\n"
        "from conformance.testing.conforms import run_check\n\n"
        f"{load}\n"
        f"data = dict(np.load({str(npz)!r}))\n"
        f"inputs = [data.pop(f'input{{i}}') for i in range({len(arrays)})]\n"
        f"results = run_check({framework!r}, fn, {rec['check']!r}, inputs, data, {dtype!r})\n"
        f"names = {_names(rec['check'], len(arrays))!r}\n"
        "for name, value in zip(names, results):\n"
        "    print(name, value)\n"
        + (
            f"print('worst element', {w.get('output')!r}, {tuple(w.get('index', []))!r}, '=', "
            f"dict(zip(names, results))[{w.get('output')!r}][{tuple(w.get('index', []))!r}], "
            f"'(reference {w.get('expected')!r}, bound {w.get('bound')!r})')\n"
            if w
            else ""
        )
    )
    return f"{script} (data: {npz})"


def run_check(framework, fn, check, inputs, extra, dtype):
    """One check of ``fn`` on its framework (what a reproducer replays): float64 arrays."""
    return _run_framework(framework, fn, check, [np.asarray(a) for a in inputs], extra, dtype)
