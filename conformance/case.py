"""The Case: one JSON-serialisable description of a conformance check.

A case names an operation (``"conv"``), its parameters, the input shapes (always in the
reference's channels-first layout: input ``(N, C, *spatial)``, weight ``(O, C/groups, *k)`` or,
transposed, ``(C, O/groups, *k)``), a dtype, where its data comes from (a seed, optionally
overridden by explicit arrays) and which checks to run. Strategies produce cases,
``refgrad/cases/*.json`` store them, adapters consume them, results name them by :attr:`Case.id`.
Nothing else carries a case.

Loading validates *structure* (types, lengths, known names) and raises :class:`CaseError`
naming the file, the field and the problem. Whether a configuration is a legal convolution is
the reference's business (``reference.conv.ConvConfigError``): invalid configurations are
legitimate cases for the ``error`` check.
"""

from __future__ import annotations

import hashlib
import json
import math
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from reference.conv import ConvConfigError, conv_output_shape
from reference.conv.geometry import plan

CHECKS = (
    "forward",
    "vjp",
    "vjp_vjp",
    "jvp",
    "vmap",
    "vmap_vjp",
    "jvp_jvp",
    "vjp_jvp",
    "jvp_vjp",
    "vmap_jvp_vjp",
    "error",
)
VALID_CHECKS = CHECKS[:-1]
# The checks a convolution case runs: its adapters and expected values predate the op records and
# have no second-order forward-mode checks (jvp_jvp, vjp_jvp, jvp_vjp, vmap_jvp_vjp: op records only).
CONV_CHECKS = VALID_CHECKS[:6]
# A program case (op "program", see conformance.programs) has one check: run the program text and
# compare every result, every leaf's gradient and whether and where an error is raised.
PROGRAM_CHECKS = ("program",)
OPS = ("conv", "program")
#: the bytes of one float64 element (the unit of :meth:`Case.estimate_bytes`)
ITEM = 8


@dataclass(frozen=True)
class CaseKind:
    """A kind of case besides convolution and programs, registered by the package that defines it
    (``conformance.ops`` registers the op records when it is imported; ``conformance/__init__``
    imports it, so every loaded case file sees it). This module owns the table and imports nobody:
    the layers above it plug in, as the reference's primitives register into the autograd core.

    ``ops()``: the op names of this kind; ``parse(raw, source)``: a :class:`Case` from its JSON
    object; ``data(case)``: its arrays by name; ``arrays(case, check)``: the names ``check`` reads;
    ``features(case)``: its coverage features (:meth:`Case.features`; by default its shapes');
    ``rejects(case)``: the reference's rejection of it, or None (:meth:`Case.rejects`; by default
    None: a kind registered before these two existed keeps working)."""

    name: str
    ops: object
    parse: object
    data: object
    arrays: object
    features: object = field(default=lambda case: shape_features(case.shapes))
    rejects: object = field(default=lambda case: None)


_KINDS: list[CaseKind] = []


def register_kind(kind: CaseKind) -> None:
    """Make the cases of ``kind`` loadable (replaces a kind of the same name: a module reloaded)."""
    _KINDS[:] = [k for k in _KINDS if k.name != kind.name] + [kind]


def _kind_of(op):
    return next((k for k in _KINDS if op in k.ops()), None)


DTYPES = ("float64", "float32", "float16", "bfloat16")
#: Complex dtypes: op-record cases of the records declared complex-capable, and program cases
#: (conformance.ops.complex.COMPLEX_RECORDS); not in DTYPES, so the default campaign stays real.
COMPLEX_DTYPES = ("complex64", "complex128")
#: The real dtype of a complex dtype's parts (its unit roundoff and range are that dtype's).
PART_DTYPE = {"complex64": "float32", "complex128": "float64"}
#: Mixed-precision policies of program cases (``Case.amp``; conformance.amp): selected by ``--dtypes``
#: like a dtype; not in DTYPES, so the default campaign runs none. A case's ``dtype`` is the policy's
#: variable dtype, AMP_VARIABLES.
AMP_POLICIES = ("mixed_bfloat16", "mixed_float16")
AMP_VARIABLES = "float32"
LAYOUTS = ("channels_first", "channels_last")
PADDING_STRINGS = ("valid", "same", "same_lower")
VMAP_OPERANDS = ("input", "weight")


class CaseError(ValueError):
    """A malformed case: names the source (file), the field and the problem."""

    def __init__(self, source: str, field_name: str, problem: str):
        self.source, self.field, self.problem = source, field_name, problem
        super().__init__(f"{source}: field '{field_name}': {problem}")


@dataclass(frozen=True)
class ConvParams:
    """Convolution parameters, per spatial dim. ``padding`` keeps the form it was written in."""

    rank: int
    stride: tuple[int, ...]
    padding: object  # str | tuple[int, ...] | tuple[tuple[int, int], ...]
    dilation: tuple[int, ...]
    groups: int = 1
    transposed: bool = False
    output_padding: tuple[int, ...] = ()
    bias: bool = True
    layout: str = "channels_first"

    def to_dict(self) -> dict:
        pad = self.padding
        if not isinstance(pad, (str, int)):
            pad = [list(p) if isinstance(p, (tuple, list)) else p for p in pad]
        return {
            "rank": self.rank,
            "stride": list(self.stride),
            "padding": pad,
            "dilation": list(self.dilation),
            "groups": self.groups,
            "transposed": self.transposed,
            "output_padding": list(self.output_padding),
            "bias": self.bias,
            "layout": self.layout,
        }

    def geometry(self) -> tuple:
        """(stride, padding, dilation, transposed, output_padding, groups): aten's positional order,
        which ``conv_output_shape``, ``convolution_backward`` and the double backward take."""
        return (self.stride, self.padding, self.dilation, self.transposed, self.output_padding, self.groups)

    def reference_kwargs(self) -> dict:
        """The keyword arguments of ``reference.conv.convolution`` (and its backward)."""
        return {
            "stride": self.stride,
            "padding": self.padding,
            "dilation": self.dilation,
            "transposed": self.transposed,
            "output_padding": self.output_padding,
            "groups": self.groups,
        }

    def describe(self) -> str:
        kind = "conv_transpose" if self.transposed else "conv"
        bits = [f"{kind}{self.rank}d", f"stride={list(self.stride)}", f"padding={self.padding!r}"]
        if any(d != 1 for d in self.dilation):
            bits.append(f"dilation={list(self.dilation)}")
        if self.groups != 1:
            bits.append(f"groups={self.groups}")
        if any(self.output_padding):
            bits.append(f"output_padding={list(self.output_padding)}")
        if not self.bias:
            bits.append("bias=False")
        if self.layout != "channels_first":
            bits.append(self.layout)
        return " ".join(bits)


@dataclass(frozen=True)
class Case:
    """A case of one of three formats, each its own type behind this protocol (``Case(...)`` and
    :meth:`from_dict` give the type of the ``op``: :func:`case_type`):

    - :class:`ConvCase` (op ``"conv"``): a convolution, ``params`` a :class:`ConvParams`;
    - :class:`ProgramCase` (op ``"program"``): a program's text (``source``), its inputs' shapes and
      an optional mixed-precision policy (``amp``); ``params`` None;
    - :class:`RecordCase` (any other op): an op record's case (``conformance.ops``, which registers
      the records' :class:`CaseKind`), ``params`` the record's params type.

    The protocol: ``kind`` (the format's name, which the harness reads instead of the op),
    :meth:`describe`, :meth:`to_dict` and ``parse`` (JSON), :meth:`arrays` and :meth:`arrays_for`
    (the data a check reads), :meth:`size` (the order shrinking keeps the smallest by),
    :meth:`features` (its coverage cell's features), :meth:`rejects` (whether the reference rejects
    it) and :meth:`estimate_bytes` (its memory budget unit)."""

    #: the format: "conv", "program" or "record" (the harness dispatches on it, never on ``op``)
    kind: ClassVar[str] = ""

    op: str
    params: ConvParams | None  # None for a program case
    shapes: dict  # name -> tuple of ints; "input" and "weight" (a program: its inputs "v0", "v1", ...)
    dtype: str = "float64"
    seed: int = 0
    checks: tuple[str, ...] = CONV_CHECKS
    vmap_size: int = 2
    vmap_over: tuple[str, ...] = VMAP_OPERANDS
    data: dict = field(default_factory=dict, compare=False, hash=False)  # name -> nested lists
    description: str = ""
    name: str = ""  # a readable id for curated cases; the content hash otherwise
    source: str = ""  # a program case's Python text: ``def prog(T, v0, ...)``
    amp: str = ""  # a program case's mixed-precision policy (AMP_POLICIES; conformance.amp), "" for none

    def __new__(cls, *args, **kwargs):
        if cls is Case:  # ``Case(op, ...)``: the type of the op's format
            cls = case_type(args[0] if args else kwargs["op"])
        return super().__new__(cls)

    @property
    def selector(self) -> str:
        """What ``--dtypes`` selects this case by: its dtype, or its mixed-precision policy."""
        return self.amp or self.dtype

    # ---- identity ------------------------------------------------------------------------
    @property
    def id(self) -> str:
        if self.name:
            return self.name
        body = self.to_dict()
        for key in ("description", "name"):
            body.pop(key, None)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        return f"{self.op}-{digest[:12]}"

    def with_checks(self, checks) -> Case:
        return replace(self, checks=tuple(checks))

    def geometry(self) -> dict | None:
        """Derived fields a known entry's region may read (``geometry.*``): a convolution's; None
        for the other formats."""
        return None

    def describe(self) -> str:
        raise NotImplementedError(type(self).__name__)

    # ---- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {
            "op": self.op,
            "params": self.params.to_dict() if self.params else None,
            "shapes": {k: list(v) for k, v in self.shapes.items()},
            "dtype": self.dtype,
            "seed": self.seed,
            "checks": list(self.checks),
            "vmap": {"size": self.vmap_size, "over": list(self.vmap_over)},
        }
        self._format(out)
        if self.data:
            out["data"] = self.data
        if self.description:
            out["description"] = self.description
        if self.name:
            out["id"] = self.name
        return out

    def _format(self, out: dict) -> None:
        """The format's own fields of :meth:`to_dict` (in place, before data, description and id)."""

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    # ---- the data a check reads, the size order ------------------------------------------
    def arrays(self) -> dict:
        """The case's arrays by name (made on first use where the format allows)."""
        raise NotImplementedError(type(self).__name__)

    def arrays_for(self, check: str) -> list:
        """The array names ``check`` reads (made before it is timed)."""
        raise NotImplementedError(type(self).__name__)

    def size(self) -> tuple:
        """A size order for cases of this format (smaller first): shrinking keeps the smallest failing one."""
        return (sum(math.prod(s) for s in self.shapes.values()), self.to_json())

    # ---- what the harness asks of every format -------------------------------------------
    def features(self) -> list[str]:
        """The format's coverage features of the case (conformance.coverage.features adds the dtype,
        sorts them and drops repeats)."""
        raise NotImplementedError(type(self).__name__)

    def rejects(self) -> str | None:
        """The reference's rejection of the case (its message), or None where it accepts it."""
        raise NotImplementedError(type(self).__name__)

    def estimate_bytes(self) -> int:
        """A generous upper estimate of the bytes one process needs to run the case (any check):
        its arrays, an im2col workspace where its shapes are a convolution's, twice over for vmap."""
        try:
            shapes = array_shapes(self)
        except Exception:  # noqa: BLE001 - an invalid configuration (or a record): count what the case states
            shapes = dict(self.shapes)
        arrays = sum(math.prod(s) for s in shapes.values())
        x, w = self.shapes.get("input", ()), self.shapes.get("weight", ())
        y = shapes.get("grad_output", ())
        workspace = 0
        if len(x) >= 2 and len(w) >= 2 and y:
            # im2col: N * prod(out spatial) rows of C_in * prod(kernel) columns (and its transpose path)
            workspace = x[0] * math.prod(y[2:]) * x[1] * math.prod(w[2:])
            workspace = max(workspace, math.prod(x) * math.prod(w[2:]))
        batch = max(self.vmap_size, 1)
        # values + magnitudes (x2); vmap checks repeat per sample (the loop holds one sample's workspace)
        return ITEM * (2 * arrays + 2 * workspace) * (1 if batch <= 1 else 2)

    @classmethod
    def from_dict(cls, raw, source: str = "<dict>") -> Case:
        return _parse_case(raw, source)

    @classmethod
    def from_json(cls, text: str, source: str = "<string>") -> Case:
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CaseError(source, "<json>", f"not valid JSON: {exc}") from None
        return _parse_case(raw, source)


class ConvCase(Case):
    """A convolution: ``params`` a :class:`ConvParams`, ``shapes`` its ``input`` and ``weight``."""

    kind = "conv"

    def describe(self) -> str:
        return (
            f"{self.params.describe()} input={list(self.shapes['input'])} "
            f"weight={list(self.shapes['weight'])} {self.dtype}"
        )

    @classmethod
    def parse(cls, raw, source) -> Case:
        return _parse_conv_case(raw, source)

    def geometry(self) -> dict | None:
        """Per spatial dim D of a plain (not transposed) convolution: ``padding_read[D]``, the pads
        [low, high read] its output windows read, and ``out[D]``, the output length. A window
        starts at each stride step of the padded input, so its last ``(padded - dilated kernel) mod
        stride`` positions may be read by none, and a compiler may drop them: XLA computes padding
        (-1, 2) at stride 2 over 4 elements with a 2-wide kernel as (-1, 1), and its bugs follow
        the pads it computes (known regions read them: conformance/known.py)."""
        p = self.params
        if p.transposed:
            return None
        try:
            corr = plan(
                self.shapes["input"], self.shapes["weight"], p.stride, p.padding, p.dilation, False, 0, p.groups
            ).corr
        except ConvConfigError:
            return None
        read = [
            [lo, hi - (x + lo + hi - kd) % s if x + lo + hi >= kd else hi]
            for x, (lo, hi), kd, s in zip(corr.in_size, corr.pads, corr.dilated_kernel, corr.stride)
        ]
        return {"padding_read": read, "out": list(corr.out_size)}

    def arrays(self) -> CaseData:
        return CaseData(self)

    def arrays_for(self, check: str) -> list:
        return list(CHECK_ARRAYS[check])

    def size(self) -> tuple:
        return (math.prod(self.shapes["input"]) + math.prod(self.shapes["weight"]), self.to_json())

    def features(self) -> list[str]:
        p = self.params
        out = shape_features({"input": self.shapes["input"], "weight": self.shapes["weight"]})
        out.append(f"rank={p.rank}")
        if p.transposed:
            out.append("transposed")
        if any(p.output_padding):
            out.append("output_padding>0")
        if p.groups > 1:
            out.append("groups>1")
        if any(s > 1 for s in p.stride):
            out.append("stride>1")
        if any(d > 1 for d in p.dilation):
            out.append("dilation>1")
        if self.shapes["input"] and self.shapes["input"][0] == 0:
            out.append("batch_empty")
        if isinstance(p.padding, str):
            out.append(f"padding={p.padding}")
        if p.layout != "channels_first":
            out.append(p.layout)
        if not p.bias:
            out.append("bias=False")
        if set(self.checks) & {"vmap", "vmap_vjp"}:
            out.append("vmap over " + "+".join(self.vmap_over))
        return out

    def rejects(self) -> str | None:
        """The reference's ConvConfigError message for this configuration, or None if it is valid."""
        try:
            conv_output_shape(self.shapes["input"], self.shapes["weight"], *self.params.geometry())
        except ConvConfigError as exc:
            return str(exc)
        return None


class ProgramCase(Case):
    """A program (conformance.programs): its text ``source`` (``def prog(T, v0, ...)``), the shapes
    of its inputs ``v0, v1, ...``, an optional mixed-precision policy ``amp``; one check, ``program``."""

    kind = "program"

    def describe(self) -> str:
        inputs = " ".join(f"{k}={list(v)}" for k, v in self.shapes.items())
        what = f"{self.dtype} under {self.amp}" if self.amp else self.dtype
        return f"program of {self.source.count(chr(10)) - 2} lines {inputs} {what}"

    def _format(self, out: dict) -> None:
        del out["params"], out["vmap"]
        out["source"] = self.source
        if self.amp:  # (absent otherwise: the ids of cases without a policy are unchanged)
            out["amp"] = self.amp

    @classmethod
    def parse(cls, raw, source) -> Case:
        return _parse_program_case(raw, source)

    def arrays(self) -> dict:
        """The input arrays ``v0, v1, ...`` (seeded, or the case's explicit data). A complex
        program's seeded leaves get an imaginary part of their own draw (exact in the dtype)."""
        arrays = {name: make_array(self, name, shape) for name, shape in self.shapes.items()}
        if self.dtype in COMPLEX_DTYPES:
            for name, shape in self.shapes.items():
                if name not in self.data:
                    rng = np.random.default_rng([self.seed, zlib.crc32(f"{name}.imag".encode())])
                    imag = round_to_dtype(rng.standard_normal(shape), self.dtype).real
                    arrays[name] = arrays[name] + 1j * imag
        return arrays

    def arrays_for(self, check: str) -> list:
        return list(self.shapes)

    def size(self) -> tuple:  # fewer lines first, then fewer input elements
        return (self.source.count("\n"), sum(math.prod(s) for s in self.shapes.values()), self.source)

    def features(self) -> list[str]:
        return shape_features(self.shapes)

    def rejects(self) -> None:
        """None: a program has no configuration to reject (whether it raises is its outcome)."""
        return None

    def estimate_bytes(self) -> int:
        inputs = sum(math.prod(s) for s in self.shapes.values())
        # a program of S statements holds at most a few tensors of at most this size each, and
        # their gradients; a generous factor over the inputs, plus a broadcast of the largest pair
        biggest = max((math.prod(s) for s in self.shapes.values()), default=0)
        lines = max(self.source.count("\n"), 1)
        return ITEM * (4 * inputs * lines + biggest * biggest if biggest < 1 << 16 else 4 * inputs * lines)


class RecordCase(Case):
    """An op record's case (conformance.ops): ``params`` the record's params type, ``shapes`` its named
    tensor inputs. Its arrays are the registered :class:`CaseKind`'s."""

    kind = "record"

    def describe(self) -> str:
        shapes = " ".join(f"{k}={list(v)}" for k, v in self.shapes.items())
        return f"{self.op} {self.params.describe()} {shapes} {self.dtype}".replace("  ", " ")

    def _format(self, out: dict) -> None:
        del out["vmap"]

    @classmethod
    def parse(cls, raw, source) -> Case:
        kind = _kind_of(raw["op"])
        if kind is None:
            others = sorted(name for k in _KINDS for name in k.ops())
            raise CaseError(source, "op", f"unknown operation {raw['op']!r} (known: {list(OPS) + others})")
        return kind.parse(raw, source)

    def arrays(self):
        return _kind_of(self.op).data(self)

    def arrays_for(self, check: str) -> list:
        return _kind_of(self.op).arrays(self, check)

    def features(self) -> list[str]:
        return _kind_of(self.op).features(self)

    def rejects(self) -> str | None:
        """The reference's rejection of an error case (``TypeName: message``; only a case drawn from
        the record's ``invalid`` strategy is asked), or None."""
        return _kind_of(self.op).rejects(self)


def shape_features(shapes: dict) -> list[str]:
    """The coverage features of a case's input shapes: empty, scalar, broadcast, large."""
    out = []
    values = [tuple(s) for s in shapes.values()]
    if any(0 in s for s in values):
        out.append("empty")
    if any(len(s) == 0 for s in values):
        out.append("scalar")
    if len(set(values)) > 1:
        out.append("broadcast")
    if any(math.prod(s) >= 4096 for s in values):
        out.append("large")
    return out


#: the types of the formats with an op name of their own; every other op is an op record's
_TYPES = {"conv": ConvCase, "program": ProgramCase}


def case_type(op) -> type[Case]:
    """The case type of cases of ``op``: :class:`ConvCase`, :class:`ProgramCase` or :class:`RecordCase`."""
    return _TYPES.get(op, RecordCase)


def case_kind(op) -> str:
    """The format of a case of ``op`` (of a result's case dict: ``case_kind(case.get("op"))``)."""
    return case_type(op).kind


# ---- parsing ------------------------------------------------------------------------------


def _int(source, name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise CaseError(source, name, f"must be an int, got {value!r}")
    if minimum is not None and value < minimum:
        raise CaseError(source, name, f"must be >= {minimum}, got {value}")
    return value


def _ints(source, name, value, rank, minimum=None) -> tuple[int, ...]:
    """int (broadcast to every dim) or a list of ``rank`` ints. Range rules are the reference's."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * rank
    if not isinstance(value, (list, tuple)) or len(value) != rank:
        raise CaseError(
            source, name, f"must be an int or a list of {rank} ints (one per spatial dim), got {value!r}"
        )
    return tuple(_int(source, f"{name}[{i}]", v, minimum) for i, v in enumerate(value))


def _padding(source, value, rank):
    name = "params.padding"
    if isinstance(value, str):
        if value.lower() not in PADDING_STRINGS:
            raise CaseError(source, name, f"padding string must be one of {PADDING_STRINGS}, got {value!r}")
        return value.lower()
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * rank
    if not isinstance(value, (list, tuple)) or len(value) != rank:
        raise CaseError(source, name, f"must be a string, an int, or a list of {rank} ints or [lo, hi] pairs")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    pairs = []
    for i, v in enumerate(value):
        if isinstance(v, int) and not isinstance(v, bool):
            v = (v, v)
        if not isinstance(v, (list, tuple)) or len(v) != 2:
            raise CaseError(source, f"{name}[{i}]", f"must be an int or a [lo, hi] pair, got {v!r}")
        pairs.append((_int(source, f"{name}[{i}][0]", v[0]), _int(source, f"{name}[{i}][1]", v[1])))
    return tuple(pairs)


def _require(source, raw, key, kind):
    if key not in raw:
        raise CaseError(source, key, "is missing")
    if not isinstance(raw[key], kind):
        raise CaseError(source, key, f"must be a {getattr(kind, '__name__', kind)}, got {raw[key]!r}")
    return raw[key]


def _parse_params(source, raw) -> ConvParams:
    known = {
        "rank",
        "stride",
        "padding",
        "dilation",
        "groups",
        "transposed",
        "output_padding",
        "bias",
        "layout",
    }
    unknown = sorted(set(raw) - known)
    if unknown:
        raise CaseError(source, f"params.{unknown[0]}", f"unknown parameter (known: {sorted(known)})")
    rank = _int(source, "params.rank", raw.get("rank"), 1)
    if rank > 3:
        raise CaseError(source, "params.rank", f"must be 1, 2 or 3, got {rank}")
    transposed = raw.get("transposed", False)
    bias = raw.get("bias", True)
    for name, value in (("transposed", transposed), ("bias", bias)):
        if not isinstance(value, bool):
            raise CaseError(source, f"params.{name}", f"must be true or false, got {value!r}")
    layout = raw.get("layout", "channels_first")
    if layout not in LAYOUTS:
        raise CaseError(source, "params.layout", f"must be one of {LAYOUTS}, got {layout!r}")
    return ConvParams(
        rank=rank,
        stride=_ints(source, "params.stride", raw.get("stride", 1), rank),
        padding=_padding(source, raw.get("padding", 0), rank),
        dilation=_ints(source, "params.dilation", raw.get("dilation", 1), rank),
        groups=_int(source, "params.groups", raw.get("groups", 1)),
        transposed=transposed,
        output_padding=_ints(source, "params.output_padding", raw.get("output_padding", 0), rank),
        bias=bias,
        layout=layout,
    )


def _parse_case(raw, source) -> Case:
    if not isinstance(raw, dict):
        raise CaseError(source, "<root>", f"a case is a JSON object, got {type(raw).__name__}")
    op = _require(source, raw, "op", str)
    return case_type(op).parse(raw, source)


def _parse_conv_case(raw, source) -> ConvCase:
    """A convolution case: ``params``, ``shapes`` (input, weight), dtype, seed, checks, vmap, data."""
    op = raw["op"]
    known = {"op", "params", "shapes", "dtype", "seed", "checks", "vmap", "data", "description", "id"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise CaseError(source, unknown[0], f"unknown field (known: {sorted(known)})")
    params = _parse_params(source, _require(source, raw, "params", dict))
    shapes_raw = _require(source, raw, "shapes", dict)
    shapes = {}
    for key in ("input", "weight"):
        value = shapes_raw.get(key)
        if not isinstance(value, list) or len(value) != params.rank + 2:
            raise CaseError(
                source,
                f"shapes.{key}",
                f"must be a list of {params.rank + 2} ints "
                f"(channels-first, rank {params.rank}), got {value!r}",
            )
        shapes[key] = tuple(_int(source, f"shapes.{key}[{i}]", v, 0) for i, v in enumerate(value))
    extra = sorted(set(shapes_raw) - {"input", "weight"})
    if extra:
        raise CaseError(source, f"shapes.{extra[0]}", "unknown shape (known: input, weight)")
    dtype = raw.get("dtype", "float64")
    if dtype not in DTYPES:
        raise CaseError(source, "dtype", f"must be one of {DTYPES}, got {dtype!r}")
    seed = _int(source, "seed", raw.get("seed", 0), 0)
    checks = _checks(source, raw.get("checks", list(CONV_CHECKS)), CONV_CHECKS + ("error",))
    vmap = raw.get("vmap", {})
    if not isinstance(vmap, dict):
        raise CaseError(source, "vmap", f"must be an object {{size, over}}, got {vmap!r}")
    vmap_size = _int(source, "vmap.size", vmap.get("size", 2), 1)
    over = vmap.get("over", list(VMAP_OPERANDS))
    if not isinstance(over, list) or not over or any(o not in VMAP_OPERANDS for o in over):
        raise CaseError(
            source, "vmap.over", f"must be a non-empty list drawn from {VMAP_OPERANDS}, got {over!r}"
        )
    data = _data(source, raw, ARRAY_NAMES)
    description, name = _strings(source, raw, "description", "id")
    return ConvCase(
        op, params, shapes, dtype, seed, tuple(checks), vmap_size, tuple(over), data, description, name
    )


def _checks(source, checks, allowed) -> list:
    if isinstance(checks, str):
        checks = [checks]
    if not isinstance(checks, list) or not checks:
        raise CaseError(source, "checks", f"must be a non-empty list of {allowed}, got {checks!r}")
    for c in checks:
        if c not in allowed:
            raise CaseError(source, "checks", f"unknown check {c!r} (known: {allowed})")
    return checks


def _data(source, raw, names, complex_values=False) -> dict:
    data = raw.get("data", {})
    if not isinstance(data, dict):
        raise CaseError(source, "data", "must be an object mapping array names to nested lists")
    for key, value in data.items():
        if key not in names:
            raise CaseError(source, f"data.{key}", f"unknown array (known: {tuple(names)})")
        try:
            if complex_values:
                decode_array(value)
            else:
                np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            what = (
                '{"real": nested list, "imag": nested list of the same shape}'
                if complex_values
                else "a nested list of numbers"
            )
            raise CaseError(source, f"data.{key}", f"must be {what} ({exc})") from None
    return data


def encode_array(a) -> object:
    """A case's ``data`` entry: a nested list of numbers, or for a complex array
    ``{"real": [...], "imag": [...]}`` (JSON has no complex numbers; each part is exact, signed zeros,
    infinities and NaNs included, as Python's json writes floats)."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return {"real": a.real.tolist(), "imag": a.imag.tolist()}
    return a.tolist()


def decode_array(value) -> np.ndarray:
    """The array of a ``data`` entry (:func:`encode_array`'s inverse): float64, or complex128."""
    if isinstance(value, dict):
        if sorted(value) != ["imag", "real"]:
            raise ValueError(
                f"a complex array is an object with keys real and imag, got keys {sorted(value)}"
            )
        re, im = np.asarray(value["real"], dtype=np.float64), np.asarray(value["imag"], dtype=np.float64)
        if re.shape != im.shape:
            raise ValueError(f"real part has shape {re.shape}, imaginary part {im.shape}")
        out = np.empty(re.shape, dtype=np.complex128)
        out.real, out.imag = re, im  # (re + 1j*im would turn an inf part into nan)
        return out
    return np.asarray(value, dtype=np.float64)


def _strings(source, raw, *keys) -> list[str]:
    out = []
    for key in keys:
        value = raw.get(key, "")
        if not isinstance(value, str):
            raise CaseError(source, key, f"must be a string, got {value!r}")
        out.append(value)
    return out


def _parse_program_case(raw, source) -> ProgramCase:
    """A program case: ``source`` (``def prog(T, v0, ...)``), input ``shapes`` {v0: [...], ...}, a seed."""
    known = {"op", "shapes", "dtype", "seed", "checks", "data", "description", "id", "source", "amp"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise CaseError(source, unknown[0], f"unknown field of a program case (known: {sorted(known)})")
    text = _require(source, raw, "source", str)
    shapes_raw = _require(source, raw, "shapes", dict)
    names = [f"v{i}" for i in range(len(shapes_raw))]
    if sorted(shapes_raw) != sorted(names):
        raise CaseError(source, "shapes", f"a program's inputs are named {names}, got {sorted(shapes_raw)}")
    shapes = {}
    for key in names:
        value = shapes_raw[key]
        if not isinstance(value, list):
            raise CaseError(source, f"shapes.{key}", f"must be a list of ints, got {value!r}")
        shapes[key] = tuple(_int(source, f"shapes.{key}[{i}]", v, 0) for i, v in enumerate(value))
    header = f"def prog(T{''.join(', ' + n for n in names)}):"
    if not text.startswith(header):
        raise CaseError(source, "source", f"must start with {header!r}")
    try:
        compile(text, "<program>", "exec")
    except SyntaxError as exc:
        raise CaseError(source, "source", f"is not valid Python: {exc}") from None
    dtype = raw.get("dtype", "float64")
    if dtype not in DTYPES + COMPLEX_DTYPES:  # a complex program: complex leaves (conformance.programs)
        raise CaseError(source, "dtype", f"must be one of {list(DTYPES + COMPLEX_DTYPES)}, got {dtype!r}")
    amp = raw.get("amp", "")
    if amp != "" and amp not in AMP_POLICIES:
        raise CaseError(source, "amp", f"must be one of {list(AMP_POLICIES)} (or absent), got {amp!r}")
    if amp and dtype != AMP_VARIABLES:
        raise CaseError(
            source,
            "dtype",
            f"a program under the {amp!r} policy has {AMP_VARIABLES} variables: dtype must be "
            f"{AMP_VARIABLES!r}, got {dtype!r}",
        )
    seed = _int(source, "seed", raw.get("seed", 0), 0)
    checks = _checks(source, raw.get("checks", list(PROGRAM_CHECKS)), PROGRAM_CHECKS)
    data = _data(source, raw, names)
    description, name = _strings(source, raw, "description", "id")
    return ProgramCase(
        "program",
        None,
        shapes,
        dtype,
        seed,
        tuple(checks),
        data=data,
        description=description,
        name=name,
        source=text,
        amp=amp,
    )


def parse_record_case(raw, source, rec, make_params) -> RecordCase:
    """A case of an op record ``rec`` (its ``name``, ``inputs``, ``checks``, ``dtypes``): ``params``
    (the op's arguments and ``values``, made into the record's params by ``make_params``), ``shapes``
    of its named tensor inputs, dtype, seed, checks (those the record supports) and optional
    explicit ``data``. ``conformance.ops`` registers it as the op records' :class:`CaseKind`."""
    known = {"op", "params", "shapes", "dtype", "seed", "checks", "data", "description", "id"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise CaseError(source, unknown[0], f"unknown field of an op-record case (known: {sorted(known)})")
    params = raw.get("params") or {}
    if not isinstance(params, dict):
        raise CaseError(source, "params", f"must be an object, got {params!r}")
    shapes_raw = _require(source, raw, "shapes", dict)
    if sorted(shapes_raw) != sorted(rec.inputs):
        raise CaseError(
            source, "shapes", f"{rec.name!r} takes inputs {list(rec.inputs)}, got {sorted(shapes_raw)}"
        )
    shapes = {}
    for key in rec.inputs:
        value = shapes_raw[key]
        if not isinstance(value, list):
            raise CaseError(source, f"shapes.{key}", f"must be a list of ints, got {value!r}")
        shapes[key] = tuple(_int(source, f"shapes.{key}[{i}]", v, 0) for i, v in enumerate(value))
    dtype = raw.get("dtype", "float64")
    if dtype not in DTYPES + COMPLEX_DTYPES:
        raise CaseError(source, "dtype", f"must be one of {DTYPES + COMPLEX_DTYPES}, got {dtype!r}")
    if dtype not in rec.dtypes:
        what = "is not complex-capable" if dtype in COMPLEX_DTYPES else "runs in the complex dtypes only"
        raise CaseError(
            source, "dtype", f"{dtype!r}: the {rec.name!r} record {what} (its dtypes: {rec.dtypes})"
        )
    seed = _int(source, "seed", raw.get("seed", 0), 0)
    checks = _checks(source, raw.get("checks", list(rec.checks)), tuple(rec.checks))
    names = [
        *rec.inputs,
        "grad_output",
        *(f"tangent_{n}" for n in rec.inputs),
        *(f"gg_{n}" for n in rec.inputs),
    ]
    data = _data(source, raw, names, complex_values=dtype in COMPLEX_DTYPES)
    description, name = _strings(source, raw, "description", "id")
    return RecordCase(
        rec.name,
        make_params(params),
        shapes,
        dtype,
        seed,
        tuple(checks),
        data=data,
        description=description,
        name=name,
    )


def case_data(case):
    """The arrays of a case by name (:meth:`Case.arrays`)."""
    return case.arrays()


def arrays_for(case, check) -> list:
    """The array names ``check`` reads (:meth:`Case.arrays_for`)."""
    return case.arrays_for(check)


def load_cases(path) -> list[Case]:
    """Cases from a JSON file (one case object or a list of them) or, recursively, a directory."""
    path = Path(path)
    if path.is_dir():
        return [c for p in sorted(path.rglob("*.json")) for c in load_cases(p)]
    source = str(path)
    try:
        raw = json.loads(path.read_text())
    except OSError as exc:
        raise CaseError(source, "<file>", f"cannot be read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise CaseError(source, "<json>", f"not valid JSON: {exc}") from None
    if isinstance(raw, list):
        return [_parse_case(item, f"{source}[{i}]") for i, item in enumerate(raw)]
    return [_parse_case(raw, source)]


def save_case(case: Case, directory) -> Path:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{case.id}.json"
    path.write_text(case.to_json() + "\n")
    return path


# ---- data -----------------------------------------------------------------------------------
# Every array a check may need, drawn from one seeded stream per name (adding a name never
# changes another's values), rounded to the case's dtype, and returned as float64 so that the
# reference computes in float64 from exactly the values the framework sees.

ARRAY_NAMES = (
    "input",
    "weight",
    "bias",
    "grad_output",
    "tangent_input",
    "tangent_weight",
    "tangent_bias",
    "gg_input",
    "gg_weight",
    "gg_bias",
    "batched_input",
    "batched_weight",
    "batched_grad_output",
)

_OPERANDS = ("input", "weight", "bias")
CHECK_ARRAYS = {
    "forward": _OPERANDS,
    "error": _OPERANDS,
    "vjp": _OPERANDS + ("grad_output",),
    "vjp_vjp": _OPERANDS + ("grad_output", "gg_input", "gg_weight", "gg_bias"),
    "jvp": _OPERANDS + ("tangent_input", "tangent_weight", "tangent_bias"),
    "vmap": _OPERANDS + ("batched_input", "batched_weight"),
    "vmap_vjp": _OPERANDS + ("batched_input", "batched_weight", "batched_grad_output"),
}


def round_to_dtype(a: np.ndarray, dtype: str) -> np.ndarray:
    """``a`` rounded (to nearest, ties to even) to ``dtype`` and returned as float64 (a complex dtype:
    each part rounded to the part dtype, returned as complex128)."""
    if dtype in PART_DTYPE:
        c = np.asarray(a, dtype=np.complex128)
        out = np.empty(c.shape, dtype=np.complex128)
        out.real, out.imag = (
            round_to_dtype(c.real, PART_DTYPE[dtype]),
            round_to_dtype(c.imag, PART_DTYPE[dtype]),
        )
        return out
    a = np.asarray(a, dtype=np.float64)
    if dtype == "float64":
        return a.copy()
    if dtype == "float32":
        return a.astype(np.float32).astype(np.float64)
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float64)
    if dtype in ("bfloat16", "tf32"):
        return _round_mantissa(a, 7 if dtype == "bfloat16" else 10)
    raise ValueError(f"dtype={dtype!r}: not one of {DTYPES + ('tf32',)}")


def _round_mantissa(a: np.ndarray, bits: int) -> np.ndarray:
    """Round float32 values to ``bits`` explicit mantissa bits (bfloat16: 7, TF32: 10)."""
    f = np.ascontiguousarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    drop = 23 - bits
    half = (1 << (drop - 1)) - 1
    u = (u + half + ((u >> drop) & 1)) >> drop << drop
    return u.astype(np.uint32).view(np.float32).astype(np.float64).reshape(np.shape(a))


def array_shapes(case: Case) -> dict[str, tuple[int, ...]]:
    x, w = case.shapes["input"], case.shapes["weight"]
    p = case.params
    out_channels = w[1] * p.groups if p.transposed else w[0]
    b = case.vmap_size
    shapes = {
        "input": x,
        "weight": w,
        "bias": (out_channels,),
        "tangent_input": x,
        "tangent_weight": w,
        "tangent_bias": (out_channels,),
        "gg_input": x,
        "gg_weight": w,
        "gg_bias": (out_channels,),
        "batched_input": (b, *x),
        "batched_weight": (b, *w),
    }
    try:  # an invalid configuration (the ``error`` check) has no output shape
        y = conv_output_shape(
            x,
            w,
            *p.geometry(),
        )
    except ValueError:
        return shapes
    return {**shapes, "grad_output": y, "batched_grad_output": (b, *y)}


def make_array(case: Case, name: str, shape) -> np.ndarray:
    if name in case.data:
        a = np.asarray(case.data[name], dtype=np.float64)
        if a.shape != tuple(shape):
            raise CaseError(case.id, f"data.{name}", f"has shape {a.shape}, the case needs {tuple(shape)}")
    else:
        rng = np.random.default_rng([case.seed, zlib.crc32(name.encode())])
        a = rng.standard_normal(shape)
    return round_to_dtype(a, case.dtype)


class CaseData(dict):
    """Arrays of a case by name, made on first use (float64 values exact in the case's dtype)."""

    def __init__(self, case: Case):
        super().__init__()
        self.case = case
        self._shapes = None

    def __missing__(self, name):
        if name not in ARRAY_NAMES:
            raise KeyError(name)
        if self._shapes is None:
            self._shapes = array_shapes(self.case)
        if name in ("bias", "tangent_bias", "gg_bias") and not self.case.params.bias:
            value = None
        else:
            value = make_array(self.case, name, self._shapes[name])
        self[name] = value
        return value
