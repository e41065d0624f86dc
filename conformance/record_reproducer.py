"""Standalone reproducers of op-record discrepancies (issues #12, #19): NumPy and the framework only.

The script reads top to bottom like a bug report:

1. a header (framework, execution mode, check, op, dtype, the harness's verdict and reason, how to
   replay it with refgrad);
2. the data, exact: every array the check read (inputs, cotangents, tangents) as base64 of its
   float64 bytes with its shape (each value is exact in the case's dtype); the EXPECTED values
   computed by refgrad's float64 reference and the per-element BOUND the harness judged with
   (its terms named), embedded as data: the reference is the oracle, nothing recomputes it;
3. the op exactly as the adapter spells it: the record's lambda, its source taken from the
   record's module (or the adapter's own spelling, e.g. a planted bug), with the module-level
   helpers it references;
4. the check's program in plain framework code as the adapter runs it (``torch.autograd.grad`` /
   ``torch.func``, ``jax.vjp``/``jvp``/``vmap`` under ``jax.jit``, ``tf.GradientTape`` /
   ``ForwardAccumulator`` / ``vectorized_map``, under ``tf.function`` in its modes);
5. the element-wise comparison: the worst element (index, observed, expected, bound); exit 1 when
   the departure is present, 0 when it is gone. The error check exits 1 when the framework accepts
   what the reference rejects or rejects what it accepts.

An adapter whose record programs are its own (it overrides ``run_record``, not just the spelling)
cannot be copied faithfully: :func:`record_reproducer` raises :class:`CannotReproduce`, and the
report says so in the discrepancy.
"""

from __future__ import annotations

import ast
import base64
import dis
import inspect
import json
import textwrap
import types

import numpy as np

from conformance.adapters import load_class
from conformance.case import PART_DTYPE, Case, arrays_for, case_data
from conformance.checks import (
    ORDER_RUN,
    JaxFunc,
    TfFunc,
    jax_check,
    order_check,
    tf_check,
    torch_check,
    torch_convention_vjp,
)
from conformance.ops import RECORDS, VMAP_CHECKS, op_params, vmap_spec
from conformance.ops._run import order_names
from conformance.ops.judge import expected_for, precision_for, ulp_of
from conformance.safe_text import docstring_safe as _docstring_safe
from conformance.tolerance import known
from reference.errors import Precision

#: adapter methods that decide how a record's check runs: a class outside conformance.adapters
#: that overrides one of these changes the program, which a reproducer cannot copy
_PROGRAM_METHODS = ("run", "run_record", "_run_tf", "_compile", "_function", "_call", "_compiled")


class CannotReproduce(Exception):
    """The reproducer cannot carry what the adapter does (the reason is the message)."""


# ---- the spelling's source -----------------------------------------------------------------------


def _code_key(code: types.CodeType) -> tuple:
    """What identifies compiled code across two compilations of the same text: nested code objects
    (a lambda inside the lambda) by their own key, not by their repr, which holds their address."""
    consts = tuple(_code_key(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts)
    return (_instructions(code), code.co_names, code.co_varnames, consts)


#: opcodes the compiler picks between by the source's layout, not its meaning: CPython 3.11 loads
#: ``np.asarray`` of a call written across lines with LOAD_ATTR in a module and LOAD_METHOD when
#: the same lambda is compiled alone
_SAME_OPCODE = {"LOAD_METHOD": "LOAD_ATTR"}


def _instructions(code: types.CodeType) -> tuple:
    return tuple(
        (
            _SAME_OPCODE.get(i.opname, i.opname),
            _code_key(i.argval) if isinstance(i.argval, types.CodeType) else i.argval,
        )
        for i in dis.get_instructions(code)
        if i.opname not in ("CACHE", "NOP", "PUSH_NULL")
    )


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    return _code_key(a) == _code_key(b)


def _nested_code(code):
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield c
            yield from _nested_code(c)


def _compile_lambda(node: ast.Lambda, freevars: tuple, filename: str) -> types.CodeType:
    """``node`` compiled as the code it was made from: a lambda made inside a function (a record
    helper's ``lambda J, x: get(J, jnp_name)(x)``) reads the enclosing function's names as free
    variables, which compiled alone would be globals (other bytecode); so it is compiled inside a
    function that binds those names."""
    if not freevars:
        return compile(ast.Expression(node), filename, "eval")
    binds = ast.Assign(targets=[ast.Name(n, ast.Store()) for n in freevars], value=ast.Constant(None))
    outer = ast.FunctionDef(
        name="_enclosing", args=ast.arguments([], [], None, [], [], None, []),
        body=[binds, ast.Return(node)], decorator_list=[], returns=None, type_params=[],
    )  # fmt: skip
    return compile(ast.fix_missing_locations(ast.Module([outer], [])), filename, "exec")


def _lambda_node(fn):
    """(module text, the Lambda node of ``fn``): the node on ``co_firstlineno`` of its module whose
    compiled code is ``fn``'s (several lambdas on one line are told apart by their code)."""
    module = inspect.getmodule(fn)
    text = inspect.getsource(module)
    line = fn.__code__.co_firstlineno
    nodes = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Lambda) and n.lineno == line]
    for node in nodes:  # each lambda's own code, not one nested in it (``lambda j: lambda J, x: ...``)
        compiled = _compile_lambda(node, fn.__code__.co_freevars, fn.__code__.co_filename)
        own = next(c for c in _nested_code(compiled) if c.co_name == "<lambda>")
        if _same_code(own, fn.__code__):
            return text, node
    raise CannotReproduce(f"no lambda on line {line} of {module.__name__} compiles to the spelling's code")


def lambda_source(fn) -> str:
    """The text of lambda ``fn`` as its module spells it."""
    text, node = _lambda_node(fn)
    return ast.get_source_segment(text, node)


def _code_names(code) -> set:
    names = set(code.co_names)
    for c in _nested_code(code):
        names |= set(c.co_names)
    return names


def _strip_decorators(src: str) -> str:
    return "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("@refuses"))


def _literal(value) -> str | None:
    """Python text that evaluates to ``value``, a dict, list or tuple of numbers, strings, bools and
    None (infinities and nan written ``float('inf')``); None for anything else."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if np.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (list, tuple)):
        items = [_literal(v) for v in value]
        if None in items:
            return None
        inner = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        pairs = [(_literal(k), _literal(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def _function_source(fn: types.FunctionType) -> tuple[str, ast.Lambda | ast.FunctionDef]:
    """(text, node): a lambda's expression as its module spells it, or a def's source (dedented,
    refgrad's decorators dropped), with the node whose arguments hold its defaults."""
    if fn.__name__ == "<lambda>":
        text, node = _lambda_node(fn)
        return ast.get_source_segment(text, node), node
    src = _strip_decorators(textwrap.dedent(inspect.getsource(fn)))
    return src, next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef))


def spelling_source(fn, name: str = "op") -> tuple[str, str]:
    """(imports, text): ``fn`` as standalone text bound to ``name``, preceded by what it uses: the
    module-level helpers and constants it names, the values its closure cells and default
    arguments held when the spelling was made (``_t = 'sum'``)."""
    if not isinstance(fn, types.FunctionType):
        raise CannotReproduce(f"the spelling is a {type(fn).__name__}, not a Python function")
    helpers, imports, seen = [], [], set()

    def bind(n, value, why=""):
        if n in seen:
            return
        seen.add(n)
        if isinstance(value, types.ModuleType):
            imports.append(f"import {value.__name__}" + ("" if value.__name__ == n else f" as {n}"))
        elif isinstance(value, types.FunctionType):
            text, node = _function_source(value)
            defaults(value, node)  # evaluated where the helper is defined: bound before it
            if value.__name__ == "<lambda>":
                helpers.append(f"{n} = {text}")
            else:
                helpers.append(text if value.__name__ == n else f"{text}\n\n\n{n} = {value.__name__}")
            need(value)
        elif isinstance(value, type):
            src = _strip_decorators(textwrap.dedent(inspect.getsource(value)))
            helpers.append(src if value.__name__ == n else f"{src}\n\n\n{n} = {value.__name__}")
        elif isinstance(value, (int, float, str, bool, tuple, frozenset, type(None))):
            helpers.append(f"{n} = {value!r}{why}")
        elif (text := _literal(value)) is not None:  # a table of constants: {"amax": -inf, ...}
            helpers.append(f"{n} = {text}{why}")
        else:
            raise CannotReproduce(f"the spelling uses {n}, a {type(value).__name__} the script cannot copy")

    def defaults(f, node):
        """Bind what ``f``'s default arguments read: a bare name to the value it held when ``f``
        was made (``lambda jnp, n=_n: ...`` in a loop over ``_n``), other names as globals."""
        exprs = list(node.args.defaults) + [d for d in node.args.kw_defaults if d is not None]
        values = list(f.__defaults__ or ()) + list((f.__kwdefaults__ or {}).values())
        for expr, value in zip(exprs, values):
            if isinstance(expr, ast.Name):
                bind(expr.id, value, "  # a default argument's value when the spelling was made")
            else:
                for sub in ast.walk(expr):
                    if isinstance(sub, ast.Name) and sub.id in f.__globals__:
                        bind(sub.id, f.__globals__[sub.id])

    def need(f):
        glb = f.__globals__
        for n, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            bind(n, cell.cell_contents, "  # a closure cell of the spelling")
        for n in sorted(_code_names(f.__code__)):
            if n in glb:
                bind(n, glb[n])

    where = f"{inspect.getmodule(fn).__name__}, line {fn.__code__.co_firstlineno}"
    text, node = _function_source(fn)
    if fn.__name__ == "<lambda>":
        body = f"# {where}\n{name} = {text}"
    else:
        body = f"# {where}\n{text}\n\n\n{name} = {fn.__name__}"
    defaults(fn, node)
    need(fn)
    return "\n".join(imports), "\n\n\n".join(helpers + [body])


def _top_level_names(text: str) -> set[str]:
    """The names a script's text binds at its top level (assignments, defs, classes, imports)."""
    names = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _apart(op_text: str, rest: str, name: str = "op") -> str:
    """``op_text`` as it reads, or, where a name its helpers bind (a closure cell ``t``, a helper
    ``run``) is one the rest of the script binds too, or is ``op`` itself (special.py's closure cell
    ``op = 'bessel_j0'``), inside a function that returns the spelling: the check's own ``t`` or
    ``run`` defined later, or the final ``op = fn``, would otherwise replace the helper's value, and
    the script would report a departure that is not there (``getattr(T, t)`` of a function)."""
    last = ast.parse(op_text).body[-1]  # ``op = <the spelling>``, the text's last statement
    helpers = _top_level_names(op_text[: _offset(op_text, last.lineno)])
    if not (helpers & _top_level_names(rest) or name in helpers):
        return op_text
    lines = op_text.split("\n")
    assert lines[last.lineno - 1].startswith(f"{name} = "), lines[last.lineno - 1]
    lines[last.lineno - 1] = "return " + lines[last.lineno - 1][len(f"{name} = ") :]
    body = textwrap.indent("\n".join(lines), "    ")
    return (
        "def _spelling():\n"
        '    """The spelling with its helpers, in a scope of their own: names the check below binds too."""\n'
        f"{body}\n\n\n{name} = _spelling()"
    )


def _offset(text: str, lineno: int) -> int:
    """The character offset where line ``lineno`` (1-based) of ``text`` starts."""
    return sum(len(line) + 1 for line in text.split("\n")[: lineno - 1])


# ---- data ----------------------------------------------------------------------------------------


def _b64(a) -> str:
    if np.iscomplexobj(a):  # a complex case's array: its complex128 bytes, every part exact
        a = np.array(a, dtype="<c16", order="C")
        return f"_array({base64.b64encode(a.tobytes()).decode('ascii')!r}, {tuple(a.shape)!r}, '<c16')"
    a = np.array(a, dtype="<f8", order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    return f"_array({base64.b64encode(a.tobytes()).decode('ascii')!r}, {tuple(a.shape)!r})"


def _arrays(d: dict) -> str:
    if not d:
        return "{}"
    return "{\n" + "".join(f"    {k!r}: {_b64(v)},\n" for k, v in d.items()) + "}"


# ---- the adapter: framework and execution mode ------------------------------------------------------


def adapter_mode(cls) -> tuple[str, str, dict]:
    """(framework, mode, options) of an adapter class; raises when it runs records its own way."""
    for klass in cls.__mro__:
        if klass.__module__.startswith("conformance.adapters"):
            break
        own = [m for m in _PROGRAM_METHODS if m in vars(klass)]
        if own:
            raise CannotReproduce(
                f"{klass.__module__}.{klass.__name__} overrides {', '.join(own)}: its record programs are its "
                "own, which a standalone script cannot copy (only a spelling, via Adapter.spelling, is carried)"
            )
    framework = getattr(cls, "record_framework", None)
    if framework not in ("torch", "jax", "tensorflow"):
        raise CannotReproduce(f"{cls.__name__} runs no op records of a known framework")
    mode = getattr(cls, "mode", "eager")
    options = {}
    if framework == "torch" and mode != "eager":
        options["backend"] = cls.backend
    if framework == "tensorflow" and mode != "eager":
        options["jit_compile"] = bool(cls.jit_compile)
    return framework, mode, options


# ---- the script --------------------------------------------------------------------------------------


def record_reproducer(
    result: dict, adapter_spec: str, device: str = "cpu", precision: str = "highest"
) -> str:
    """The text of a standalone script re-running an op-record result's check on its framework."""
    if device != "cpu":
        raise CannotReproduce(f"record reproducers run on cpu; this result ran on {device!r}")
    case = Case.from_dict(result["case"], source=result["case_id"])
    check = result["check"]
    rec = RECORDS[case.op]
    cls = load_class(adapter_spec)
    framework, mode, options = adapter_mode(cls)
    spelling = cls.__new__(cls).spelling_for(rec, case)  # no __init__: the spelling needs no framework
    if isinstance(spelling, str):
        raise CannotReproduce(spelling)
    imports, op_text = spelling_source(spelling)
    params = op_params(case)
    data = case_data(case)
    run_check = "forward" if check == "error" else check
    arrays = {n: data[n] for n in arrays_for(case, run_check)}
    names = list(rec.inputs)
    dims = vmap_spec(case)[1] if run_check in VMAP_CHECKS else None
    rejects = case.rejects() if check == "error" else None  # (conformance.ops.record_rejects)
    expected, bounds, terms = {}, {}, {}
    if check != "error":
        b = result.get("bound") or {}
        if "underflow" in b:  # the terms record_verdict judged with
            acc = b.get("accumulator")
            prec = Precision(
                dtype=b.get("dtype") or case.dtype,
                accumulate=acc if acc and acc != (b.get("dtype") or case.dtype) else None,
                tf32=bool(b.get("tf32")),
                flush=b["underflow"] == "flush-to-zero",
            )
        else:  # never judged (the framework raised on valid arguments): the bound the adapter's settings give
            prec = precision_for(case, cls().setup(device, precision), framework)
            b = {**b, **prec.terms()}
        values, _ = expected_for(case, check, prec)
        for n, (v, bd) in values.items():
            expected[n] = v
            if case.dtype in PART_DTYPE:  # each part's bound: the modulus bound + 1 ulp of the larger part
                v = np.maximum(np.abs(np.real(v)), np.abs(np.imag(v)))
            dt = PART_DTYPE.get(case.dtype, case.dtype)
            bounds[n] = np.broadcast_to(np.asarray(known(bd) + ulp_of(v, dt), dtype=np.float64), np.shape(v))
        terms = {
            k: b[k] for k in ("formula", "u", "accumulator", "u_acc", "tf32", "underflow", "eta") if k in b
        }
        terms.setdefault("formula", "the derived error bound + 1 ulp of the expected value")
    label = framework if mode == "eager" else f"{framework} ({mode})"
    replay = f"conformance replay CASE.json --frameworks {result['framework']} --checks {check}"
    header = f'''#!/usr/bin/env python3
"""Reproducer: {_docstring_safe(label)} {_docstring_safe(check)} of {_docstring_safe(rec.name)}, {case.dtype}

Case: {_docstring_safe(case.describe())}
Generated by refgrad's conformance harness (adapter {_docstring_safe(adapter_spec)}); needs only NumPy
and {framework}. The harness saw:
    {_docstring_safe(result.get("verdict"))}: {_docstring_safe(result.get("reason") or "")}
Run:  python THIS_FILE.py      (exit 1: the departure is present; 0: it is gone)
With refgrad installed: save CASE_JSON below as CASE.json, then  {_docstring_safe(replay)}
"""
from __future__ import annotations

import base64
import sys

import numpy as np
{_FRAMEWORK_IMPORTS[framework]}
{imports}

inf, nan = float("inf"), float("nan")  # the names repr() gives non-finite parameters
CHECK = {check!r}
DTYPE = {case.dtype!r}
CASE_ID = {case.id!r}
# the case as the harness stores it (for conformance replay); the script reads only the data below
CASE_JSON = {json.dumps(case.to_dict(), sort_keys=True)!r}


def _array(b64, shape, dtype="<f8"):
    """A float64 (complex128) array from the base64 of its little-endian bytes (exact in DTYPE)."""
    return np.frombuffer(base64.b64decode(b64), dtype=dtype).reshape(shape).copy()


# ---- the data the check read, exact --------------------------------------------------------------
NAMES = {tuple(names)!r}  # the op's tensor arguments, in order
DIFF = {tuple(rec.diff_inputs)!r}  # the ones differentiated
PARAMS = {params!r}  # the op's other arguments
IN_DIMS = {None if dims is None else tuple(dims)!r}  # vmap: each input's batched dim (None: shared)
ARRAYS = {_arrays(arrays)}
'''
    if check == "error":
        oracle = f"""
# ---- what refgrad's reference does with these arguments (the oracle; embedded, not recomputed) ----
# the case comes from the record's invalid strategy: {_docstring_safe(str(case.params.as_dict().get("invalid")))}
REFERENCE_REJECTS = {rejects!r}  # None: the reference accepts them
"""
    else:
        oracle = f"""
# ---- EXPECTED: refgrad's float64 reference on these arrays (the oracle; embedded, not recomputed) ----
EXPECTED = {_arrays(expected)}
# ---- BOUND: the per-element bound the harness judged with: |observed - expected| <= BOUND
# {terms.get("formula")}
# terms: {", ".join(f"{k}={v!r}" for k, v in terms.items() if k != "formula")}
BOUND = {_arrays(bounds)}
"""
    program = _PROGRAMS[framework](run_check, mode, options).replace("RUN_CHECK", repr(run_check))
    if run_check in ORDER_RUN:
        program = _order_program(case, run_check, framework) + program
    main = _MAIN_ERROR if check == "error" else _MAIN
    if case.dtype in PART_DTYPE:
        program, main = _complex_program(framework, program, main)
    rest = "\n".join([header, oracle, program, main])
    return "\n".join(
        [
            header,
            oracle,
            f"# ---- the op, spelled as the {cls.__name__} adapter spells the {rec.name} record ----",
            _apart(op_text, rest),
            "",
            f"\n# ---- the {run_check} check, as the adapter runs it ({mode}) ----",
            program.strip("\n"),
            "\n",
            main.strip("\n"),
            "",
            'if __name__ == "__main__":\n    sys.exit(main())\n',
        ]
    )


_FRAMEWORK_IMPORTS = {
    "torch": "import torch",
    "jax": 'import jax\n\njax.config.update("jax_enable_x64", True)\njax.config.update("jax_platforms", "cpu")\n'
    "import jax.numpy as jnp\nfrom jax import lax",
    "tensorflow": 'import os\n\nos.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")\nimport tensorflow as tf\n\n'
    'tf.config.set_visible_devices([], "GPU")\ntf.config.experimental.enable_tensor_float_32_execution(False)',
}


# ---- the check programs (conformance.checks, copied by source; as conformance/ops/_run.py runs them) --
_ORDER_TORCH = """
    def whole(arrays):
        xs = {n: arrays[k] for n, k in zip(NAMES, ORDER_INPUTS)}
        out = order_check(torch.func, CHECK, NAMES, DIFF, IN_DIMS, f, xs, [arrays[s] for s in SEEDS])
        return dict(zip(RESULTS, out))

    return COMPILE_WHOLE(whole)({k: t(v) for k, v in ARRAYS.items()})
"""

_FIRST_TORCH = """
    return torch_check(torch, RUN_CHECK, f, NAMES, DIFF, IN_DIMS, ARRAYS, t)
"""

# jvp, vmap, vmap_vjp under torch.compile: the whole torch.func transform compiled, its tensors made
# outside (as TorchCompileAdapter.run_record: Dynamo does not compile a compiled function called
# inside an outer torch.func transform, it runs eager there)
_WHOLE_TORCH = """
    def whole(tensors):
        return torch_check(torch, RUN_CHECK, f, NAMES, DIFF, IN_DIMS, tensors, lambda x, requires_grad=False: x)

    return COMPILE_WHOLE(whole)({k: t(v) for k, v in ARRAYS.items()})
"""


#: the first-order checks a compiled torch mode runs as one compiled torch.func transform
_TORCH_TRANSFORMS = ("jvp", "vmap", "vmap_vjp")


def _source(fn) -> str:
    """A function of :mod:`conformance.checks` as the script's text (it names nothing of refgrad)."""
    return textwrap.dedent(inspect.getsource(fn))


def _torch_program(check, mode, options):
    if mode == "eager":
        setup = """
def f(*xs):
    return op(torch, *xs, **PARAMS)


COMPILE_WHOLE = lambda fn: fn  # eager: nothing compiled
"""
    else:
        setup = f"""
import torch._dynamo.config as dynamo_config

dynamo_config.recompile_limit = 1_000_000  # as the adapter: a guard miss never falls back to eager
dynamo_config.accumulated_recompile_limit = 1_000_000
dynamo_config.fail_on_recompile_limit_hit = True


def compile(fn):
    return torch.compile(fn, backend={options["backend"]!r}, dynamic=False, fullgraph=False)


# the op compiled as the model a user compiles; autograd runs AOTAutograd's compiled backward
f = compile(lambda *xs: op(torch, *xs, **PARAMS))
COMPILE_WHOLE = compile  # jvp, vmap, vmap_vjp: the whole torch.func transform compiled
"""
        if check in _TORCH_TRANSFORMS or check in ORDER:
            # the torch.func checks and the second-order ones compile the transform, not the op
            setup = setup.replace("f = compile(", "f = (")
    again = (
        "\n    out = run()  # the harness reports the second call: the cached compiled code"
        if mode != "eager"
        else ""
    )
    if check in ORDER:
        run, program = _ORDER_TORCH, ""
    else:
        run = _WHOLE_TORCH if check in _TORCH_TRANSFORMS and mode != "eager" else _FIRST_TORCH
        program = "\n\n" + _source(torch_check)
    body = f"""{program}

def t(x, requires_grad=False):
    return torch.tensor(x, dtype=getattr(torch, DTYPE)).requires_grad_(requires_grad)


def run():
{run.strip(chr(10))}


def observed():
    out = run(){again}
    # a ZeroTensor (a tangent that does not reach the output) made dense, as the harness does
    dense = {{k: torch.zeros(v.shape) if v._is_zerotensor() else v for k, v in out.items()}}
    return {{k: v.detach().to(torch.float64).numpy() for k, v in dense.items()}}
"""
    return setup + body


_ORDER_JAX = """
    def whole(xs, seeds):
        return order_check(JaxFunc(jax), CHECK, NAMES, DIFF, IN_DIMS, lambda *ys: op(J, *ys, **PARAMS), xs, seeds)

    xs = {n: arr(ARRAYS[k]) for n, k in zip(NAMES, ORDER_INPUTS)}
    return dict(zip(RESULTS, jax.jit(whole)(xs, [arr(ARRAYS[s]) for s in SEEDS])))
"""

_FIRST_JAX = """
    VJP = jax.vjp  # the VJP the checks take
    return jax_check(jax, RUN_CHECK, lambda *ys: op(J, *ys, **PARAMS), NAMES, DIFF, IN_DIMS, ARRAYS, arr, VJP, jax.jit)
"""


def _jax_program(check, mode, options):
    eager = mode == "eager"
    program = "" if check in ORDER else "\n\n" + _source(jax_check)
    return f'''{program}
class J:
    """The namespace a record's JAX spelling takes: J.jax, J.jnp, J.lax, J.nn."""

    jax, jnp, lax, nn = jax, jnp, lax, jax.nn


def arr(x):
    return jnp.asarray(x, dtype=getattr(jnp, DTYPE))


def run():
{(_ORDER_JAX if check in ORDER else _FIRST_JAX).strip(chr(10))}


def observed():
    {"with jax.disable_jit():  # jax:eager: the same code, op by op" + chr(10) + "        out = run()" if eager else "out = run()  # each check one program under jax.jit"}
    return {{k: np.asarray(jax.device_get(v), dtype=np.float64) for k, v in out.items()}}
'''


_ORDER_TF = """
    xs = {n: c(a[k]) for n, k in zip(NAMES, ORDER_INPUTS)}
    out = order_check(TfFunc(tf), CHECK, NAMES, DIFF, IN_DIMS, lambda *ys: op(tf, *ys, **PARAMS), xs, [c(a[s]) for s in SEEDS])
    return dict(zip(RESULTS, out))
"""

_FIRST_TF = """
    return tf_check(tf, RUN_CHECK, lambda *ys: op(tf, *ys, **PARAMS), NAMES, DIFF, IN_DIMS, a, c)
"""


def _tf_program(check, mode, options):
    if mode == "eager":
        call = "out = run(ARRAYS)  # eager"
    else:
        jit = options["jit_compile"]
        call = (
            f"# the whole check as one tf.function (jit_compile={jit}), its arrays passed as arguments\n"
            f"    function = tf.function(run, jit_compile={jit}, autograph=False)\n"
            "    function({n: tf.constant(v) for n, v in ARRAYS.items()})  # the first call traces\n"
            "    out = function({n: tf.constant(v) for n, v in ARRAYS.items()})  # the harness reports this call"
        )
    program = "" if check in ORDER else "\n\n" + _source(tf_check)
    return f'''{program}
def c(x):
    """A tensor of DTYPE (a tf.function's float64 argument is cast)."""
    dtype = getattr(tf, DTYPE)
    return tf.cast(x, dtype) if tf.is_tensor(x) else tf.constant(x, dtype=dtype)


def run(a):
{(_ORDER_TF if check in ORDER else _FIRST_TF).strip(chr(10))}


def observed():
    {call}
    return {{k: np.asarray(tf.cast(v, tf.float64).numpy()) for k, v in out.items()}}
'''


_PROGRAMS = {"torch": _torch_program, "jax": _jax_program, "tensorflow": _tf_program}
#: the second-order forward-mode checks: one program (conformance.ops._run.order_check) for every framework
ORDER = ("jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")


def _order_program(case, check, framework) -> str:
    """The text a second-order check's program needs: which arrays are its inputs, seeds and results,
    ``order_check`` (the harness's own function, copied: it names nothing of refgrad) and the
    framework's transforms with torch.func's signatures (JAX's and TensorFlow's)."""
    seeds, results = order_names(case, check)
    names = RECORDS[case.op].inputs
    dims = vmap_spec(case)[1] if check == "vmap_jvp_vjp" else [None] * len(names)
    inputs = [n if d is None else f"batched_{n}" for n, d in zip(names, dims)]
    parts = [
        f"ORDER_INPUTS = {tuple(inputs)!r}  # the array each input of the op reads",
        f"SEEDS = {tuple(seeds)!r}  # the tangents and cotangents, in order_check's order",
        f"RESULTS = {tuple(results)!r}",
        "",
        "",
        textwrap.dedent(inspect.getsource(order_check)),
    ]
    namespace = {"jax": JaxFunc, "tensorflow": TfFunc}.get(framework)
    if namespace is not None:
        parts += ["", textwrap.dedent(inspect.getsource(namespace))]
    return "\n".join(parts) + "\n"


def _complex_program(framework, program, main):
    """A complex case's program and comparison: JAX's VJPs in PyTorch's convention (the harness's
    ``torch_convention_vjp``, copied), results kept complex, and each element compared part by part
    (a non-finite reference element matched by any of its C99 class), as conformance.ops.judge does."""
    # a real array of a complex case (a cotangent of a real output) is made in the part dtype
    program = "\nPART_DTYPE = {'complex64': 'float32', 'complex128': 'float64'}[DTYPE]\n" + program.replace(
        "torch.tensor(x, dtype=getattr(torch, DTYPE))",
        "torch.tensor(x, dtype=getattr(torch, DTYPE if np.iscomplexobj(x) else PART_DTYPE))",
    ).replace(
        "jnp.asarray(x, dtype=getattr(jnp, DTYPE))",
        "jnp.asarray(x, dtype=getattr(jnp, DTYPE if np.iscomplexobj(x) else PART_DTYPE))",
    ).replace(
        "    dtype = getattr(tf, DTYPE)",
        "    cx = x.dtype.is_complex if tf.is_tensor(x) else np.iscomplexobj(x)\n"
        "    dtype = getattr(tf, DTYPE if cx else PART_DTYPE)",
    )
    if framework == "jax":
        program = (
            "\n\n"
            + textwrap.dedent(inspect.getsource(torch_convention_vjp))
            + "\n# JAX's VJP transposes under sum(ct*y), PyTorch's (the reference's) is the adjoint under "
            "Re sum(conj(ct)*y)\n"
            + program.replace("jax.vjp(", "torch_convention_vjp(jax, ")
            .replace("JaxFunc(jax)", "JaxFunc(jax, True)")
            .replace(
                "VJP = jax.vjp  # the VJP the checks take",
                "VJP = lambda fn, *p: torch_convention_vjp(jax, fn, *p)",
            )
        )
        program = program.replace(
            "dtype=np.float64) for k, v in out.items()", "dtype=np.complex128) for k, v in out.items()"
        )
    elif framework == "torch":
        program = program.replace(
            "v.detach().to(torch.float64).numpy()",
            "v.detach().resolve_conj().to(torch.complex128 if v.is_complex() else torch.float64).numpy()",
        )
    else:
        program = program.replace(
            "tf.cast(v, tf.float64).numpy()",
            "tf.cast(v, tf.complex128 if v.dtype.is_complex else tf.float64).numpy()",
        )
    main = _COMPLEX_PARTS + main.replace(
        "        obs = np.asarray(obs, dtype=np.float64)\n", "        obs, exp = _parts(obs, exp)\n"
    ).replace(
        "        bound = BOUND[name]\n",
        "        bound = np.stack([BOUND[name]] * 2, -1) if exp.ndim > BOUND[name].ndim else BOUND[name]\n",
    )
    return program, main


_COMPLEX_PARTS = """
def _parts(obs, exp):
    \"\"\"A complex case's element as its (real, imaginary) parts, a trailing axis of 2; a non-finite
    reference element is matched by any element of its C99 class (an infinity: an infinite part; a
    NaN: a NaN part and no infinite part).\"\"\"
    obs, exp = np.asarray(obs), np.asarray(exp)
    if not (np.iscomplexobj(obs) or np.iscomplexobj(exp)):
        return np.asarray(obs, dtype=np.float64), exp
    obs, exp = np.asarray(obs, dtype=np.complex128), np.asarray(exp, dtype=np.complex128)

    def kind(z):
        inf = np.isinf(z.real) | np.isinf(z.imag)
        return np.where(inf, 2, np.where(np.isnan(z.real) | np.isnan(z.imag), 1, 0))

    if obs.shape == exp.shape:
        obs = np.where((kind(exp) > 0) & (kind(exp) == kind(obs)), exp, obs)
    return np.stack([obs.real, obs.imag], -1), np.stack([exp.real, exp.imag], -1)

"""

_MAIN = """
# ---- the comparison: element by element against the embedded bound ---------------------------------
def main():
    try:
        with np.errstate(all="ignore"):
            got = observed()
    except Exception as exc:
        print(f"DEPARTURE: the framework raised {type(exc).__name__} on valid arguments: {exc}")
        return 1
    failed, worst = [], None
    for name, exp in EXPECTED.items():
        obs = got.get(name)
        if obs is None:
            failed.append(f"no {name}")
            continue
        obs = np.asarray(obs, dtype=np.float64)
        if obs.shape != exp.shape:
            failed.append(f"{name} has shape {list(obs.shape)}, the reference's is {list(exp.shape)}")
            continue
        if exp.size == 0:
            continue
        bound = BOUND[name]
        finite = np.isfinite(exp)
        same_nonfinite = (np.isnan(exp) & np.isnan(obs)) | (np.isinf(exp) & (obs == exp))
        free = ~np.isfinite(bound) & finite  # past the dtype's range: any value passes
        with np.errstate(all="ignore"):
            err = np.abs(obs - exp)
            err = np.where(np.isfinite(err), err, np.inf)
            ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0), np.where(err > 0, np.inf, 0.0))
        ratio = np.where(free | (~finite & same_nonfinite), 0.0, ratio)
        ratio = np.where(~finite & ~same_nonfinite, np.inf, ratio)
        i = np.unravel_index(int(np.argmax(ratio)), exp.shape)
        line = f"{name}{[int(j) for j in i]}: observed {float(obs[i])!r}, expected {float(exp[i])!r}, bound {float(bound[i])!r}"
        if worst is None or ratio[i] > worst[0]:
            worst = (ratio[i], line)
        if (ratio > 1.0).any():
            failed.append(f"{int((ratio > 1.0).sum())} element(s) of {name} outside the bound")
    if worst is not None:
        print(f"worst element: {worst[1]} (|observed - expected| / bound = {worst[0]:.3g})")
    if failed:
        print("DEPARTURE: " + "; ".join(failed))
        return 1
    print("no departure: every element is within its bound")
    return 0
"""

_MAIN_ERROR = """
# ---- the comparison: does the framework reject what the reference rejects? ---------------------------
def main():
    try:
        with np.errstate(all="ignore"):
            observed()
    except Exception as exc:
        if REFERENCE_REJECTS:
            print(f"both reject: the framework raised {type(exc).__name__}: {exc}")
            print(f"the reference raised {REFERENCE_REJECTS}")
            return 0
        print(f"DEPARTURE: the framework raised {type(exc).__name__} where the reference accepts: {exc}")
        return 1
    if REFERENCE_REJECTS:
        print(f"DEPARTURE: the framework accepted arguments the reference rejects with {REFERENCE_REJECTS}")
        return 1
    print("both accept")
    return 0
"""
