"""Known departures: a reviewed list that turns matching results into ``known`` and goes ``stale``.

A CI gate on stock frameworks is red every night if it fails on departures everybody already
knows (TensorFlow's empty-batch convolution shape, for one); a new regression is then invisible
among the old ones. PyTorch's OpInfo marks each known failure ``expectedFailure`` with a reason
and array-api-tests takes an ``--xfails-file``; refgrad reads a TOML (``[[departures]]`` tables;
``refgrad/cases/known_departures.toml`` ships refgrad's own: ``--known builtin``) or JSON file,
validated against ``conformance/known.schema.json``, with one entry per departure (shown as JSON):

    {"id": "tf-empty-batch-conv-shape",
     "framework": "tensorflow",             # a name, or "name:mode" for one execution mode only
     "versions": ">=2.12",                  # PEP 440 specifiers on the framework's version
     "match": {"op": "conv", "check": ["forward", "vjp"], "dtype": ["float32", "bfloat16"],
               "where": [{"path": "shapes.input.0", "op": "==", "value": 0},
                         {"path": "shapes.input.1", "op": "!=", "value": "{shapes.weight.0}"}],
     #   (a record's entry may also bound an input's values: {"path": "values.x.max", "op": "<",
     #   "value": -1} holds when every element of input x is below -1, "values.x.min" < 0 when any
     #   element is negative: the case's arrays as the framework received them, made from its seed)
               "reason": "has shape",         # a regular expression searched in the result's reason
               "settings": [{"path": "onednn", "op": "==", "value": true}]},  # the framework's own
     #   settings as its worker reported them (report.json frameworks.NAME.settings): the departure
     #   shows only on machines where they hold, and elsewhere the entry neither matches nor goes stale
     "verdict": ["fail"],                   # the verdicts this departure produces
     "reason": "...", "issue": "https://...", "reproducer": "found/conv-....json",  # beside the file
     #   (or a plain "repro/x.py" with "reproduces": the regex its output shows while the departure is
     #   there): a stale entry is confirmed by running it (conformance/stale.py)
     "flaky": false,                        # true: not deterministic, so never reported stale
     "partial": false}                      # true: only part of the region departs, and case fields
                                            # cannot tell which (a run may draw only passing cases),
                                            # so a region without a match is no evidence of a fix

A result matches an entry when the framework, the version range, every ``match`` field and one of
the expected verdicts all hold; its verdict in the report becomes ``known`` (the original verdict
and the entry's id are kept beside it; ``results.jsonl`` is never rewritten, so a later
``conformance report --known`` can reclassify). A judged result (``pass`` or a departure;
never ``unsupported``) is *in an entry's region* when everything but the verdict and the reason
pattern holds. An entry whose region the run covered but which
matched nothing is ``stale``: the departure is gone, so the entry must go (strict mode, the
default, fails the run; ``--allow-stale`` only reports it). An entry whose version range excludes
the installed version, or whose region the run never reached, does not apply.

The first matching entry in file order claims a result, so an entry whose region is wider than its
mechanism claims results that a later entry's mechanism explains, and the report names the wrong
departure. The report's known summary lists, under ``overlaps``, each group of entries that some
result matches together (the first is the one that claims it) with its count and case ids;
:meth:`KnownSet.overlaps` (or :func:`overlaps_in_run` on a results directory) lists every such
result with every entry it matches. An overlap of two entries with one mechanism is harmless;
one of two mechanisms means the first entry's region must be narrowed.

Several files can be given (``--known builtin --known ours.toml``): their entries are merged (an id
used in two files is an error naming both), and the report lists each file with its content digest
(and, for the shipped file, refgrad's version), so a run says exactly which lists judged it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from conformance import adapters, ops, shipped
from conformance.case import (
    AMP_POLICIES,
    COMPLEX_DTYPES,
    DTYPES,
    PART_DTYPE,
    PROGRAM_CHECKS,
    VALID_CHECKS,
    Case,
    CaseError,
)
from conformance.exitcodes import AGREEING, DEPARTING
from conformance.resultsio import InputFileError, read_report_file, read_results_file
from reference.errors import SMALLEST_NORMAL

SCHEMA_PATH = Path(__file__).with_name("known.schema.json")
SHIPPED = shipped.known_file()

_COMPARE = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "in": lambda a, b: a in b,
    "contains": lambda a, b: b in a,
    "multiple_of": lambda a, b: b != 0 and a % b == 0,
    "not_multiple_of": lambda a, b: b != 0 and a % b != 0,
}
_MISSING = object()
# the aggregates a ``where`` path may take of a list of numbers (a case's per-dim parameters)
_AGGREGATES = {"max": max, "min": min, "sum": sum}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: the case ids the report names per group of overlapping entries
OVERLAP_CASES = 5
# the vocabulary an entry is checked against at load: an entry naming anything else could never match
CHECKS = (*VALID_CHECKS, "error", *PROGRAM_CHECKS)
# the top-level fields of a case (conformance.case.Case.to_dict), which a ``where`` path starts with
CASE_FIELDS = (
    "op",
    "params",
    "shapes",
    "dtype",
    "seed",
    "checks",
    "vmap",
    "data",
    "description",
    "id",
    "source",
)
# the special ops: their checks and their shapes' names (None: any)
_SPECIAL_OPS = {"conv": ((*VALID_CHECKS, "error"), ("input", "weight")), "program": (PROGRAM_CHECKS, None)}


class KnownFileError(InputFileError):
    """A known-departures file or entry that breaks a rule (names the file, the entry and the field)."""


def _one_or_many(value) -> tuple | None:
    if value is None:
        return None
    return tuple(value) if isinstance(value, list) else (value,)


#: fields derived from a case (not stored in it) that a ``where`` path may start with
DERIVED_FIELDS = ("geometry",)


def _geometry(case: dict):
    """The case's derived ``geometry`` (:meth:`conformance.case.Case.geometry`: a plain
    convolution's pads read and output lengths); _MISSING where it has none or is malformed."""
    try:
        derived = Case.from_dict(case).geometry()
    except (CaseError, KeyError, TypeError, ValueError):
        return _MISSING
    return _MISSING if derived is None else derived


def _lookup(case: dict, path: str):
    """``shapes.input.0`` in a case dict (list indices as integers, negative ones from the end);
    a part in braces is the value at another path: ``shapes.input.{params.dim}`` is the length of
    the dim a record's ``dim`` parameter names; ``max``, ``min`` or ``sum`` after a list of numbers is
    its largest, smallest or their sum (``params.dilation.max >= 2``: some spatial dim is dilated;
    ``params.padding.0.sum >= 0``: the first dim's pair crops no more than it pads); a path from
    ``geometry`` reads a convolution's derived geometry (:meth:`conformance.case.Case.geometry`). _MISSING if
    absent."""
    node = case
    for part in re.findall(r"\{[^}]*\}|[^.]+", path):
        if node is case and part == "geometry":
            node = _geometry(case)
            if node is _MISSING:
                return _MISSING
            continue
        if part.startswith("{"):
            part = _lookup(case, part[1:-1])
            if part is _MISSING or not isinstance(part, int) or isinstance(part, bool):
                return _MISSING
            part = str(part)
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.lstrip("-").isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, list) and part in _AGGREGATES and node and all(_is_number(v) for v in node):
            node = _AGGREGATES[part](node)
        else:
            return _MISSING
    return node


@dataclass(frozen=True)
class Condition:
    path: str
    op: str
    value: object

    def holds(self, case: dict, check: str | None = None) -> bool:
        """Whether the case field at ``path`` compares true (the same field for every check)."""
        got = _lookup(case, self.path)
        value = self.value
        if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
            value = _lookup(case, value[1:-1])  # another field of the case: "{shapes.weight.0}"
        if got is _MISSING or value is _MISSING:
            return False
        try:
            return bool(_COMPARE[self.op](got, value))
        except TypeError:  # e.g. a list compared with < : the condition does not hold
            return False


def _negative_integers(a):
    """How many elements are negative integers (the poles of a lower parameter, of Γ, of ψ):
    ``negint > 0`` holds where some element is one, ``negint == 0`` where none is; NaN (neither)
    with a NaN element, as the other statistics."""
    if np.isnan(a).any():
        return np.nan
    return np.count_nonzero(np.isfinite(a) & (a < 0) & (a == np.round(a)))


def _nanmin(m):
    """The smallest of ``m`` that is not NaN; NaN (no condition holds) where every one is."""
    m = m[~np.isnan(m)]
    return np.min(m) if m.size else np.nan


def _smallest_nonzero_modulus(a):
    """The smallest |element| that is neither 0 nor NaN: ``tiny < t`` holds where some element is a
    nonzero within t of 0 (a subnormal, the smallest normal), whatever zeros or NaNs lie beside it (a
    'special' draw holds both); NaN (no condition holds) where every element is 0 or NaN."""
    m = np.abs(a)
    m = m[(m > 0) & ~np.isnan(m)]
    return np.min(m) if m.size else np.nan


# ``values.NAME.STAT``: a statistic of the elements of a record's input NAME (or a cotangent or tangent
# its checks hand the framework: cot_output, tan_cot_output, ...), as the case hands them to
# the framework (rounded to its dtype; made again from the seed, or the case's explicit data)
VALUE_STATS = {
    "min": np.min,
    "max": np.max,
    "absmax": lambda a: np.max(np.abs(a)),
    "absmin": lambda a: np.min(np.abs(a)),  # the element nearest 0: ``absmin < t`` holds where some |element| < t
    "negint": _negative_integers,
    "tiny": _smallest_nonzero_modulus,
    # how many elements are +inf / -inf: defined with NaN elements too (values 'nonfinite' draws both),
    # where max == inf is not (a limit at +inf: ``posinf > 0``)
    "posinf": lambda a: np.count_nonzero(np.isposinf(a)),
    "neginf": lambda a: np.count_nonzero(np.isneginf(a)),
    "infinite": lambda a: np.count_nonzero(np.isinf(a)),
    # off1, exp_pole and normals ignore NaN elements, as tiny does (a 'special' draw holds NaNs beside
    # the points they single out). The distance of the element nearest 1: ``off1 == 0`` holds where
    # some element is exactly 1 (a formula's 0/0 there: spence' = log x/(1 - x), masked at x == 1)
    "off1": lambda a: _nanmin(np.abs(a - 1)),
    # min |1 + e^z|: how near an element is to a zero of 1 + e^z (z = i(2k + 1)pi, the poles of the
    # complex sigmoid 1/(1 + e^-z)), where 1 + e^-z cancels and amplifies e^-z's rounding by 1/|1 + e^z|
    "exp_pole": lambda a: _nanmin(np.abs(1 + np.exp(a))),
    # the element nearest 0 in units of the dtype's smallest normal number (_value_stat divides):
    # ``normals <= 1`` holds where some element is 0, subnormal or the smallest normal, whatever the
    # dtype: where x·x, 1/x² and the like leave the dtype's range in each (a 'special' draw's points)
    "normals": lambda a: _nanmin(np.abs(a)),
}

VALUE_OPS = ("<", "<=", ">", ">=", "==", "!=")
#: the statistics defined for a complex input too: of the moduli (|z|, |z - 1|, |1 + e^z|), and
#: (infinite) the elements with an infinite part; min, max, negint, posinf and neginf order or sign
#: the reals only
COMPLEX_STATS = ("absmin", "absmax", "tiny", "normals", "off1", "exp_pole", "infinite")


@dataclass(frozen=True)
class ValueCondition:
    """``values.x.max < -1`` (every element of x below -1), ``values.x.min < 0`` (some element
    negative), ``values.a.absmax == inf`` (some element infinite), ``values.a.absmin < 0.2``
    (some element within 0.2 of zero; of a complex input, the moduli |z|) or ``values.b.negint > 0``
    (some element a negative integer; ``== 0``: none), ``values.x.posinf > 0`` (some element +inf;
    ``neginf``: -inf, ``infinite``: either, or of a complex input an infinite part; counted whatever
    other elements hold). It does not hold where the statistic is not a real number: an empty
    input, min, max, negint, posinf or neginf of a complex one, or a NaN element (the statistic is
    then NaN, and no comparison with NaN holds; tiny, posinf, neginf and infinite count)."""

    input: str
    stat: str
    op: str
    value: float

    def holds(self, case: dict, check: str | None = None) -> bool:
        """Over the elements ``check`` hands the framework (every check of the case where None)."""
        got = _value_stat(json.dumps(case, sort_keys=True), self.input, self.stat, check)
        return got is not _MISSING and bool(_COMPARE[self.op](got, self.value))


@functools.lru_cache(maxsize=256)
def _value_stat(case_json: str, name: str, stat: str, check: str | None = None):
    """The statistic of the case's input ``name`` over the elements ``check`` hands the framework
    (``batched_NAME`` in a vmap check that batches it: the unbatched draw is never used there; with
    no check, over what every check of the case hands it; the case as JSON: one set of arrays made
    per case, however many entries ask), _MISSING where it is not a real number."""
    try:
        case = Case.from_dict(json.loads(case_json))
        arrays = case.arrays()
        checks = case.checks if check is None else (check,)
        # a vmap check hands the framework batched_NAME where it batches NAME, never NAME itself; a
        # check that hands neither (a cotangent to a forward check) adds nothing
        received = set()
        for c in checks:
            handed = case.arrays_for(c)
            received |= {next((n for n in (f"batched_{name}", name) if n in handed), None)} - {None}
        if not received:
            return _MISSING
        array = np.concatenate([np.ravel(arrays[n]) for n in sorted(received)])
    except (CaseError, KeyError):
        return _MISSING
    if array.size == 0 or (np.iscomplexobj(array) and stat not in COMPLEX_STATS):
        return _MISSING
    with np.errstate(over="ignore", invalid="ignore"):  # exp_pole's e^x of a large element: inf
        value = float(VALUE_STATS[stat](array))  # of a complex input: of the moduli (infinite: its parts)
    if stat == "normals":  # (a complex input: its parts' dtype)
        value /= SMALLEST_NORMAL[PART_DTYPE.get(case.dtype, case.dtype)]
    return value


@dataclass(frozen=True)
class Entry:
    id: str
    framework: str
    versions: object  # packaging.specifiers.SpecifierSet
    verdicts: tuple
    reason: str
    ops: tuple | None = None
    checks: tuple | None = None
    dtypes: tuple | None = None
    case_ids: tuple | None = None
    where: tuple = ()
    settings: tuple = ()  # Conditions on the framework's reported settings (oneDNN on, TF32, ...)
    reason_pattern: re.Pattern | None = None
    issue: str | None = None
    reproducer: str | None = None
    reproduces: re.Pattern | None = None  # searched in what a .py reproducer prints
    reproducer_path: str | None = None  # the reproducer's file, resolved beside its known file
    known_file: str | None = None  # the known file it was read from, resolved
    flaky: bool = False
    partial: bool = False
    source: str = ""

    def applies_to(self, framework: str, version: str | None) -> bool:
        """The entry's framework (or one of its modes) at a version inside the range."""
        if framework != self.framework and not (
            ":" not in self.framework and framework.split(":", 1)[0] == self.framework
        ):
            return False
        if version is None:
            return False
        from packaging.version import InvalidVersion, Version

        # the framework's own version: "2.13.0+cpu", or the first of "jax 0.10.2, jaxlib 0.10.2"
        found = re.search(r"\d+(?:\.\d+)+(?:[+a-zA-Z][\w.+]*)?", str(version))
        try:
            return found is not None and Version(found.group(0)) in self.versions
        except InvalidVersion:
            return False

    def in_region(self, rec: dict, settings: dict | None = None) -> bool:
        """Everything but the verdict and the reason pattern holds. ``settings`` maps each framework
        (or framework:mode) to the settings its worker reported; an entry with settings conditions
        is outside every result whose framework's settings are unknown or do not satisfy them."""
        case = rec.get("case") or {}
        if not self.applies_to(rec.get("framework", ""), rec.get("version")):
            return False
        if self.settings:
            reported = (settings or {}).get(rec.get("framework", ""))
            if not isinstance(reported, dict) or not all(c.holds(reported) for c in self.settings):
                return False
        if self.checks is not None and rec.get("check") not in self.checks:
            return False
        if self.dtypes is not None and rec.get("dtype", case.get("dtype")) not in self.dtypes:
            return False
        if self.ops is not None and case.get("op") not in self.ops:
            return False
        if self.case_ids is not None and rec.get("case_id") not in self.case_ids:
            return False
        return all(c.holds(case, rec.get("check")) for c in self.where)

    def matches(self, rec: dict, settings: dict | None = None) -> bool:
        return self.departs_as_described(rec) and self.in_region(rec, settings)

    def departs_as_described(self, rec: dict) -> bool:
        """The result's verdict is one of the entry's and its reason matches the entry's pattern
        (the region aside: :meth:`in_region`)."""
        if rec.get("verdict") not in self.verdicts:
            return False
        return self.reason_pattern is None or bool(self.reason_pattern.search(str(rec.get("reason") or "")))

    def describe(self) -> dict:
        return {
            "id": self.id,
            "framework": self.framework,
            "versions": str(self.versions) or "any",
            "verdicts": list(self.verdicts),
            "reason": self.reason,
            "issue": self.issue,
            "reproducer": self.reproducer,
            "flaky": self.flaky,
            "partial": self.partial,
        }


@dataclass
class KnownSet:
    entries: list[Entry] = field(default_factory=list)
    path: str | None = None
    #: each file read: {"file": what was given ("builtin" or a path), "path", "digest", "entries"} and,
    #: for the shipped file, "refgrad": the version that shipped it
    files: list[dict] = field(default_factory=list)

    def matching(self, rec: dict, settings: dict | None = None) -> list[Entry]:
        """Every entry ``rec`` matches, in file order: the first is the one ``classify`` names."""
        return [e for e in self.entries if e.matches(rec, settings)]

    def overlaps(self, records: list[dict], settings: dict | None = None) -> list[dict]:
        """The results that match more than one entry, each with every entry it matches.

        Only the first entry judges a result, so a wider entry earlier in the file claims what a
        later one's mechanism explains, and the report sends a reader to the wrong departure; this
        lists them: {"case_id", "framework", "check", "dtype", "op", "verdict", "entries": [ids,
        the first the one that claims it]}. ``records`` as a run wrote them (not yet classified)."""
        out = []
        for rec in records:
            hits = self.matching(rec, settings)
            if len(hits) > 1:
                case = rec.get("case") or {}
                out.append(
                    {
                        "case_id": rec.get("case_id"),
                        "framework": rec.get("framework"),
                        "check": rec.get("check"),
                        "dtype": rec.get("dtype", case.get("dtype")),
                        "op": case.get("op"),
                        "verdict": rec.get("verdict"),
                        "entries": [e.id for e in hits],
                    }
                )
        return out

    def classify(self, records: list[dict], settings: dict | None = None) -> tuple[list[dict], dict]:
        """(records with ``known`` verdicts, the summary: per entry its matches, and the stale ones).

        ``settings``: {framework: the settings its worker reported}, for entries that name some."""
        matched = {e.id: 0 for e in self.entries}
        covered = {e.id: 0 for e in self.entries}
        out = []
        overlapping: dict[tuple, list] = {}
        for rec in records:
            hits = []
            judged = rec.get("verdict") in AGREEING or rec.get("verdict") in DEPARTING
            for e in self.entries:
                if judged and e.in_region(rec, settings):  # an unsupported result is no evidence
                    covered[e.id] += 1
                    if e.departs_as_described(rec):  # (in_region just held)
                        hits.append(e)
            hit = hits[0] if hits else None
            if len(hits) > 1:
                overlapping.setdefault(tuple(e.id for e in hits), []).append(rec.get("case_id"))
            if hit is not None:
                matched[hit.id] += 1
                rec = {**rec, "verdict": "known", "known": {"id": hit.id, "verdict": rec["verdict"]}}
            out.append(rec)
        stale = [
            e.id for e in self.entries if covered[e.id] and not matched[e.id] and not (e.flaky or e.partial)
        ]
        unreported = _unreported_settings(self.entries, records, settings)
        stale += [entry_id for entry_id in unreported if entry_id not in stale]
        summary = {
            "file": self.path,
            "files": self.files,
            "entries": [
                {**e.describe(), "file": e.source, "matched": matched[e.id], "in_region": covered[e.id]}
                for e in self.entries
            ],
            "stale": stale,
            "unreported_settings": unreported,
            "overlaps": [
                {"entries": list(ids), "results": len(cases), "cases": sorted(set(cases))[:OVERLAP_CASES]}
                for ids, cases in sorted(overlapping.items(), key=lambda item: (-len(item[1]), item[0]))
            ],
        }
        return out, summary


def _unreported_settings(entries, records, settings) -> dict:
    """{entry id: why} for entries whose ``settings`` conditions name a setting that a framework
    they apply to ran in this run without reporting (a misspelt key would otherwise keep the entry
    out of its region on every machine, silently): such an entry is stale, with the keys the
    worker did report."""
    out = {}
    ran = {(r.get("framework", ""), r.get("version")) for r in records}
    for e in entries:
        if not e.settings:
            continue
        for framework, version in sorted(ran, key=str):
            reported = (settings or {}).get(framework)
            if not isinstance(reported, dict) or not reported or not e.applies_to(framework, version):
                continue
            missing = [c.path for c in e.settings if _lookup(reported, c.path) is _MISSING]
            if missing:
                out[e.id] = (
                    f"match.settings names {', '.join(map(repr, missing))}, which the {framework} worker "
                    f"does not report (it reports: {', '.join(sorted(reported))})"
                )
                break
    return out


def overlaps_in_run(results_dir, known: KnownSet) -> list[dict]:
    """:meth:`KnownSet.overlaps` of the results a run wrote in ``results_dir`` (its results.jsonl,
    and the settings its workers reported in its report.json where there is one)."""
    results_dir = Path(results_dir)
    records = read_results_file(results_dir / "results.jsonl").records
    report = results_dir / "report.json"
    frameworks = read_report_file(report).get("frameworks") if report.exists() else None
    return known.overlaps(records, framework_settings(frameworks))


def framework_settings(frameworks: dict | None) -> dict:
    """{framework: the settings its worker reported}, from a report's ``frameworks`` table: what
    entries' ``settings`` conditions read."""
    return {
        name: info["settings"]
        for name, info in (frameworks or {}).items()
        if isinstance(info, dict) and isinstance(info.get("settings"), dict)
    }


def _error(path, where: str, rule: str) -> KnownFileError:
    return KnownFileError(f"{path}: {where}: {rule}")


def _satisfiable(versions) -> bool:
    """Whether some version lies in the specifier set: tried at each bound, just above it and at 0
    (an intersection of ranges is non-empty exactly when one of these is in it)."""
    from packaging.version import InvalidVersion, Version

    candidates = ["0"]
    for spec in versions:
        bound = spec.version.removesuffix(".*")
        try:
            Version(bound)
        except InvalidVersion:  # an arbitrary-equality (===) string: not judged here
            return True
        candidates += [bound, f"{bound}.1", f"{bound}.0.0.1", f"{bound}.post1"]
    return any(versions.contains(Version(v), prereleases=True) for v in candidates)


def _framework(raw: dict, path, where: str, extra_frameworks) -> str:
    """The entry's framework as results name it (``torch:eager`` is ``torch``), or an error naming it."""
    name = raw["framework"]
    known = {n.partition(":")[0] for n in adapters.known()} | set(extra_frameworks)
    if name.partition(":")[0] not in known:
        raise _error(
            path,
            where,
            f"framework {name!r} is not a framework refgrad knows (one of: {', '.join(sorted(known))})",
        )
    try:
        return adapters.resolve(name) if name.partition(":")[0] in adapters.MODES else name
    except adapters.AdapterError as exc:
        raise _error(path, where, f"framework {name!r}: {exc}") from None


def _ops_vocabulary() -> dict:
    """op name -> (its checks, its shapes' names or None)."""

    out = {name: (rec.checks, rec.inputs) for name, rec in ops.RECORDS.items()}
    out.update(_SPECIAL_OPS)
    return out


def _value_names(op: str) -> set[str]:
    """The arrays a ``values.NAME`` condition on record ``op`` may read: its inputs, and the
    cotangents and tangents its checks hand the framework (``cot_output``, ``tan_cot_output``, ...)."""
    return set(_ops_vocabulary()[op][1]) | ops.seed_names(op)


def _check_path(case_path: str, path, where: str, what: str, inputs) -> None:
    """A ``where`` path (or a ``{path}`` inside one) must start at a case field; ``shapes.NAME`` must
    name an input of the entry's ops (``inputs``: their names, None when not known)."""
    parts = re.findall(r"\{[^}]*\}|[^.]+", case_path)
    for part in parts:
        if part.startswith("{"):
            _check_path(part[1:-1], path, where, what, inputs)
    if not parts or parts[0].startswith("{") or parts[0] not in CASE_FIELDS + DERIVED_FIELDS:
        raise _error(
            path,
            where,
            f"{what} {case_path!r}: {parts[0] if parts else ''!r} is not a field of a case "
            f"(one of: {', '.join(CASE_FIELDS + DERIVED_FIELDS)}); the condition could never hold",
        )
    if parts[0] == "shapes" and len(parts) > 1 and inputs is not None and not parts[1].startswith("{"):
        if parts[1] not in inputs:
            raise _error(
                path,
                where,
                f"{what} {case_path!r}: the entry's op(s) have no input {parts[1]!r} "
                f"(their inputs: {', '.join(sorted(inputs))}); the condition could never hold",
            )


def _check_match(match: dict, path, where: str) -> None:
    """match.op/check/dtype and the ``where`` paths against what the harness can record."""
    vocab = _ops_vocabulary()
    ops = _one_or_many(match.get("op"))
    for op in ops or ():
        if op not in vocab:
            raise _error(
                path,
                where,
                f"match.op {op!r} is not an op refgrad records (conv, program or an op record's name: "
                "conformance ops lists them)",
            )
    checks = _one_or_many(match.get("check")) or ()
    for check in checks:
        if check not in CHECKS:
            raise _error(path, where, f"match.check {check!r} is not one of {', '.join(CHECKS)}")
    if ops and checks and not any(check in vocab[op][0] for op in ops for check in checks):
        raise _error(
            path,
            where,
            f"match.check {', '.join(checks)} is no check of op {', '.join(ops)} "
            f"(their checks: {', '.join(dict.fromkeys(c for op in ops for c in vocab[op][0]))}); "
            "the entry could never match",
        )
    for dtype in _one_or_many(match.get("dtype")) or ():
        if dtype not in DTYPES + COMPLEX_DTYPES + AMP_POLICIES:  # (a policy: mixed-precision programs)
            raise _error(
                path,
                where,
                f"match.dtype {dtype!r} is not one of {', '.join(DTYPES + COMPLEX_DTYPES + AMP_POLICIES)}",
            )
    inputs = None
    if ops and all(vocab[op][1] is not None for op in ops):
        inputs = {name for op in ops for name in vocab[op][1]}
    for i, cond in enumerate(match.get("where", [])):
        if cond["path"].split(".", 1)[0] == "values":
            _check_value_condition(cond, f"match.where[{i}]", ops, inputs, path, where)
            continue
        _check_path(cond["path"], path, where, f"match.where[{i}].path", inputs)
        value = cond["value"]
        if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
            _check_path(value[1:-1], path, where, f"match.where[{i}].value {value!r}: the path", inputs)


def _check_value_condition(cond: dict, what: str, ops, inputs, path, where) -> None:
    """A ``values.NAME.STAT`` condition, checked: NAME an input of every op the entry names (op
    records only), STAT one of VALUE_STATS, an ordered comparison with a real number."""
    parts = cond["path"].split(".")
    rule = None
    if not ops or inputs is None or any(op in _SPECIAL_OPS for op in ops):
        rule = "needs match.op naming op records (their inputs and seeds are what values.NAME reads)"
    elif len(parts) != 3 or parts[2] not in VALUE_STATS:
        rule = f"must be values.NAME.STAT, STAT one of {', '.join(VALUE_STATS)}"
    elif not all(parts[1] in _value_names(op) for op in ops):
        names = sorted({n for op in ops for n in _value_names(op)})
        rule = f"{parts[1]!r} is not an input, cotangent or tangent of every op of the entry ({', '.join(ops)}; theirs: {', '.join(names)})"
    elif cond["op"] not in VALUE_OPS:
        rule = f"op {cond['op']!r} does not compare numbers (one of: {', '.join(VALUE_OPS)})"
    elif (
        isinstance(cond["value"], bool)
        or not isinstance(cond["value"], (int, float))
        or cond["value"] != cond["value"]
    ):
        rule = f"value {cond['value']!r} must be a real number (not a path, a string or NaN)"
    if rule is not None:
        raise _error(path, where, f"{what}.path {cond['path']!r}: {rule}; the condition could never hold")


def _where(match: dict) -> tuple:
    """The entry's ``where`` conditions (checked by _check_match): on case fields, or on an input's values."""
    return tuple(
        ValueCondition(*c["path"].split(".")[1:], c["op"], float(c["value"]))
        if c["path"].split(".", 1)[0] == "values"
        else Condition(c["path"], c["op"], c["value"])
        for c in match.get("where", [])
    )


def _entry(raw: dict, path, index: int, base: Path, extra_frameworks=()) -> Entry:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    where = f"entry {index} ({raw.get('id')!r})"
    try:
        versions = SpecifierSet(raw.get("versions", ""))
    except InvalidSpecifier:
        raise _error(
            path,
            where,
            f"versions {raw.get('versions')!r} is not a PEP 440 specifier set (e.g. '>=2.12,<2.22')",
        ) from None
    if not _satisfiable(versions):
        raise _error(
            path, where, f"versions {raw.get('versions')!r} is an empty range: no version satisfies it"
        )
    framework = _framework(raw, path, where, extra_frameworks)
    match = raw.get("match", {})
    _check_match(match, path, where)
    pattern = None
    if "reason" in match:
        try:
            pattern = re.compile(match["reason"])
        except re.error as exc:
            raise _error(
                path, where, f"match.reason {match['reason']!r} is not a regular expression: {exc}"
            ) from None
    reproducer = raw.get("reproducer")
    if reproducer is not None and not (base / reproducer).exists():
        raise _error(
            path,
            where,
            f"reproducer {reproducer!r} does not exist (paths are relative to the file's directory, {base})",
        )
    reproduces = _reproduces(raw, reproducer, path, where)
    return Entry(
        id=raw["id"],
        framework=framework,
        versions=versions,
        verdicts=tuple(_one_or_many(raw["verdict"])),
        reason=raw["reason"],
        ops=_one_or_many(match.get("op")),
        checks=_one_or_many(match.get("check")),
        dtypes=_one_or_many(match.get("dtype")),
        case_ids=_one_or_many(match.get("case_id")),
        where=_where(match),
        settings=tuple(Condition(c["path"], c["op"], c["value"]) for c in match.get("settings", [])),
        reason_pattern=pattern,
        issue=raw.get("issue"),
        reproducer=reproducer,
        reproduces=reproduces,
        reproducer_path=None if reproducer is None else str((base / reproducer).resolve()),
        known_file=str(Path(path).resolve()),
        flaky=bool(raw.get("flaky", False)),
        partial=bool(raw.get("partial", False)),
        source=str(path),
    )


def _reproduces(raw: dict, reproducer: str | None, path, where) -> re.Pattern | None:
    """The pattern a ``.py`` reproducer's output shows while the departure is there (required for
    one, meaningless for a ``.json`` case, which the judge and the entry's own match decide)."""
    if reproducer is not None and Path(reproducer).suffix not in (".py", ".json"):
        raise _error(
            path, where, f"reproducer {reproducer!r} must be a .py script or a .json case file"
        )
    pattern = raw.get("reproduces")
    is_script = reproducer is not None and reproducer.endswith(".py")
    if pattern is None:
        if is_script:
            raise _error(
                path,
                where,
                f"reproducer {reproducer!r} is a script: 'reproduces' must give the regular expression "
                "its output shows while the departure is there",
            )
        return None
    if not is_script:
        raise _error(
            path, where, "reproduces: only a .py reproducer is judged by a pattern (a .json case is judged by the entry's match)"
        )
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise _error(path, where, f"reproduces {pattern!r} is not a regular expression: {exc}") from None


def load_known(spec, extra_frameworks=()) -> KnownSet:
    """Read and validate known-departures files (KnownFileError names the file, entry, field and rule):
    against known.schema.json, and against what the harness can record (frameworks and their modes,
    ops, checks, dtypes, case fields, a non-empty version range), so that no entry is a silent
    no-op.

    ``spec`` is a path, ``"builtin"`` (the file refgrad ships) or a list of them, merged in order.
    ``extra_frameworks``: names beyond the built-in and entry-point adapters (``--adapter``
    classes, a run's recorded frameworks)."""
    specs = [spec] if isinstance(spec, (str, Path)) else list(spec)
    merged = KnownSet(path=", ".join(str(s) for s in specs))
    owner: dict[str, str] = {}
    for item in specs:
        one = _load_file(shipped.known_file() if str(item) == shipped.BUILTIN else Path(item), extra_frameworks)
        label = str(item)
        for entry in one.entries:
            if entry.id in owner:
                raise KnownFileError(
                    f"--known: entry {entry.id!r} of {label} is already defined by {owner[entry.id]}; "
                    "an id names one departure (rename or drop one of them)"
                )
            owner[entry.id] = label
        merged.entries += [replace(entry, source=label) for entry in one.entries]
        described = {"file": label, "path": one.path, "digest": shipped.digest(one.path)}
        if label == shipped.BUILTIN:
            described["refgrad"] = shipped.version()
        merged.files.append({**described, "entries": len(one.entries)})
    return merged


def _load_file(path: Path, extra_frameworks=()) -> KnownSet:
    """One known-departures file, read and validated."""
    import jsonschema

    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    toml = path.suffix == ".toml"
    if path.is_dir():
        raise KnownFileError(
            f"--known: {str(path)!r} is a directory; give a known-departures file (.toml or .json) or "
            f"{shipped.BUILTIN} (a bare --known before a positional argument takes it as the file)"
        )
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if toml else json.loads(text)
    except FileNotFoundError:
        raise KnownFileError(f"--known: {str(path)!r} does not exist") from None
    except (UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "TOML" if toml else "JSON"
        raise KnownFileError(f"{path}: not a {kind} known-departures file ({exc})") from None
    except OSError as exc:
        raise KnownFileError(f"{path}: cannot be read ({exc.strerror})") from None
    schema = json.loads(SCHEMA_PATH.read_text())
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path)
        if len(error.absolute_path) >= 2 and error.absolute_path[0] == "departures":
            i = error.absolute_path[1]
            raw = data["departures"][i] if isinstance(i, int) else {}
            at = f"entry {i} ({raw.get('id')!r}" + (
                f", field {'.'.join(str(p) for p in list(error.absolute_path)[2:])})"
                if len(error.absolute_path) > 2
                else ")"
            )
        raise KnownFileError(f"{path}: {at or 'top level'}: {error.message}")
    seen: dict[str, int] = {}
    entries = []
    for i, raw in enumerate(data["departures"]):
        if raw["id"] in seen:
            raise _error(
                path, f"entry {i} ({raw['id']!r})", f"the id is already used by entry {seen[raw['id']]}"
            )
        seen[raw["id"]] = i
        entries.append(_entry(raw, path, i, path.resolve().parent, extra_frameworks))
    return KnownSet(entries, str(path))
