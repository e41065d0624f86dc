"""Op records: one per primitive of the reference's derivative table, in one registry.

A record (PyTorch's OpInfo, JAX's ``op_record``) says, once, how the harness fuzzes a primitive:

* ``sample``: a Hypothesis strategy of ``(params, shapes)`` valid by construction (shapes of the
  named tensor inputs; params the op's non-tensor arguments plus ``values``, the distribution
  the inputs are drawn from: :data:`VALUES`; ``run --domains whole`` adds ``domain`` and the
  ``near`` kind: conformance.ops._domains);
* ``fn(T, *tensors, **params)``: the op as PyTorch spells it; with ``T = reference`` it is the
  reference (``import reference as T`` runs PyTorch's program text), with ``T = torch`` the
  PyTorch spelling;
* ``jax(J, *arrays, **params)`` / ``tf(tf, *tensors, **params)``: the JAX (``J.jnp``, ``J.lax``,
  ``J.nn``, ``J.jax``) and TensorFlow spellings, or a string: why that framework cannot express it;
* ``rules``: the table primitives it exercises; ``checks``: the checks that apply (the second-order
  forward-mode checks :data:`ORDER_CHECKS` are added to a record whose checks have ``jvp`` and
  ``vjp_vjp``; ``vmap``, ``vmap_vjp`` and ``vmap_jvp_vjp`` to one whose checks have ``forward`` /
  ``vjp`` / ``jvp_vjp`` unless it says why not in ``no_vmap``; ``error`` to one with an ``invalid``
  strategy);
* ``invalid``: a Hypothesis strategy of ``(params, shapes)`` the op must reject (the ``error``
  check: a framework must reject it too), with ``params["invalid"]`` naming the breakage;
  ``error_frameworks``: the frameworks whose spelling passes the broken argument through (a
  spelling that normalises it, e.g. ``dim % ndim``, cannot show whether the framework rejects it);
* a record that is *not fuzzed* (an internal primitive reached only through another op's
  derivative, or an in-place-only primitive) carries ``not_fuzzed``, the reason.

Every family module of this package is loaded on import, so an op added to the reference's table
needs only a record here; ``tests/conformance/test_records.py`` fails for a table primitive that
has none. Convolution is the record ``conv`` (its cases, strategies and adapters predate the
registry and keep their own format).
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

import reference as T
from conformance.case import (
    COMPLEX_DTYPES,
    DTYPES,
    PART_DTYPE,
    CaseError,
    CaseKind,
    decode_array,
    parse_record_case,
    register_kind,
    round_to_dtype,
    shape_features,
)
from conformance.ops._domains import CELLS, as_domain, plane_near
from reference.errors import LARGEST, SMALLEST_NORMAL

VMAP_CHECKS = ("vmap", "vmap_vjp", "vmap_jvp_vjp")
#: The second-order checks that run forward mode (docs/conformance.md, "Checks"): added to every record
#: whose checks have both ``jvp`` and ``vjp_vjp`` (its derivative rules are differentiable twice).
ORDER_CHECKS = ("jvp_jvp", "vjp_jvp", "jvp_vjp")
#: which check each vmap check maps
VMAPPED = {"vmap": "forward", "vmap_vjp": "vjp", "vmap_jvp_vjp": "jvp_vjp"}
RECORD_CHECKS = ("forward", "vjp", "vjp_vjp", "jvp", *ORDER_CHECKS, *VMAP_CHECKS)
FRAMEWORKS = ("torch", "jax", "tensorflow")
#: ``params`` key naming the spelling a framework runs (one of the record's ``spellings``)
SPELLING_PARAMS = {f: f"spelling_{f}" for f in FRAMEWORKS}
#: the name of a record's primary spelling (``fn``/``torch``, ``jax``, ``tf``)
PRIMARY = "primary"
#: Keys of ``params`` that belong to the harness, not the op: the value distribution, the vmap
#: check's ``in_dims`` (per input: an int of the batched array, negative allowed, or None) and
#: ``vmap_size``, the ``error`` check's breakage name ``invalid``, and each framework's spelling.
HARNESS_PARAMS = ("values", "domain", "point", "in_dims", "vmap_size", "invalid", *SPELLING_PARAMS.values())
#: How the inputs of a record case are drawn (``params["values"]``).
VALUES = ("normal", "positive", "wide", "ties", "large", "tiny", "nonfinite", "special")
#: The value kind of a record whose domain declares hard points (conformance.ops._domains): half
#: of an input's elements at and around them. Drawn by ``run --domains whole`` only.
NEAR = "near"
#: The value kind of a reach-sweep case for a point's ``at`` cell (conformance.coverage.reach_points):
#: the ``near`` kind around the case's ``point`` with the input's first element exactly on it
AT = "at"
#: ``params["domain"]`` of a case drawn over its record's whole declared domains (``run --domains
#: whole``); absent, a record's inputs are drawn as the gate's known-departures file is written for
#: (each Domain's ``gate`` placement)
WHOLE = "whole"
#: ``params["point"]`` of a reach-sweep case (conformance.coverage.reach_points): the declared point
#: ``<input>:<label>`` every element of that input is drawn at or around (the ``near`` kind)
POINT = "point"


@dataclass(frozen=True)
class OpRecord:
    name: str
    family: str
    rules: tuple = ()
    inputs: tuple = ("input",)
    sample: Callable | None = None  # () -> strategy of (params, shapes)
    fn: Callable | None = None  # fn(T, *tensors, **params), T = reference or torch
    jax: Callable | str | None = None
    tf: Callable | str | None = None
    torch: Callable | str | None = None  # default: fn with T = torch
    checks: tuple = RECORD_CHECKS
    #: input -> its mathematical domain and hard points (a conformance.ops._domains.Domain, or
    #: "any" | "pos" | "unit" for one without points); an input not named is the whole line
    domains: dict = field(default_factory=dict)
    nondiff: tuple = ()  # inputs that are not differentiated
    not_fuzzed: str | None = None
    note: str = ""
    invalid: Callable | None = None  # () -> strategy of (params, shapes) the op rejects
    error_frameworks: tuple = FRAMEWORKS
    no_vmap: str | None = None  # why the vmap checks do not apply
    vmap_refused: dict = field(default_factory=dict)  # framework -> why it cannot vmap this op
    #: the framework's other public spellings of the op: framework -> {name: function}, each run
    #: with the primary spelling's arguments (conformance/ops/_spellings.py declares them); a case
    #: names the one it runs in ``params["spelling_<framework>"]`` (absent: the primary)
    spellings: dict = field(default_factory=dict)
    #: the choices the mathematics leaves open that this op makes (conformance.ops._conventions):
    #: a result that differs only by a declared alternative is judged ``convention``, not ``fail``
    conventions: tuple = ()

    def spelling(self, framework: str, case=None):
        """The framework's function for ``case`` (its drawn spelling; the primary one without a
        case), or the reason it has none (a str)."""
        name = spelling_name(case, framework)
        if name != PRIMARY:
            found = self.spellings.get(framework, {}).get(name)
            if found is None:
                known = ", ".join([PRIMARY, *self.spellings.get(framework, {})])
                return f"{framework} has no spelling {name!r} of {self.name!r} (its spellings: {known})"
            return found
        if framework == "torch":
            return self.torch if self.torch is not None else self.fn
        value = {"jax": self.jax, "tensorflow": self.tf}.get(framework)
        if value is None:
            return f"no {framework} spelling is recorded for {self.name!r}"
        return value

    def frameworks(self) -> list[str]:
        return [f for f in FRAMEWORKS if not isinstance(self.spelling(f), str)]

    @property
    def diff_inputs(self) -> tuple:
        return tuple(n for n in self.inputs if n not in self.nondiff)

    @property
    def dtypes(self) -> tuple:
        """The dtypes this record's cases may have: the real ones, and complex64/complex128 when
        the record is complex-capable (declared in :data:`COMPLEX_RECORDS`); the complex ones only
        for a record of :data:`COMPLEX_ONLY`."""
        if self.name in COMPLEX_ONLY:  # the transforms: complex inputs or outputs in any case
            return COMPLEX_DTYPES
        return DTYPES + (COMPLEX_DTYPES if self.name in COMPLEX_RECORDS else ())


RECORDS: dict[str, OpRecord] = {}
#: The complex-capable records (record name -> what the complex cases reach), declared in
#: conformance.ops.complex (filled when this package loads its family modules).
COMPLEX_RECORDS: dict[str, str] = {}
#: The records that run in the complex dtypes only (the transforms: a real case would need a complex
#: cotangent or give a complex gradient), also filled by conformance.ops.complex.
COMPLEX_ONLY: dict[str, str] = {}
#: record -> the inputs a complex case draws real, in the part dtype (float32 for complex64): the op
#: takes a real tensor there (rfft's signal, polar's modulus and angle).
REAL_INPUTS: dict[str, tuple] = {}
#: record -> {input: the hard points of its complex argument} (conformance.ops._domains.PlanePoint:
#: branch points, poles, zero divisors, both sides of each branch cut), declared in
#: conformance.ops.complex: the reach table's rows and the reach sweep's points in the complex
#: dtypes, as a record's ``domains`` points are in the real ones.
PLANE_POINTS: dict[str, dict[str, tuple]] = {}
#: The names of the arrays derived from an input (its tangents, second-order cotangents and seeds,
#: batched forms): a real input's are real too.
_DERIVED_PREFIXES = ("batched_tan1_", "batched_", "tangent_", "gg_", "tan1_", "tan2_")


def plane_point(op, name, label):
    """The complex point ``label`` declared for input ``name`` of record ``op`` (:data:`PLANE_POINTS`)."""
    points = PLANE_POINTS.get(op, {}).get(name, ())
    for p in points:
        if p.label == label:
            return p
    known = ", ".join(p.label for p in points)
    raise ValueError(f"record {op!r} declares no complex point {label!r} for {name!r} (its points: {known})")


def draws_real(op, name):
    """Whether array ``name`` of a complex case of ``op`` is real (:data:`REAL_INPUTS`)."""
    real = REAL_INPUTS.get(op, ())
    if name in real:
        return True
    return any(name.startswith(p) and name[len(p) :] in real for p in _DERIVED_PREFIXES)


def record(name, family=None, **fields):
    """Declare the record of ``name`` (by default the table primitive of the same name)."""
    if name in RECORDS:
        raise ValueError(f"op record {name!r} is declared twice")
    fields.setdefault("rules", (name,))
    if "not_fuzzed" not in fields:
        checks = tuple(fields.get("checks", RECORD_CHECKS))
        if "jvp" in checks and "vjp_vjp" in checks:
            checks += tuple(c for c in ORDER_CHECKS if c not in checks)
        if fields.get("no_vmap"):
            checks = tuple(c for c in checks if c not in VMAP_CHECKS)
        else:
            checks += tuple(v for v, b in VMAPPED.items() if b in checks and v not in checks)
        if fields.get("invalid") is not None and "error" not in checks:
            checks += ("error",)
        fields["checks"] = checks
    RECORDS[name] = OpRecord(name, family or "?", **fields)
    return RECORDS[name]


def not_fuzzed(name, family, reason, rules=None):
    """A table primitive the harness does not fuzz on its own, with the reason."""
    return record(name, family, rules=rules or (name,), not_fuzzed=reason, checks=())


def fuzzed() -> dict[str, OpRecord]:
    return {n: r for n, r in RECORDS.items() if r.not_fuzzed is None}


def families() -> dict[str, list[str]]:
    out = {}
    for n, r in fuzzed().items():
        out.setdefault(r.family, []).append(n)
    return out


def select(names) -> list[str]:
    """Record names for ``--ops`` items: record names, family names and ``all``."""
    out = []
    fams = families()
    for item in names:
        chosen = list(fuzzed()) if item == "all" else fams.get(item, [item] if item in fuzzed() else [])
        out.extend(n for n in chosen if n not in out)
    return out


def covered_rules() -> set:
    return {r for rec in RECORDS.values() for r in rec.rules}


# ---- cases of a record --------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordParams:
    """A record case's parameters (JSON values), hashable and printable."""

    values: tuple  # sorted (key, value) pairs

    @classmethod
    def of(cls, d: dict) -> RecordParams:
        return cls(tuple(sorted((k, _freeze(v)) for k, v in d.items())))

    def as_dict(self) -> dict:
        return {k: _thaw(v) for k, v in self.values}

    def to_dict(self) -> dict:
        return self.as_dict()

    def describe(self) -> str:
        return " ".join(f"{k}={json.dumps(v)}" for k, v in self.as_dict().items())


def _freeze(v):
    return tuple(_freeze(x) for x in v) if isinstance(v, (list, tuple)) else v


def _thaw(v):
    return [_thaw(x) for x in v] if isinstance(v, tuple) else v


def spelling_name(case, framework: str) -> str:
    """The name of the spelling ``case`` runs on ``framework`` (:data:`PRIMARY` by default)."""
    if case is None or framework not in SPELLING_PARAMS:
        return PRIMARY
    return case.params.as_dict().get(SPELLING_PARAMS[framework], PRIMARY)


def op_params(case) -> dict:
    """The keyword arguments ``fn`` takes (:data:`HARNESS_PARAMS` are the harness's, not the op's)."""
    p = case.params.as_dict()
    for key in HARNESS_PARAMS:
        p.pop(key, None)
    return p


def vmap_spec(case):
    """(vmap_size, in_dims) of a vmap / vmap_vjp case: one entry per input, an int (a dim of the
    batched array, negative allowed) or None (the input is shared by every sample)."""
    p = case.params.as_dict()
    rec = RECORDS[case.op]
    dims = p.get("in_dims")
    if dims is None:
        dims = [0] * len(rec.inputs)
    return int(p.get("vmap_size", 2)), [None if d is None else int(d) for d in dims]


def batched_shape(shape, dim, size):
    """The shape of an input batched at ``dim`` (a dim of the result: -1 is the last)."""
    shape = list(shape)
    d = dim % (len(shape) + 1)
    return tuple(shape[:d] + [size] + shape[d:])


def _draw(case, name, shape, domain="any"):
    if case.dtype in PART_DTYPE:  # a complex case: drawn on the plane (no domain)
        if name in case.data:
            value = round_to_dtype(decode_array(case.data[name]).reshape(shape), case.dtype)
        else:
            rng = np.random.default_rng([case.seed, zlib.crc32(name.encode())])
            kind = case.params.as_dict().get("values", "normal") if _is_input(case, name) else "normal"
            huge = len(RECORDS[case.op].inputs) == 1  # (see complex_draw)
            value = complex_draw(rng, shape, kind, case.dtype, _is_order_seed(name), huge)
            target, _, label = str(case.params.as_dict().get(POINT, "")).partition(":")
            if kind in (NEAR, AT) and target and target == name.removeprefix("batched_"):  # the reach sweep
                value = plane_point(case.op, target, label).near(rng, value, PART_DTYPE[case.dtype], kind)
            elif kind == NEAR and not target:  # run --domains whole: half the elements at and around the points
                points = PLANE_POINTS.get(case.op, {}).get(name.removeprefix("batched_"), ())
                value = plane_near(rng, value, points, PART_DTYPE[case.dtype])
            value = round_to_dtype(value, case.dtype)
        if not draws_real(case.op, name):
            return value
        value = value.real.copy()  # rfft's real signal, polar's modulus and angle: the real parts
        if domain != "any":  # polar's abs >= 0 (np.asarray: a 0-d draw stays an array, not a NumPy scalar)
            value = np.asarray(as_domain(as_domain(domain).gate).place(value))
        return value
    if name in case.data:
        return round_to_dtype(np.asarray(case.data[name], dtype=np.float64).reshape(shape), case.dtype)
    rng = np.random.default_rng([case.seed, zlib.crc32(name.encode())])
    if _is_order_seed(name):
        return round_to_dtype(_seed_draw(rng, shape, case.dtype), case.dtype)
    kind = case.params.as_dict().get("values", "normal") if _is_input(case, name) else "normal"
    a = real_values(rng, shape, kind, case.dtype)
    if kind == "special":  # the whole real line: log(-1), sqrt(-0), atanh(1) are the point
        return round_to_dtype(a, case.dtype)
    domain = as_domain(domain)
    if case.params.as_dict().get("domain") != WHOLE:  # the gate's draws (as before domains had points)
        domain = as_domain(domain.gate)
    if kind in (NEAR, AT):
        target, _, label = str(case.params.as_dict().get(POINT, "")).partition(":")
        only = label if target and target == name.removeprefix("batched_") else None
        params = case.params.as_dict()  # (where a moving point is: conformance.ops._domains.Point.value)
        a = domain.near(rng, a, case.dtype, only, kind, params) if only or not target else domain.place(a)
    else:
        a = domain.place(a)
    return round_to_dtype(a, case.dtype)


def real_values(rng, shape, kind, dtype):
    """Real values drawn as ``params["values"]`` says (:data:`VALUES`), before any domain."""
    a = rng.standard_normal(shape)
    if kind == "positive":  # sums that grow: an accumulator of the input dtype stagnates
        a = np.abs(a)
    elif kind == "wide":
        a = a * 10.0 ** rng.uniform(-4, 4, shape)
    elif kind == "ties":
        a = rng.integers(-2, 3, shape).astype(np.float64)
    elif kind == "large":
        a = a * 60.0
    elif kind == "tiny":
        tiny = SMALLEST_NORMAL.get(dtype, 2.0**-126)
        a = np.where(rng.random(shape) < 0.5, a * tiny * rng.uniform(0.01, 4, shape), a)
    elif kind == "nonfinite" and a.size:
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, max(1, flat.size // 4))
        flat[picks] = rng.choice([np.inf, -np.inf, np.nan], picks.size)
    elif kind == "special":  # IEEE 754's special values, over the whole real line (domains ignored)
        a = np.where(rng.random(shape) < 0.5, rng.choice(_special_values(dtype), shape), a)
    return a


def _special_values(dtype: str) -> np.ndarray:
    """The values where functions have their special cases (C99 Annex F, IEEE 754): both zeros,
    +-1, +-2, +-1/2, +-inf, nan, the smallest subnormal and normal, the largest finite number of
    the dtype. A ``special`` case draws half its elements from them and half normal, in every
    argument and over the whole real line, whatever the record's ``domains`` say: log(-1) is nan,
    sqrt(-0) is -0, atanh(1) is inf (a pole), and the frameworks must say so too."""
    subnormal = {"float64": 2.0**-1074, "float32": 2.0**-149, "float16": 2.0**-24, "bfloat16": 2.0**-133}
    magnitudes = [0.0, 1.0, 2.0, 0.5, np.inf, subnormal.get(dtype, 2.0**-149),
                  SMALLEST_NORMAL.get(dtype, 2.0**-126), LARGEST.get(dtype, 2.0**127)]  # fmt: skip
    return np.array([m * s for m in magnitudes for s in (1.0, -1.0)] + [np.nan])


#: The derivative seeds of the second-order forward-mode checks (and their ``batched_`` forms), drawn
#: like inputs (:func:`_seed_draw`), not only normal values.
ORDER_SEEDS = ("tan1_", "tan2_", "cot_output", "tan_cot_output")


def _is_order_seed(name):
    return name.removeprefix("batched_").startswith(ORDER_SEEDS)


def _seed_draw(rng, shape, dtype):
    """Tangents and cotangents drawn like inputs: per element, an exact zero (of either sign), +-1, a
    small integer, a tiny magnitude (down to subnormal), a huge one (2**(emax/4) times a normal draw:
    the square of a huge seed stays finite in the dtype, so a second derivative of two of them is a
    number, not an overflow) or a normal value (half of them). Deterministic per (seed, name)."""
    a = rng.standard_normal(shape)
    kind = rng.integers(0, 10, shape)
    tiny = SMALLEST_NORMAL.get(dtype, 2.0**-126) * rng.uniform(0.01, 4, shape)
    huge = 2.0 ** (np.floor(np.log2(LARGEST.get(dtype, 2.0**128))) // 4)
    a = np.where(kind == 0, np.copysign(0.0, a), a)
    a = np.where(kind == 1, np.sign(a), a)
    a = np.where(kind == 2, rng.integers(-4, 5, shape).astype(np.float64), a)
    a = np.where(kind == 3, np.copysign(tiny, a), a)
    return np.where(kind == 4, a * huge, a)


def complex_draw(rng, shape, kind, dtype, seed=False, huge=True):
    """Complex values for a case of ``dtype`` (complex64/complex128), as complex128 (the caller
    rounds each part to the part dtype).

    Each part is drawn like a real value of the part dtype: by the case's ``values`` kind
    (:func:`real_values`: normal, wide, ties, large, tiny, nonfinite) for inputs, like
    the second-order seeds (zeros of both signs, +-1, small integers, tiny, huge) for those. ``large``
    scales the parts to 2^(emax/2) when ``huge`` (|z|^2 overflows the dtype: abs and reciprocal
    must scale; a record of one input), else to 2^(emax/4) (a product of two huge moduli would overflow the dtype itself, where
    the float64 reference has no more range than complex128).
    Then each element is given, with equal chances, one of the shapes complex functions treat
    apart: purely real (imaginary part +0 or -0), purely imaginary (real part +0 or -0), on the
    branch cut of log/sqrt (negative real part, imaginary part +0 or -0), just off it (imaginary
    part of either sign at the smallest normal magnitude), or left as drawn (two of six)."""
    part = PART_DTYPE[dtype]
    if seed:
        re, im = _seed_draw(rng, shape, part), _seed_draw(rng, shape, part)
    else:
        re, im = real_values(rng, shape, kind, part), real_values(rng, shape, kind, part)
        if kind == "large":
            big = 2.0 ** (np.floor(np.log2(LARGEST[part])) // (2 if huge else 4) + 1) / 60.0
            re, im = re * big, im * big
    how = rng.integers(0, 6, shape)
    sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    tiny = SMALLEST_NORMAL[part] * rng.uniform(1, 4, shape)
    im = np.where(how == 0, np.copysign(0.0, sign), im)  # purely real
    re = np.where(how == 1, np.copysign(0.0, sign), re)  # purely imaginary
    re = np.where((how == 2) | (how == 3), -np.abs(re), re)  # the negative real axis ...
    im = np.where(how == 2, np.copysign(0.0, sign), im)  # ... on the cut, either side
    im = np.where(how == 3, sign * tiny, im)  # ... just off it
    out = np.empty(np.shape(re), dtype=np.complex128)
    out.real, out.imag = re, im  # (re + 1j*im would make inf*0j a nan)
    return out


def _is_input(case, name):
    return name.removeprefix("batched_") in RECORDS[case.op].inputs


class RecordData(dict):
    """The arrays of a record case by name, made on first use (float64, exact in the case's dtype):
    inputs, ``grad_output``, ``tangent_<input>``, ``gg_<input>`` (second-order cotangents), and the
    second-order forward-mode checks' seeds ``tan1_<input>``, ``tan2_<input>``, ``cot_output``,
    ``tan_cot_output`` (:data:`ORDER_SEEDS`, drawn like inputs) with their ``batched_`` forms."""

    def __init__(self, case):
        super().__init__()
        self.case = case
        self.record = RECORDS[case.op]
        self._out_shape = None

    def output_shapes(self):
        if self._out_shape is None:
            xs = [T.tensor(self[n]) for n in self.record.inputs]
            with np.errstate(all="ignore"):
                y = self.record.fn(T, *xs, **op_params(self.case))
            ys = y if isinstance(y, (tuple, list)) else (y,)
            self._out_shape = [tuple(o.shape) for o in ys]
            self._out_real = not ys[0].is_complex()
        return self._out_shape

    def _output_side(self, name, shape):
        """A cotangent (or its tangent) of the first output: real where a complex case's output is
        real (abs of complex inputs: PyTorch, JAX and TensorFlow refuse a complex cotangent there)."""
        value = _draw(self.case, name, shape)
        return value.real.copy() if np.iscomplexobj(value) and self._out_real else value

    def __missing__(self, name):
        rec, case = self.record, self.case
        if name in rec.inputs:
            value = _draw(case, name, tuple(case.shapes[name]), rec.domains.get(name, "any"))
        elif name in ("grad_output", "cot_output", "tan_cot_output"):
            value = self._output_side(name, self.output_shapes()[0])
        elif name in ("batched_grad_output", "batched_cot_output", "batched_tan_cot_output"):
            # the per-sample outputs' cotangents (and their tangents), batch dim first
            value = self._output_side(name, (vmap_spec(case)[0], *self.output_shapes()[0]))
        elif name.startswith("batched_tan1_") and name[13:] in rec.inputs:
            # every sample's tangent, batch dim first (a shared input too: each sample its own)
            value = _draw(case, name, (vmap_spec(case)[0], *case.shapes[name[13:]]))
        elif name.startswith("batched_") and name[8:] in rec.inputs:
            size, dims = vmap_spec(case)
            base = name[8:]
            dim = dims[rec.inputs.index(base)]
            if dim is None:
                raise KeyError(name)
            shape = batched_shape(case.shapes[base], dim, size)
            value = _draw(case, name, shape, rec.domains.get(base, "any"))
        elif name.startswith(("tangent_", "gg_", "tan1_", "tan2_")):
            base = name.split("_", 1)[1]
            if base not in rec.inputs:
                raise KeyError(name)
            value = _draw(case, name, tuple(case.shapes[base]))
        else:
            raise KeyError(name)
        self[name] = value
        return value


def _seeds(rec, check) -> list[str]:
    """The cotangents and tangents an unbatched ``check`` of record ``rec`` hands the framework."""
    names = []
    if check in ("vjp", "vjp_vjp"):
        names.append("grad_output")
    if check == "vjp_vjp":
        names += [f"gg_{n}" for n in rec.diff_inputs]
    if check == "jvp":
        names += [f"tangent_{n}" for n in rec.diff_inputs]
    if check == "jvp_jvp":
        names += [f"tan1_{n}" for n in rec.diff_inputs] + [f"tan2_{n}" for n in rec.diff_inputs]
    if check == "vjp_jvp":
        names += [f"tan1_{n}" for n in rec.diff_inputs] + ["cot_output"]
    if check in ("jvp_vjp", "vmap_jvp_vjp"):
        names += ["cot_output"] + [f"tan1_{n}" for n in rec.diff_inputs] + ["tan_cot_output"]
    return names


def seed_names(op: str) -> set[str]:
    """The cotangents and tangents some check of record ``op`` hands the framework (their unbatched
    names: a vmap check's ``batched_cot_output`` is ``cot_output`` here)."""
    rec = RECORDS[op]
    return {n for check in rec.checks for n in _seeds(rec, check)}


def check_arrays(case, check) -> list[str]:
    rec = RECORDS[case.op]
    names = list(rec.inputs)
    if check != "vmap_jvp_vjp":
        names += _seeds(rec, check)
    if check in VMAP_CHECKS:
        dims = vmap_spec(case)[1]
        names += [f"batched_{n}" for n, d in zip(rec.inputs, dims) if d is not None]
    if check == "vmap_vjp":
        names.append("batched_grad_output")
    if check == "vmap_jvp_vjp":
        names += ["batched_cot_output"] + [f"batched_tan1_{n}" for n in rec.diff_inputs]
        names.append("batched_tan_cot_output")
    return names


# ---- what the harness asks of a record's case (conformance.case.RecordCase's methods) -----------------
# the coverage feature keys of a domain's hard point reached by a case are its reach cells
# (conformance.ops._domains.CELLS): ``at=input:pole 0`` (an element on it), ``near=input:pole 0``
# (another within NEAR of it)


def param_features(key, value) -> list[str]:
    """The coverage features of one of a record case's op parameters (its value's form, bucketed)."""
    if isinstance(value, bool):
        return [f"{key}={value}"]
    if value is None:
        return [f"{key}=None"]
    if isinstance(value, int):
        return [f"{key}<0" if value < 0 else f"{key}={value}" if value <= 1 else f"{key}>1"]
    if isinstance(value, float):
        return [f"{key}=0" if value == 0 else f"{key}!=0"]
    if isinstance(value, str):
        return [f"{key}={value}"] if len(value) <= 24 else []
    if isinstance(value, (list, tuple)) and len(value) <= 8:
        flat = [v for v in value if isinstance(v, int) and not isinstance(v, bool)]
        out = [f"len({key})>1"] if len(value) > 1 else []
        if flat and any(v > 1 for v in flat):
            out.append(f"{key}>1")
        if flat and any(v < 0 for v in flat):
            out.append(f"{key}<0")
        if flat and any(v == 0 for v in flat):
            out.append(f"{key}=0")
        return out
    return []


def reached_points(case) -> list[str]:
    """``at=<input>:<point>`` and ``near=<input>:<point>`` for each hard point of a record input's
    domain (conformance.ops._domains) that some element of the case's drawn input lies exactly on,
    and some other lies near (:meth:`~conformance.ops._domains.Point.cells`); in a complex dtype,
    of the record's points of the plane (:data:`PLANE_POINTS`, :meth:`~conformance.ops._domains.PlanePoint.cells`)."""
    rec = RECORDS.get(case.op)
    if rec is not None and case.dtype in PART_DTYPE:  # complex draws: the points of the plane
        declared = PLANE_POINTS.get(case.op, {})
        data = RecordData(case) if declared else {}
        return [
            f"{cell}={name}:{p.label}"
            for name, points in declared.items()
            if name in case.shapes
            for p in points
            for cell in p.cells(data[name], PART_DTYPE[case.dtype])
        ]
    if rec is None or not rec.domains:
        return []
    data, out, params = RecordData(case), [], case.params.as_dict()
    for name, declared in rec.domains.items():
        domain = as_domain(declared)
        if domain.points and name in case.shapes:
            out += [f"{cell}={name}:{label}" for label, cell in domain.reach(data[name], case.dtype, params)]
    return out


def record_features(case) -> list[str]:
    """A record case's coverage features (:meth:`conformance.case.Case.features`): its shapes, its
    draw (values, invalid, in_dims), the hard points it reached, its op parameters and spellings."""
    params = case.params.as_dict()
    out = shape_features(case.shapes)
    out.append(f"values={params.get('values', 'normal')}")
    if "invalid" in params:
        out.append(f"invalid={params['invalid']}")
    if "in_dims" in params:
        dims = params["in_dims"]
        if any(d is None for d in dims):
            out.append("in_dims=None")
        if any(d is not None and d < 0 for d in dims):
            out.append("in_dims<0")
        if any(d is not None and d > 0 for d in dims):
            out.append("in_dims>0")
        out.append("vmap_size=1" if params.get("vmap_size", 2) == 1 else "vmap_size>1")
    out += reached_points(case)
    for key, value in sorted(params.items()):
        if key not in HARNESS_PARAMS:
            out += param_features(key, value)
        elif key in SPELLING_PARAMS.values():  # each public spelling is a feature to reach
            out.append(f"{key}={value}")
    return out


def record_rejects(case) -> str | None:
    """The reference's rejection of an error case (``TypeName: message``), or None if it accepts.

    Only a case drawn from the record's ``invalid`` strategy (``params["invalid"]``) is asked: the
    valid ones are valid by construction, and running their forward twice would cost time."""
    if "invalid" not in case.params.as_dict():
        return None

    rec = RECORDS[case.op]
    a = RecordData(case)
    try:
        with np.errstate(all="ignore"):
            rec.fn(T, *[T.tensor(a[n]) for n in rec.inputs], **op_params(case))
    except Exception as exc:  # the reference rejects the input: that is the expected outcome
        return f"{type(exc).__name__}: {exc}"
    return None


def moving_params_in_dtype(op, params: dict, dtype: str) -> dict | None:
    """``params`` with each parameter a moving point of record ``op`` moves with (hardtanh's lo and
    hi) rounded to ``dtype`` (:func:`conformance.case.round_to_dtype`, as the case's elements are),
    so that the point a case claims (its ``at`` element: the parameter in the dtype) is the kink the
    framework and the reference compute at: a float16 clamp bound 1e-5 would put the ``at``
    element at 1.0014e-05, beside a kink at 1e-5. None where one overflows the dtype (70000 in
    float16): no finite element of the dtype lies at or beyond that kink. Complex dtypes (no moving
    point of the plane) keep ``params``. Drawn cases (conformance.coverage.record_strategy) and
    cases read from JSON (:func:`params_in_dtype`) both go through it."""
    out, overflowing = _rounded_moving_params(op, params, dtype)
    return None if overflowing else out


def _rounded_moving_params(op, params: dict, dtype: str) -> tuple[dict, str | None]:
    """(``params`` with the moving points' parameters rounded to ``dtype``, the first parameter
    that overflows it or None)."""
    rec = RECORDS.get(op)
    if rec is None or dtype in PART_DTYPE:
        return params, None
    names = {p.param for d in rec.domains.values() for p in as_domain(d).points if p.param}
    out = dict(params)
    for name in sorted(names & set(params)):
        value = params[name]
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        with np.errstate(over="ignore"):  # an overflow is the caller's to refuse
            rounded = float(round_to_dtype(value, dtype))
        if not math.isfinite(rounded):
            return out, name
        out[name] = rounded
    return out, None


def params_in_dtype(case, source: str):
    """A record case read from JSON (a ``--cases`` file, a results file) with its moving points'
    parameters rounded to its dtype, as a drawn case's are (:func:`moving_params_in_dtype`): a
    float16 case file's clamp min 1e-5 is 1.0014e-05 to the framework, which takes the bound in
    the input's dtype, and must be to the reference too. An error case (``params["invalid"]``)
    keeps its parameters, as its drawn cases do. Raises CaseError where a parameter overflows the
    dtype."""
    params = case.params.as_dict()
    if "invalid" in params:
        return case
    out, overflowing = _rounded_moving_params(case.op, params, case.dtype)
    if overflowing:
        raise CaseError(
            source,
            f"params.{overflowing}",
            f"{params[overflowing]!r} overflows {case.dtype}: a parameter of {case.op}'s moving "
            f"point is rounded to the case's dtype, and must lie within its range",
        )
    return case if out == params else replace(case, params=RecordParams.of(out))


def _load():
    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"{__name__}.{m.name}")
    importlib.import_module(f"{__name__}._spellings")  # other entry points of the records above


def _parse(raw, source):
    return params_in_dtype(parse_record_case(raw, source, RECORDS[raw["op"]], RecordParams.of), source)


_load()
# the op records' cases are loadable by conformance.case (which owns the table of case kinds)
register_kind(CaseKind("record", fuzzed, _parse, RecordData, check_arrays, record_features, record_rejects))

__all__ = [
    "RECORDS",
    "ORDER_CHECKS",
    "RECORD_CHECKS",
    "VMAPPED",
    "VMAP_CHECKS",
    "HARNESS_PARAMS",
    "PRIMARY",
    "SPELLING_PARAMS",
    "spelling_name",
    "batched_shape",
    "vmap_spec",
    "OpRecord",
    "RecordData",
    "RecordParams",
    "VALUES",
    "WHOLE",
    "NEAR",
    "POINT",
    "PLANE_POINTS",
    "plane_point",
    "check_arrays",
    "seed_names",
    "CELLS",
    "AT",
    "record_features",
    "record_rejects",
    "covered_rules",
    "families",
    "fuzzed",
    "not_fuzzed",
    "moving_params_in_dtype",
    "op_params",
    "params_in_dtype",
    "record",
    "select",
]
