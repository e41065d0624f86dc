"""Standalone reproducer scripts: one result → one Python file that needs only NumPy and the framework.

The script reads top to bottom like a bug report:

1. the case (its JSON), the check, the bound the harness used (``u`` and ``K`` per output);
2. ``main()``: the inputs, regenerated exactly as the harness made them (one seeded NumPy
   stream per array name, rounded to the case's dtype) or taken from the case's explicit
   ``data``; the framework's run; the comparison;
3. the expected values in float64: :mod:`conformance.repro_oracle` (a direct convolution in
   plain NumPy and its adjoints), copied in verbatim;
4. the framework run exactly as the adapter ran it: the adapter's own module sources (and the
   helper functions they import from ``conformance``) copied in, ``conformance`` imports removed.

It prints the worst element and exits 1 when the departure is present (an element outside its
bound, a wrong shape, the framework raising on a valid configuration or accepting one the
reference rejects), 0 otherwise.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import textwrap
from functools import singledispatch
from pathlib import Path

from conformance import case as case_module  # the helpers a conv reproducer copies by source
from conformance import repro_oracle
from conformance.adapters import _geometry, base, load_class
from conformance.amp import low_dtype
from conformance.case import Case, ProgramCase, RecordCase, array_shapes, case_type
from conformance.identity import safe_file_part
from conformance.programs import (
    AUTOGRAD_ERRORS,
    MULTI_OUTPUT_VIEW_ERROR,
    autocast_source,
    in_case_dtype,
    prefix_case,
    program_expected,
    program_inputs,
    program_precision,
    reference_bounds,
    reference_outcome,
)
from conformance.record_reproducer import record_reproducer
from conformance.safe_text import docstring_safe as _docstring_safe

# functions of conformance.case the script needs for its data (and adapters may import)
_CASE_HELPERS = ("round_to_dtype", "_round_mantissa")


# the modules of the other case formats (op records, programs): what a framework's adapter module
# imports from them serves those cases only, so a convolution's script names it without its code
_OTHER_FORMATS = ("conformance.ops", "conformance.functional", "conformance.programs")


def _strip_module(source: str) -> tuple[str, list[tuple[str, str]]]:
    """The source without ``from __future__`` and ``conformance`` imports; those imports' (module, name)."""
    tree = ast.parse(source)
    drop, imported = set(), []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (
            node.module == "__future__" or (node.module or "").split(".")[0] == "conformance"
        ):
            drop.update(range(node.lineno, node.end_lineno + 1))
            if node.module != "__future__":
                imported += [(node.module, alias.name) for alias in node.names]
    lines = source.splitlines()
    return "\n".join(line for i, line in enumerate(lines, 1) if i not in drop), imported


def _framework_sources(adapter_spec: str) -> str:
    """The modules that define the adapter class (base classes first), made standalone."""
    cls = load_class(adapter_spec)
    modules = [_geometry, base]
    for klass in reversed(cls.__mro__):
        module = inspect.getmodule(klass)
        if klass is object or module is None or module in modules:
            continue
        modules.append(module)
    defined = set(_CASE_HELPERS)
    parts, extra = [], []
    for module in modules:
        text, imported = _strip_module(inspect.getsource(module))
        parts.append(f"# ---- {module.__name__} " + "-" * max(0, 80 - len(module.__name__)) + "\n" + text)
        defined.update(n.name for n in ast.parse(text).body if isinstance(n, (ast.FunctionDef, ast.ClassDef)))
        defined.update(
            t.id
            for n in ast.parse(text).body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        )
        for mod, name in imported:
            if name in defined:
                continue
            if module not in (_geometry, base) and mod.startswith(_OTHER_FORMATS):
                extra.append(f"{name} = None  # {mod}.{name}: a convolution case never reaches it")
            else:
                extra.append(_copied(mod, name, getattr(importlib.import_module(mod), name)))
            defined.add(name)
    return "\n\n".join(extra + parts)


def _copied(module: str, name: str, value) -> str:
    """A name an adapter module imports from the harness, written into the script: a function's or
    class's source, a literal constant's value, or (a table such as the op records, which a
    convolution case never reads) a line saying it was left out."""
    if inspect.isfunction(value) or inspect.isclass(value):
        return textwrap.dedent(inspect.getsource(value))
    if isinstance(value, (str, int, float, bool, tuple)) and ast.literal_eval(repr(value)) == value:
        return f"{name} = {value!r}  # {module}.{name}"
    return f"{name} = None  # {module}.{name} ({type(value).__name__}): not copied, a convolution case never reads it"


_MAIN = '''
# ---- the run (the helpers it calls follow below) -------------------------------------------
class Params:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class Case:
    """What the adapter sees of the harness's case (channels-first shapes, normalised params)."""

    kind = "conv"  # the harness's ConvCase: a convolution

    def __init__(self, raw, params):
        self.id, self.op, self.params, self.dtype, self.seed = CASE_ID, raw["op"], params, raw["dtype"], raw["seed"]
        self.shapes = {k: tuple(v) for k, v in raw["shapes"].items()}
        self.checks = (CHECK,)
        self.vmap_size, self.vmap_over = raw["vmap"]["size"], tuple(raw["vmap"]["over"])
        self.data = raw.get("data", {})


class Arrays(dict):
    """The inputs by name, as the harness made them: seeded stream per name, rounded to the dtype."""

    def __init__(self, case):
        super().__init__()
        self.case = case

    def __missing__(self, name):
        case = self.case
        if name in ("bias", "tangent_bias", "gg_bias") and not case.params.bias:
            value = None
        elif name in case.data:
            value = round_to_dtype(np.asarray(case.data[name], dtype=np.float64), case.dtype)
        else:
            rng = np.random.default_rng([case.seed, zlib.crc32(name.encode())])
            value = round_to_dtype(rng.standard_normal(SHAPES[name]), case.dtype)
        self[name] = value
        return value


def main():
    case = Case(json.loads(CASE_JSON), Params(**PARAMS))
    a = Arrays(case)
    adapter = ADAPTER()
    settings = adapter.setup(device=DEVICE, precision=PRECISION)
    print(f"{FRAMEWORK} {adapter.version()} ({settings}); {CHECK} of {DESCRIPTION}")
    why = adapter.why_unsupported(case, CHECK)
    if why:
        print(f"unsupported: {why}")
        return 0
    try:
        out = adapter.run(case, CHECK, a)
    except Exception as exc:
        if REFERENCE_REJECTS:
            print(f"both reject: {type(exc).__name__}: {exc}")
            return 0
        print(f"DEPARTURE: {FRAMEWORK} raised {type(exc).__name__} on a valid configuration: {exc}")
        return 1
    if REFERENCE_REJECTS:
        print(f"DEPARTURE: {FRAMEWORK} accepted a configuration that breaks a rule: {REFERENCE_REJECTS}")
        return 1
    if CHECK == "error":
        print("both accept")
        return 0
    observed = {k: None if v is None else np.asarray(_numpy(v), dtype=np.float64) for k, v in (out or {}).items()}
    failed, lines = judge(case, CHECK, a, observed, BOUND_U, BOUND_K)
    print("\\n".join(lines))
    bound = "|obs - exp| <= K*u*M + u*|exp|, M = the same op on |inputs|"
    if failed:
        print(f"DEPARTURE: an output is missing, has the wrong shape, or has elements outside the bound {bound}")
    else:
        print(f"no departure: every element is within the bound {bound}")
    return 1 if failed else 0


def _numpy(v):
    return v.numpy() if hasattr(v, "numpy") and not isinstance(v, np.ndarray) else v

'''


def _oracle_source() -> str:
    text, _ = _strip_module(inspect.getsource(repro_oracle))
    return text


def reproducer(record: dict, adapter_spec: str, device: str = "cpu", precision: str = "highest") -> str:
    """The text of a standalone script that re-runs ``record``'s case and check on its framework:
    the writer of its case's format, the type of its op (:func:`conformance.case.case_type`)."""
    write = _reproducer_of.dispatch(case_type((record.get("case") or {}).get("op")))
    return write(record, adapter_spec, device, precision)


# one writer per case type (conformance.case imports nothing of the reproducers)
@singledispatch
def _reproducer_of(record: dict, adapter_spec: str, device: str, precision: str) -> str:
    """A convolution's: the adapter's code and the reference's oracle, copied by source."""
    case = Case.from_dict(record["case"], source=record["case_id"])
    check, framework = record["check"], record["framework"]
    bound = record.get("bound") or {}
    p = case.params
    params = {
        "rank": p.rank,
        "stride": p.stride,
        "padding": p.padding,
        "dilation": p.dilation,
        "groups": p.groups,
        "transposed": p.transposed,
        "output_padding": p.output_padding,
        "bias": p.bias,
        "layout": p.layout,
    }
    rejects = case.rejects()  # (conformance.expected.reference_rejects)
    shapes = {k: tuple(v) for k, v in array_shapes(case).items()}
    replay = f"conformance replay CASE.json --frameworks {framework} --checks {check}"
    header = f'''#!/usr/bin/env python3
"""Reproducer: {_docstring_safe(framework)} {_docstring_safe(check)} on {_docstring_safe(case.describe())}

Generated by refgrad's conformance harness; needs only NumPy and {framework}. The harness saw:
    {record.get("verdict")}: {_docstring_safe(record.get("reason") or "")}
Run:  python THIS_FILE.py      (exit 1: the departure is present; 0: it is gone)
With refgrad installed: save the CASE_JSON below as CASE.json, then  {replay}
"""
from __future__ import annotations

import json
import sys
import zlib

import numpy as np

inf, nan = float("inf"), float("nan")  # the names repr() gives non-finite parameters
FRAMEWORK = {framework!r}
CHECK = {check!r}
DEVICE, PRECISION = {device!r}, {precision!r}
CASE_ID = {case.id!r}
DESCRIPTION = {case.describe()!r}
# the case as data: a Python string literal (repr) of its JSON, which no text in the case can break
CASE_JSON = {_compact_json(case.to_dict())!r}
PARAMS = {params!r}
SHAPES = {shapes!r}
# the error bound: an element fails when |obs - exp| > K*u*M + u*|exp|, M = the same op on |inputs|
BOUND_U = {bound.get("u", 0.0)!r}
BOUND_K = {bound.get("K", {})!r}
# the reference's verdict on the configuration (None: valid)
REFERENCE_REJECTS = {rejects!r}
'''
    cls = load_class(adapter_spec)
    parts = [
        header,
        _MAIN.strip("\n"),
        "# ---- data: rounding to the case's dtype (from conformance.case) " + "-" * 28,
        f"PART_DTYPE = {case_module.PART_DTYPE!r}  # a complex dtype's parts (round_to_dtype reads it)\n\n"
        + "\n\n".join(textwrap.dedent(inspect.getsource(getattr(case_module, n))) for n in _CASE_HELPERS),
        "# ---- expected values: conformance/repro_oracle.py " + "-" * 42,
        _oracle_source(),
        "# ---- the framework, run exactly as the harness's adapter runs it " + "-" * 26,
        _framework_sources(adapter_spec),
        f'ADAPTER = {cls.__name__}\n\nif __name__ == "__main__":\n    sys.exit(main())\n',
    ]
    return "\n\n".join(parts)


@_reproducer_of.register(ProgramCase)
def _(record: dict, adapter_spec: str, device: str, precision: str) -> str:
    """A program's: its text run in the framework's namespace (:func:`program_reproducer`)."""
    cls = load_class(adapter_spec)
    return program_reproducer(
        record, getattr(cls, "program_namespace", None), getattr(cls, "program_backend", None)
    )


_reproducer_of.register(RecordCase, record_reproducer)  # an op record's: conformance.record_reproducer


def _compact_json(d: dict) -> str:
    """One line per top-level key: short enough to read, exact to parse."""
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in d.items()) + "\n}"


def write_reproducer(record: dict, adapter_spec: str, directory, device="cpu", precision="highest") -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = safe_file_part(f"{record['check']}-{record['framework']}-{record['case_id']}", 150)
    path = directory / f"{name}.py"
    path.write_text(reproducer(record, adapter_spec, device, precision))
    return path


# ---- program cases: the reproducer is the program's own text ------------------------------------
_PROGRAM_MAIN = '''
def outcome(T):
    """Run prog with namespace T on the inputs; the outputs by name, or the error and its line."""
    leaves = [T.tensor(np.array(INPUTS[n], dtype=np.float64), dtype=getattr(T, DTYPE), requires_grad=True) for n in INPUTS]
    try:
        result = prog(T, *leaves)
    except Exception as exc:
        tb, line = exc.__traceback__, None
        while tb is not None:
            line = tb.tb_lineno if tb.tb_frame.f_code.co_name == "prog" else line
            tb = tb.tb_next
        return {"error": {"type": type(exc).__name__, "line": line - PROG_FIRST_LINE + 1, "message": str(exc)}}
    items = result if isinstance(result, (list, tuple)) else [result]
    out = {f"result[{i}]": r for i, r in enumerate(items)}
    out.update({f"grad[v{i}]": t.grad for i, t in enumerate(leaves)})

    def as_numpy(t):
        if t is None:
            return None
        t = t.detach()
        if str(t.dtype).endswith(("bfloat16", "float16")):  # NumPy has no bfloat16: widen (exactly)
            t = t.double()
        return np.array(t.numpy(force=True), dtype=np.float64)

    return {"outputs": {k: as_numpy(v) for k, v in out.items()}}


def functional_outcome():
    """The program functionalised by refgrad's reference and run by FRAMEWORK (needs refgrad importable)."""
    import conformance.functional as functional
    from conformance.case import Case
    case = Case.from_dict(json.loads(CASE_JSON))
    arrays = {n: np.array(v, dtype=np.float64) for n, v in INPUTS.items()}
    as_numpy = lambda t: None if t is None else np.asarray(t, dtype=np.float64)
    try:
        backend = getattr(functional, FUNCTIONAL)(case.dtype, case.amp)  # (amp: a mixed-precision policy)
        return {"outputs": functional.run_functional(backend, case, arrays, as_numpy)}
    except ProgramError as exc:
        return {"error": {"type": exc.type_name, "line": exc.line, "message": exc.message}}


def masked(message):
    """A message as compared: under a mixed-precision policy the tensor type it names is masked (the
    reference names the variables' dtype, the framework the dtype the policy gave the tensor)."""
    import re

    return re.sub(r"\\[(?:torch\\.\\w+|CPU\\w+Type) \\[", "[<tensor> [", message) if MASK_TYPE_NAMES else message


def main():
    import importlib

    got = functional_outcome() if FUNCTIONAL else outcome(importlib.import_module(FRAMEWORK))
    departs = []
    if "error" in EXPECTED or "error" in got:
        mine, theirs = EXPECTED.get("error"), got.get("error")
        if (mine is None) != (theirs is None) or mine["line"] != theirs["line"]:
            departs.append(f"{FRAMEWORK}: {theirs or 'no error'}; the reference: {mine or 'no error'}")
        elif any(k in theirs["message"] for k in KNOWN_MESSAGES) and masked(mine["message"]) != masked(theirs["message"]):
            departs.append(f"{FRAMEWORK} says {theirs['message']!r}; the reference says {mine['message']!r}")
    else:
        for name, exp in EXPECTED["outputs"].items():
            obs = got["outputs"].get(name)
            if (exp is None) != (obs is None):
                departs.append(f"{name} is {'None' if obs is None else 'set'} in {FRAMEWORK}, not in the reference")
                continue
            if exp is None:
                continue
            exp = np.array(exp, dtype=np.float64)
            if obs.shape != exp.shape:
                departs.append(f"{name} has shape {obs.shape}, the reference's is {exp.shape}")
                continue
            # NaN against NaN and same-sign infinities agree; a non-finite value on one side only departs
            bound = np.array(BOUNDS[name], dtype=np.float64)
            agree = (np.isnan(obs) & np.isnan(exp)) | (np.isinf(obs) & np.isinf(exp) & (np.sign(obs) == np.sign(exp)))
            # past the dtype's range the bound is infinite: any value (inf included) is within it
            agree |= np.isinf(bound) & np.isfinite(exp)
            one_sided = (~np.isfinite(obs) | ~np.isfinite(exp)) & ~agree
            if one_sided.any():
                i = np.unravel_index(np.argmax(one_sided), exp.shape)
                departs.append(f"non-finite on one side: {name}{list(i)}={obs[i]!r} but the reference says {exp[i]!r}")
                continue
            err = np.abs(np.where(agree, 0.0, obs - exp))
            bad = err > np.where(agree, np.inf, bound)
            if bad.any():
                i = np.unravel_index(np.argmax(err), exp.shape)
                departs.append(f"{name}{list(i)}={obs[i]!r} but the reference says {exp[i]!r}")
    print("\\n".join(departs) or f"{FRAMEWORK} agrees with the reference")
    return 1 if departs else 0
'''


def _settings_of(bound: dict) -> dict:
    """The framework settings a program record's bound was derived for (its accumulator, flush)."""
    acc = bound.get("accumulator")
    return {
        "accumulation": acc if acc and acc != bound.get("dtype") else None,
        "flush_denormal": bound.get("underflow") == "flush-to-zero",
        "tf32": bool(bound.get("tf32")),
    }


def program_reproducer(record: dict, namespace: str | None = None, backend: str | None = None) -> str:
    """A standalone script: the program text verbatim, its inputs, the reference's outcome, a check."""
    case = Case.from_dict(record["case"], source=record["case_id"])
    framework = record["framework"]
    namespace = namespace or framework  # the module the program runs with as T
    status, value = reference_outcome(case)
    if backend and status == "raises" and prefix_case(case, value):
        # JAX/TensorFlow were judged on the program up to the statement that raises: reproduce that
        case = prefix_case(case, value)
        status, value = reference_outcome(case)
    if status == "raises":
        message = in_case_dtype(value.message, case.dtype)
        expected = {"error": {"type": value.type_name, "line": value.line, "message": message}}
    else:
        expected = {"outputs": {k: None if v is None else v.tolist() for k, v in value.items()}}
    bounds = {}
    if status == "ok":
        precision = program_precision(case, framework, _settings_of(record.get("bound") or {}))
        (derived,) = reference_bounds(case, [precision])
        expected_values = {n: v for n, v in value.items() if v is not None}
        bounds = {n: b.tolist() for n, (_, b) in program_expected(case, expected_values, derived).items()}
    inputs = {k: v.tolist() for k, v in program_inputs(case).items()}
    source = case.source
    if case.amp and not backend:  # PyTorch: the forward under torch.autocast, as the harness ran it
        source, inserted = autocast_source(case.source, low_dtype(case.amp))
        if "error" in expected and expected["error"]["line"] and expected["error"]["line"] >= inserted:
            expected["error"]["line"] += 1  # (a line of this text: the ``with`` line is inserted above it)
    header = f'''#!/usr/bin/env python3
"""Reproducer: {_docstring_safe(framework)} runs the program below; refgrad's reference disagrees.

Generated by refgrad's conformance harness; needs only NumPy and {framework}. The harness saw:
    {record.get("verdict")}: {_docstring_safe(record.get("reason") or "")}
Run:  python THIS_FILE.py      (exit 1: the departure is present; 0: it is gone)
The same text runs on the reference:  prog(reference, *inputs)  with refgrad importable.
"""
from __future__ import annotations

import json
import sys

import numpy as np

FRAMEWORK = {namespace!r}  # the program runs with T = this module
# set for JAX/TensorFlow: the program is functionalised by refgrad's reference (refgrad must be importable)
FUNCTIONAL = {backend!r}
'''
    data = f"""
# the case, inputs and expected outcome travel as data: string literals (repr) of their JSON
CASE_JSON = {json.dumps(case.to_dict())!r}
PROG_FIRST_LINE = prog.__code__.co_firstlineno
INPUTS = json.loads({json.dumps(inputs)!r})
# the reference's outcome on these inputs (float64): every output, or the error and its program line
EXPECTED = json.loads({json.dumps(expected)!r})
# the inputs' dtype (every intermediate is computed in it)
DTYPE = {case.dtype!r}
# the derived program bound (docs/conformance.md, "Program cases"), per element: an element departs
# when |obs - exp| > its bound (the error tracker's, plus one ulp of the expected value in DTYPE)
BOUNDS = json.loads({json.dumps(bounds)!r})
KNOWN_MESSAGES = {AUTOGRAD_ERRORS + (MULTI_OUTPUT_VIEW_ERROR,)!r}
# a mixed-precision case ({case.amp or "none"}): autograd messages are compared with the tensor type name masked
MASK_TYPE_NAMES = {bool(case.amp)!r}
"""
    return "\n".join(
        [
            header,
            "# ---- the program, exactly as the harness ran it",
            source,
            data,
            _PROGRAM_MAIN,
            'if __name__ == "__main__":\n    sys.exit(main())\n',
        ]
    )
