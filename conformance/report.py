"""report.json (the source of truth) and index.html (rendered from it with Jinja2).

``report.json`` follows ``conformance/report.schema.json``. It holds the run's environment and,
per *cell* (framework × op × check × dtype): how many results, their verdict counts, the worst
element (its ratio and the bound it was judged against), a fixed-bin histogram of
``log10(ratio / bound)`` over the cell's cases, the failing case ids, and the case parameters
the failures share. Each distinct kind of discrepancy of a cell gets a detail entry with its
worst element and a standalone reproducer script (:mod:`conformance.reproducer`); unsupported,
crashed and timed-out results are listed with their reasons. With a baseline report it adds a
regression view (new failures, fixed failures, worst-ratio changes per cell).
"""

from __future__ import annotations

import json
import math
import platform
import sys
import time
from collections import Counter, defaultdict
from functools import singledispatch
from pathlib import Path

import jinja2
from markupsafe import Markup

import refgrad
from conformance import exitcodes
from conformance import stale as stale_entries
from conformance.adapters import MODES, known
from conformance.case import ProgramCase, RecordCase, case_type
from conformance.coverage import coverage_of_results
from conformance.identity import safe_file_part
from conformance.known import framework_settings
from conformance.outdir import atomic_write
from conformance.reproducer import reproducer
from conformance.resultsio import read_baseline, read_results_file
from conformance.runner import _failure_kind
from conformance.tolerance import BOUND_FORMULA, FAILING, SEVERITY, VERDICTS, shortest_repr, ulps

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")
TEMPLATE_DIR = Path(__file__).with_name("templates")
# histogram of log10(ratio / bound) per cell: below the first edge, one bin per decade, at or past
# the last edge; exact results (ratio 0) and infinite ratios (NaN, or an error where M = 0) apart
HIST_EDGES = list(range(-6, 4))
# verdicts refgrad writes besides the tolerance model's: the harness's own, never a framework's
# ("known": a departure a known-departures entry covers, see conformance/known.py)
HARNESS_VERDICTS = ("known", "reference_error", "refused")


# ---- environment --------------------------------------------------------------------------------
def _blas() -> str:
    try:
        import numpy as np

        deps = np.show_config(mode="dicts").get("Build Dependencies", {})
        blas = deps.get("blas", {})
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception as exc:  # old NumPy: no mode="dicts"
        return f"unknown ({type(exc).__name__})"


def environment(frameworks: dict, run: dict | None = None) -> dict:
    """OS, Python, NumPy and its BLAS, each framework's version and settings, the run's flags."""
    import numpy as np

    run = run or {}
    try:
        import hypothesis

        hyp_version = hypothesis.__version__
    except ImportError:
        hyp_version = None
    devices = sorted(
        {(f.get("settings") or {}).get("device", "?") for f in frameworks.values() if "settings" in f}
    )
    return {
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "blas": _blas(),
        "device": run.get("device") or (devices[0] if len(devices) == 1 else ",".join(devices) or None),
        "precision": run.get("precision"),
        "seed": run.get("seed"),
        "run_id": run.get("run_id"),
        "refgrad": refgrad.__version__,
        # the case files the run read (--cases, or replay's path) and where shrunk cases went; the
        # rest of its inputs is what the seed draws
        "inputs": run.get("inputs"),
        "hypothesis": {
            "version": hyp_version,
            "max_examples": run.get("max_examples"),
            "seed": run.get("seed"),
            "derandomize": False,
            "database": None,
            "deadline": None,
            "phases": "generate (every example recorded), then shrink per distinct failure kind",
        },
        "frameworks": {
            name: {
                "version": info.get("version"),
                "spec": info.get("spec"),
                "settings": info.get("settings", {}),
                "tf32": bool((info.get("settings") or {}).get("tf32", False)),
                "error": info.get("error"),
            }
            for name, info in frameworks.items()
        },
    }


# ---- parameters the failures share -------------------------------------------------------------
def _predicates(case: dict, check: str) -> dict[str, bool]:
    """Named yes/no facts about a case's parameters (both polarities where each can matter): those
    of its format, the type of its op (:func:`conformance.case.case_type`)."""
    return _format_predicates.dispatch(case_type(case.get("op")))(case, check)


# one implementation per case type (conformance.case imports nothing of the report)
@singledispatch
def _format_predicates(case: dict, check: str) -> dict[str, bool]:
    """A convolution case's facts: its geometry, bias, layout, rank, what vmap maps over."""
    if not (isinstance(case.get("params"), dict) and isinstance(case.get("shapes"), dict)):
        return {}  # a bare case summary (op and dtype only): no parameters to share
    p, shapes = case["params"], case["shapes"]
    x, w = shapes["input"], shapes["weight"]
    kernel, stride, dilation = w[2:], p["stride"], p["dilation"]
    pad = p["padding"]
    pairs = [] if isinstance(pad, str) else [(e, e) if isinstance(e, int) else tuple(e) for e in pad]
    out = {
        "transposed": p["transposed"],
        "not transposed": not p["transposed"],
        "groups > 1": p["groups"] > 1,
        "groups = 1": p["groups"] == 1,
        "depthwise (groups = input channels > 1)": p["groups"] > 1
        and p["groups"] == x[1]
        and not p["transposed"],
        "stride > 1": max(stride) > 1,
        "stride = 1": max(stride) == 1,
        "stride > kernel (some dim)": any(s > k for s, k in zip(stride, kernel)),
        "dilation > 1": max(dilation) > 1,
        "1x1 kernel": all(k == 1 for k in kernel),
        "padding 'same'": pad == "same",
        "padding 'same_lower'": pad == "same_lower",
        "padding 'valid'": pad == "valid",
        "explicit padding": not isinstance(pad, str),
        "asymmetric padding": any(lo != hi for lo, hi in pairs),
        "negative padding (crop)": any(min(lo, hi) < 0 for lo, hi in pairs),
        "output_padding > 0": any(v > 0 for v in p.get("output_padding", [])),
        "bias": p["bias"],
        "no bias": not p["bias"],
        "channels_last": p["layout"] == "channels_last",
        "empty batch (N = 0)": x[0] == 0,
        "an empty dim (some size 0)": 0 in x or 0 in w,
        f"rank {p['rank']}": True,
    }
    for r in (1, 2, 3):
        out.setdefault(f"rank {r}", False)
    if check in ("vmap", "vmap_vjp"):
        over = set(case["vmap"]["over"])
        out["vmapped over input only"] = over == {"input"}
        out["vmapped over weight only"] = over == {"weight"}
        out["vmapped over input and weight"] = over == {"input", "weight"}
    return out


@_format_predicates.register(ProgramCase)
def _(case: dict, check: str) -> dict[str, bool]:
    return _program_predicates(case["source"])


@_format_predicates.register(RecordCase)
def _(case: dict, check: str) -> dict[str, bool]:
    return _record_predicates(case)


def _record_predicates(case: dict) -> dict[str, bool]:
    """Facts about an op-record case: its value distribution and scalar parameters, and of its shapes
    whether some input is empty, whether inputs broadcast, and the largest rank."""
    p, shapes = case.get("params") or {}, case.get("shapes") or {}
    out = {}
    for key, value in sorted(p.items()):
        if isinstance(value, (str, bool, int, float)):
            out[f"{key} = {value}"] = True
    dims = [tuple(s) for s in shapes.values() if isinstance(s, (list, tuple))]
    out["an empty input (some size 0)"] = any(0 in d for d in dims)
    out["inputs of different shapes (broadcasting)"] = len(set(dims)) > 1
    if dims:
        out[f"rank {max(len(d) for d in dims)}"] = True
    return out


# what a program does, read off its text: (fact, substring of the source that shows it)
_PROGRAM_FACTS = (
    ("an in-place op", "_("),
    ("an index assignment", "] = "),
    ("a no_grad block", "with T.no_grad()"),
    ("a retain_grad", "retain_grad()"),
    ("a gradient hook", "register_hook("),
    ("a view through as_strided", "as_strided("),
    ("a diagonal view", "diagonal("),
    ("an expand", "expand("),
    ("matmul", " @ "),
    ("conv1d", "conv1d("),
    ("batch_norm", "batch_norm("),
    ("softmax", "softmax("),
    ("a second backward (retain_graph)", "retain_graph=True"),
    ("double backward (create_graph)", "create_graph=True"),
)


def _program_predicates(source: str) -> dict[str, bool]:
    facts = {}
    for name, marker in _PROGRAM_FACTS:
        facts[f"program has {name}"] = marker in source
        facts[f"program has no {name}"] = marker not in source
    return facts


def shared_parameters(failing: list[dict], passing: list[dict], check: str, limit: int = 6) -> list[dict]:
    """Predicates true for all (or at least 75%) of the failing cases and rarer among the passing ones."""
    cases_f = [r["case"] for r in failing if r.get("case")]
    cases_p = [r["case"] for r in passing if r.get("case")]
    if not cases_f:
        return []
    f_counts, p_counts = Counter(), Counter()
    for c in cases_f:
        f_counts.update(k for k, v in _predicates(c, check).items() if v)
    for c in cases_p:
        p_counts.update(k for k, v in _predicates(c, check).items() if v)
    found = []
    for name, f in f_counts.items():
        share_f = f / len(cases_f)
        share_p = p_counts[name] / len(cases_p) if cases_p else None
        if share_f >= 0.75 and (share_p is None or share_p <= share_f - 0.5):
            found.append(
                {
                    "predicate": name,
                    "failing": f,
                    "failing_total": len(cases_f),
                    "passing": p_counts[name],
                    "passing_total": len(cases_p),
                }
            )
    found.sort(key=lambda e: (-e["failing"] / e["failing_total"], e["passing"], e["predicate"]))
    return found[:limit]


# ---- cells --------------------------------------------------------------------------------------
def _excess(worst: dict | None) -> float | None:
    """ratio / bound of a record's worst element (inf for an infinite ratio)."""
    if not worst:
        return None
    ratio, limit = worst["ratio"], worst["limit"]
    if math.isinf(ratio) or math.isnan(ratio):
        return math.inf
    return ratio / limit if limit > 0 else (math.inf if ratio > 0 else 0.0)


def histogram(excesses: list[float]) -> dict:
    counts = [0] * (len(HIST_EDGES) + 1)
    exact = infinite = 0
    for e in excesses:
        if e == 0:
            exact += 1
        elif math.isinf(e):
            infinite += 1
        else:
            counts[sum(math.log10(e) >= edge for edge in HIST_EDGES)] += 1
    return {"edges": HIST_EDGES, "counts": counts, "exact": exact, "infinite": infinite}


def _cell_key(r: dict) -> tuple:
    op = (r.get("case") or {}).get("op", "conv")
    return (r["framework"], op, r["check"], r.get("dtype") or "-")


def _finite(x):
    """JSON has no infinity: an infinite ratio is written as null with ``infinite: true``."""
    return None if x is None or math.isinf(x) or math.isnan(x) else x


def _worst_entry(r: dict) -> dict:
    """The worst element of a result for report.json: both values as numbers and as the digits that
    tell them apart (the observed one's shortest repr in the result's dtype, the reference's in
    float64), the error in ulps of that dtype, the ratio and its bound. A result written before
    refgrad recorded ``ulps`` gets them computed here from its values and dtype."""
    w = r["worst"]
    e = _excess(w)
    dtype = w.get("dtype") or r.get("dtype")
    n_ulps = w["ulps"] if "ulps" in w else ulps(w["observed"], w["expected"], dtype)
    return {
        "case_id": r["case_id"],
        "output": w["output"],
        "index": w["index"],
        "observed": _finite(w["observed"]),
        "expected": _finite(w["expected"]),
        "observed_text": shortest_repr(w["observed"], dtype),
        "expected_text": shortest_repr(w["expected"], "float64"),
        "dtype": dtype,
        "ulps": _finite(n_ulps),
        "ratio": _finite(w["ratio"]),
        "bound": w["limit"],
        "excess": _finite(e),
        "infinite": math.isinf(e),
    }


# the columns of report.json's per-result table (``results``): one row per result
RESULT_COLUMNS = ("case_id", "framework", "op", "check", "dtype", "verdict", "phase", "excess", "ulps")


def _table_number(x):
    """A figure of the results table: a number, "inf", or null (none: the result was not judged)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return "inf" if math.isinf(x) else round(x, 4 - int(math.floor(math.log10(x))) if x > 0 else 0)


def results_table(records: list[dict]) -> dict:
    """Every result's verdict, as rows of :data:`RESULT_COLUMNS` (compact: 20,000 results are ~1.5 MB):
    its worst element's ratio/bound and error in ulps of its dtype when it was judged."""
    rows = []
    for r in records:
        w = r.get("worst")
        dtype = r.get("dtype")
        n_ulps = None
        if w:
            n_ulps = w["ulps"] if "ulps" in w else ulps(w["observed"], w["expected"], w.get("dtype") or dtype)
        rows.append(
            [
                r["case_id"],
                r["framework"],
                _cell_key(r)[1],
                r["check"],
                dtype or "-",
                r["verdict"],
                r.get("phase"),
                _table_number(_excess(w)),
                _table_number(n_ulps),
            ]
        )
    return {"columns": list(RESULT_COLUMNS), "rows": rows}


def _severity(verdict: str) -> tuple:
    """Known verdicts by SEVERITY; one from a newer refgrad after them (shown, never a crash)."""
    return (SEVERITY.index(verdict), "") if verdict in SEVERITY else (len(SEVERITY), verdict)


def build_cells(records: list[dict]) -> list[dict]:
    groups = defaultdict(list)
    for r in records:
        groups[_cell_key(r)].append(r)
    cells = []
    for key in sorted(groups):
        rs = groups[key]
        counts = Counter(r["verdict"] for r in rs)
        judged = [r for r in rs if r.get("worst")]
        worst = max(judged, key=lambda r: _excess(r["worst"]), default=None)
        failing = [r for r in rs if r["verdict"] in FAILING]
        passing = [r for r in rs if r["verdict"] == "pass"]
        cells.append(
            {
                "id": "cell-" + "-".join(str(k) for k in key),
                "framework": key[0],
                "op": key[1],
                "check": key[2],
                "dtype": key[3],
                "results": len(rs),
                "counts": {v: n for v, n in sorted(counts.items(), key=lambda vn: _severity(vn[0])) if n},
                "verdict": min(counts, key=_severity),
                "worst": _worst_entry(worst) if worst else None,
                "histogram": histogram([_excess(r["worst"]) for r in judged]),
                "failing_cases": sorted({r["case_id"] for r in failing}),
                "passing_cases": sorted({r["case_id"] for r in passing}),
                "shared_parameters": shared_parameters(failing, passing, key[2]),
            }
        )
    return cells


# ---- discrepancies, unsupported, crashes -----------------------------------------------------
def _adapter_spec(framework: str, frameworks: dict) -> str | None:
    spec = (frameworks.get(framework) or {}).get("spec")
    if spec:
        return spec

    return known().get(framework)


def discrepancies(
    records: list[dict], frameworks: dict, device: str, precision: str, out_dir: Path, repro_dir=None
) -> list[dict]:
    """One entry per cell and kind of fail/error_mismatch: the shrunk case if any, else the worst."""

    kinds = defaultdict(list)
    for r in records:
        if r["verdict"] in ("fail", "error_mismatch") and r.get("case"):
            kinds[(_cell_key(r), _failure_kind(r))].append(r)
    siblings = _mode_index(records)
    out = []
    for n, ((key, kind), rs) in enumerate(sorted(kinds.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))):

        def rank(r):
            return (r.get("phase") != "shrunk", -(_excess(r.get("worst")) or 0.0), r["case_id"])

        r = min(rs, key=rank)
        entry = {
            "id": f"d{n + 1}",
            "cell": "cell-" + "-".join(str(k) for k in key),
            "framework": key[0],
            "op": key[1],
            "check": key[2],
            "dtype": key[3],
            "kind": kind,
            "verdict": r["verdict"],
            "case_id": r["case_id"],
            "phase": r.get("phase"),
            "config": r.get("config", ""),
            "reason": r.get("reason", ""),
            "bound": {
                k: v for k, v in r.get("bound", {}).items() if k in ("formula", "compute_dtype", "u", "K")
            },
            "worst": _worst_entry(r) if r.get("worst") else None,
            "failing_elements": r.get("failing_elements"),
            "found": r.get("found"),
            "rerun": rerun_note(rs, r),
            "case": r["case"],
            "same_kind": sorted({x["case_id"] for x in rs} - {r["case_id"]}),
            "replay": f"conformance replay {r.get('found') or 'CASE.json'} --frameworks {key[0]} --checks {key[2]}",
            "reproducer": None,
            "reproducer_file": None,
            "reproducer_error": None,
        }
        modes, text = mode_differential(r, siblings)
        if not modes:  # a shrunk case runs on its own mode only: the first of its kind other modes ran
            for other in sorted(rs, key=rank):
                modes, text = mode_differential(other, siblings)
                if modes:
                    text = f"{text} (on case {other['case_id']}, of the same kind)"
                    break
        if modes:
            entry["modes"], entry["mode_differential"] = modes, text
            entry["reason"] = f"{entry['reason']}\n{text}"
        spec = _adapter_spec(key[0], frameworks)
        try:
            if not spec:
                raise LookupError(f"no adapter spec recorded for {key[0]!r}")
            script = reproducer(r, spec, device or "cpu", precision or "highest")
            base = safe_file_part(f"{entry['id']}-{key[2]}-{key[0]}-{r['case_id']}", 120)
            name = f"reproducers/{base}.py"
            target = Path(repro_dir) if repro_dir else out_dir / "reproducers"
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{base}.py").write_text(script)
            entry.update(reproducer=script, reproducer_file=name)
        except Exception as exc:  # the report is still written; the entry says why there is no script
            entry["reproducer_error"] = f"{type(exc).__name__}: {exc}"
        out.append(entry)
    return out


# ---- mode-vs-mode differential (execution modes, framework:mode) ---------------------------------
def _family(framework: str) -> str:
    return framework.partition(":")[0]


def _mode_index(records: list[dict]) -> dict:
    """(case id, check, framework family) -> {framework (mode): its record}, campaign results first."""
    index = defaultdict(dict)
    for r in sorted(records, key=lambda r: r.get("phase") == "shrunk"):
        index[(r["case_id"], r["check"], _family(r["framework"]))].setdefault(r["framework"], r)
    return index


# the mode of each framework that runs its kernels op by op (the kernel's own answer)
_EAGER = {"torch": "torch", "jax": "jax:eager", "tensorflow": "tensorflow"}


def _mode_label(framework: str) -> str:
    if ":" in framework:
        return framework

    modes = MODES.get(framework)
    return f"{framework} ({next(iter(modes))})" if modes else framework


def mode_differential(r: dict, index: dict) -> tuple[dict | None, str | None]:
    """The verdicts of the other execution modes of ``r``'s framework on the same case and check, and a
    sentence saying which mode departs: only this one (its compiler or graph capture; for
    torch:compile, whether torch:aot_eager shares it tells Inductor's code generation from the
    capture and decompositions), or every mode the same way (the framework's kernel, not its
    compiler). (None, None) when no other mode ran the case."""
    fw, family = r["framework"], _family(r["framework"])
    group = index.get((r["case_id"], r["check"], family), {})
    others = {name: rec for name, rec in group.items() if name != fw}
    if not others:
        return None, None
    modes = {name: rec["verdict"] for name, rec in sorted(group.items())}
    kind = _failure_kind(r)
    same = [n for n, rec in others.items() if _failure_kind(rec) == kind]
    passing = [n for n, rec in others.items() if rec["verdict"] == "pass"]
    other = [n for n in others if n not in same and n not in passing]
    label = ", ".join
    if same and not passing and not other:
        return modes, (
            f"mode differential: every mode of {family} run on this case departs the same way "
            f"({label(_mode_label(n) for n in sorted(group))}: {kind}): it is {family}'s kernel, not its compiler"
        )
    parts = []
    if passing:
        what = f"{_mode_label(fw)} departs; {label(_mode_label(n) for n in passing)} pass(es) this case"
        if fw == "torch:compile" and "torch:aot_eager" in same:
            what += (
                ", torch:aot_eager (the same graphs without Inductor) departs the same way: the departure is in "
                "Dynamo's graph capture or AOTAutograd's decompositions, not Inductor's code generation"
            )
        elif fw == "torch:compile" and "torch:aot_eager" in passing:
            what += ": the departure is Inductor's code generation (torch:aot_eager runs the same graphs and passes)"
        elif not same:
            eager = _EAGER.get(family)
            if eager in passing:
                what += f": the departure is {_mode_label(fw)}'s own execution path, not {family}'s kernels"
            elif fw == eager:
                what += f": {family}'s kernel departs op by op; the compiled mode's lowering avoids it"
            elif eager:
                what += (
                    f" ({_mode_label(eager)}, op by op, did not run this case: whether {family}'s kernel "
                    "shares the departure is not known)"
                )
        parts.append(what)
    elif same:
        parts.append(f"{label(_mode_label(n) for n in [fw, *same])} depart the same way ({kind})")
    if same and passing and not (fw == "torch:compile" and "torch:aot_eager" in same):
        parts.append(f"{label(_mode_label(n) for n in same)} depart(s) the same way ({kind})")
    for n in other:
        parts.append(f"{_mode_label(n)}: {others[n]['verdict']}")
    return modes, "mode differential: " + "; ".join(parts)


def unsupported(records: list[dict]) -> list[dict]:
    groups = defaultdict(list)
    for r in records:
        if r["verdict"] not in FAILING and r["verdict"] != "pass":  # not judged: unsupported, refused, ...
            tag = "" if r["verdict"] == "unsupported" else f"[{r['verdict']}] "
            groups[(r["framework"], r["check"], tag + str(r.get("reason", "")))].append(r["case_id"])
    return [
        {
            "framework": fw,
            "check": check,
            "reason": reason,
            "count": len(ids),
            "case_ids": sorted(set(ids))[:10],
        }
        for (fw, check, reason), ids in sorted(groups.items())
    ]


def crashes(records: list[dict]) -> list[dict]:
    return [
        {
            "framework": r["framework"],
            "check": r["check"],
            "dtype": r.get("dtype"),
            "verdict": r["verdict"],
            "case_id": r["case_id"],
            "config": r.get("config", ""),
            "reason": r.get("reason", ""),
            "case": r.get("case"),
            "replay": f"conformance replay {r.get('found') or 'CASE.json'} --frameworks {r['framework']} "
            f"--checks {r['check']}",
        }
        for r in records
        if r["verdict"] in ("crash", "timeout")
    ]


def retries(records: list[dict]) -> dict:
    """The checks whose first attempt timed out and ran again on a fresh worker (runner.Campaign._retry):
    how many answered on the retry (and their verdicts), how many timed out twice, and each of them;
    ``reference``: results whose program reference was retried so (nothing is hidden: a result
    that passed on retry is counted here)."""
    framework = [r for r in records if isinstance(r.get("retried"), dict)]
    reference = [r for r in records if isinstance(r.get("reference_retried"), dict)]
    twice = [r for r in framework if r["verdict"] == "timeout"]
    answered = Counter(r["verdict"] for r in framework if r["verdict"] != "timeout")
    return {
        "answered_on_retry": sum(answered.values()),
        "verdicts_on_retry": dict(answered),
        "timed_out_twice": len(twice),
        "reference": len(reference),
        "results": [
            {
                "framework": r["framework"],
                "check": r["check"],
                "case_id": r["case_id"],
                "verdict": r["verdict"],
                "side": side,
                "first_after_s": r[key].get("after_s"),
            }
            for side, key, rs in (
                ("framework", "retried", framework),
                ("reference", "reference_retried", reference),
            )
            for r in rs
        ],
    }


def retry_line(report: dict) -> str | None:
    """The summary line of the retried timeouts (None when there were none)."""
    retried = report.get("retried") or {}
    if not retried.get("results"):
        return None
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(retried["verdicts_on_retry"].items()))
    parts = [
        f"{retried['answered_on_retry']} check(s) timed out once and answered on retry"
        + (f" ({verdicts})" if verdicts else ""),
        f"{retried['timed_out_twice']} timed out twice (the verdict timeout)",
    ]
    if retried["reference"]:
        parts.append(f"{retried['reference']} result(s) with a reference retried after a timeout")
    return "retried timeouts: " + "; ".join(parts) + " (report.json: retried)"


# ---- the op x framework matrix and the departure lines -------------------------------------------
def op_matrix(records: list[dict]) -> dict:
    """Verdict counts per op (record, ``conv``, ``program``) and framework (``framework:mode``)."""
    grid = defaultdict(Counter)
    frameworks = set()
    for r in records:
        op = (r.get("case") or {}).get("op", "conv")
        grid[(op, r["framework"])][r["verdict"]] += 1
        frameworks.add(r["framework"])
    fws = sorted(frameworks)
    rows = []
    for op in sorted({op for op, _ in grid}):
        cells = {}
        for fw in fws:
            counts = grid.get((op, fw))
            if counts:
                ordered = sorted(counts.items(), key=lambda vn: _severity(vn[0]))
                cells[fw] = {
                    "verdict": min(counts, key=_severity),
                    "counts": {v: n for v, n in ordered},
                }
        rows.append({"op": op, "cells": cells})
    return {"frameworks": fws, "rows": rows}


def conventions_met(records: list[dict]) -> dict:
    """The conventions the run met, per framework (framework:mode): which documented alternative of
    which record's convention each chose, in how many results and elements, on which checks and
    dtypes, with one case to replay (``convention`` results, conformance/ops/_conventions.py)."""
    groups = defaultdict(list)
    for r in records:
        if r["verdict"] != "convention":
            continue
        op = (r.get("case") or {}).get("op", "conv")
        for met in r.get("conventions") or []:
            groups[(r["framework"], op, met.get("name", "?"), met.get("alternative", "?"))].append((r, met))
    rows = []
    for (fw, op, name, alternative), hits in sorted(groups.items()):
        rows.append(
            {
                "framework": fw,
                "op": op,
                "convention": name,
                "alternative": alternative,
                "results": len(hits),
                "elements": sum(int(m.get("elements", 0)) for _, m in hits),
                "checks": sorted({r["check"] for r, _ in hits}),
                "dtypes": sorted({r.get("dtype") or "-" for r, _ in hits}),
                "case_id": min(r["case_id"] for r, _ in hits),
            }
        )
    return {"frameworks": sorted({row["framework"] for row in rows}), "rows": rows}


def rerun_note(rs: list[dict], worst: dict) -> str | None:
    """What re-running a departure's failing results said (conformance.rerun): the first note of
    two runs that differ, with how many of the re-run results did, else the worst result's note."""
    notes = [r["rerun"] for r in rs if isinstance(r.get("rerun"), dict)]
    differ = [n for n in notes if n.get("identical") is False]
    if differ:
        return f"{differ[0]['note']} [{len(differ)} of {len(notes)} re-run results]"
    return (worst.get("rerun") or {}).get("note") or (notes[0]["note"] if notes else None)


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def departure_lines(records: list[dict]) -> list[dict]:
    """One line per distinct departure: (op, framework, check, dtype, kind) with its count, a
    one-line summary (the worst case's reason) and, for a known departure, its entry."""
    groups = defaultdict(list)
    for r in records:
        if r["verdict"] not in FAILING and r["verdict"] != "known":
            continue
        op = (r.get("case") or {}).get("op", "conv")
        kind = _failure_kind(r) or r["verdict"]
        if r["verdict"] == "known":
            kind = f"known:{(r.get('known') or {}).get('id', '')}"
        groups[(op, r["framework"], r["check"], r.get("dtype") or "-", kind)].append(r)
    lines = []
    for (op, fw, check, dtype, kind), rs in sorted(groups.items(), key=lambda kv: kv[0]):
        worst = max(rs, key=lambda r: (r.get("phase") == "shrunk", _excess(r.get("worst")) or 0.0))
        verdict = worst["verdict"]
        rerun = rerun_note(rs, worst)
        lines.append(
            {
                "op": op,
                "framework": fw,
                "check": check,
                "dtype": dtype,
                "verdict": verdict,
                "kind": kind,
                "count": len(rs),
                "case_id": worst["case_id"],
                "summary": _one_line(worst.get("reason", "")),
                "line": f"{op} {fw} {check} {dtype}: {verdict} x{len(rs)}: {_one_line(worst.get('reason', ''), 120)}"
                + (f" [{rerun}]" if rerun else ""),
                "rerun": rerun,
            }
        )
    return lines


# ---- regression against a baseline report --------------------------------------------------------
def regression(cells: list[dict], baseline: dict, baseline_path: str) -> dict:
    old = {c["id"]: c for c in baseline.get("cells", [])}
    new = {c["id"]: c for c in cells}
    changes = []
    for cid in sorted(set(old) | set(new)):
        o, n = old.get(cid), new.get(cid)
        o_fail = set(o["failing_cases"]) if o else set()
        n_fail = set(n["failing_cases"]) if n else set()
        n_pass = set(n["passing_cases"]) if n else set()
        o_x = (o or {}).get("worst") and o["worst"]["excess"]
        n_x = (n or {}).get("worst") and n["worst"]["excess"]
        ratio_change = None
        if o_x and n_x:
            ratio_change = n_x / o_x
        entry = {
            "cell": cid,
            "old_verdict": o["verdict"] if o else None,
            "new_verdict": n["verdict"] if n else None,
            "new_failures": sorted(n_fail - o_fail),
            "fixed": sorted((o_fail - n_fail) & n_pass),
            "not_rerun": sorted(o_fail - n_fail - n_pass),
            "old_worst_excess": o_x or None,
            "new_worst_excess": n_x or None,
            "ratio_change": ratio_change,
        }
        moved = ratio_change is not None and (ratio_change >= 2 or ratio_change <= 0.5)
        if (
            entry["new_failures"]
            or entry["fixed"]
            or entry["not_rerun"]
            or moved
            or entry["old_verdict"] != entry["new_verdict"]
        ):
            changes.append(entry)
    return {
        "baseline": str(baseline_path),
        "baseline_created": baseline.get("created"),
        "new_failures": sum(len(c["new_failures"]) for c in changes),
        "fixed": sum(len(c["fixed"]) for c in changes),
        "cells": changes,
    }


# ---- the report ---------------------------------------------------------------------------------
def summarise(
    records,
    frameworks,
    command="",
    run=None,
    out_dir=".",
    baseline=None,
    baseline_path=None,
    repro_dir=None,
    known=None,
    allow_stale=False,
    fail_on="any",
) -> dict:
    """The report of ``records``. ``known`` (a :class:`conformance.known.KnownSet`) turns matching
    departures into ``known`` and lists stale entries (they fail the run unless ``allow_stale``);
    ``fail_on="new"`` (with a ``baseline``) makes only failures the baseline did not have fail it."""
    run = run or {}
    env = environment(frameworks, run)
    known_summary = None
    if known is not None:
        records, known_summary = known.classify(records, framework_settings(frameworks))
        known_summary["strict"] = not allow_stale
        # a stale entry's reproducer decides: the departure is gone, or this run's draws missed it
        known_summary["stale"], known_summary["reproducers"] = stale_entries.confirm(
            known.entries, known_summary["stale"]
        )
    cells = build_cells(records)
    totals = Counter(results=len(records))
    totals.update(r["verdict"] for r in records)
    failures = [
        {
            **{
                k: r.get(k)
                for k in (
                    "framework",
                    "check",
                    "dtype",
                    "case_id",
                    "verdict",
                    "phase",
                    "config",
                    "reason",
                    "found",
                )
            },
            "rerun": (r.get("rerun") or {}).get("note"),  # run twice (conformance/rerun.py)
        }
        for r in records
        if r["verdict"] in FAILING
    ]
    stale = (known_summary or {}).get("stale", [])
    if stale:
        totals["stale"] = len(stale)
    gate = [] if allow_stale else ["stale"] * len(stale)
    regressed = regression(cells, baseline, baseline_path) if baseline is not None else None
    if fail_on == "new":
        if regressed is None:
            raise ValueError("fail_on='new' needs a baseline")
        # every failure the baseline had is tolerated; a new one is a departure
        verdicts = [r["verdict"] for r in records] + gate + ["new_failure"] * regressed["new_failures"]
        code, message = exitcodes.outcome(
            verdicts,
            fail_on=(*exitcodes.DEPARTING, "stale", "new_failure"),
            tolerated=(*exitcodes.DEPARTING, "known", "convention"),
        )
    else:
        code, message = exitcodes.outcome(
            [r["verdict"] for r in records] + gate,
            fail_on=(*exitcodes.DEPARTING, "stale"),
            tolerated=("known", "convention"),
        )
    report = {
        "schema_version": SCHEMA_VERSION,
        "outcome": {"code": code, "message": message},
        "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "command": command,
        "bound_formula": BOUND_FORMULA,
        "environment": env,
        "frameworks": frameworks,
        "totals": dict(totals),
        "failed": code == exitcodes.DEPARTURES,
        "verdicts": list(VERDICTS)
        + [v for v in HARNESS_VERDICTS if v not in VERDICTS]
        + sorted({r["verdict"] for r in records} - set(VERDICTS) - set(HARNESS_VERDICTS)),
        "histogram_edges": HIST_EDGES,
        "cells": cells,
        "discrepancies": discrepancies(
            records, frameworks, env["device"], env["precision"], Path(out_dir), repro_dir
        ),
        "unsupported": unsupported(records),
        "crashes": crashes(records),
        "retried": retries(records),
        "failures": failures,
        "regression": regressed,
        "known": known_summary,
        "conventions": conventions_met(records),
        "fail_on": fail_on,
        "departure_lines": departure_lines(records),
        "matrix": op_matrix(records),
        "coverage": _coverage(records),
        "results": results_table(records),
    }
    return report


def _coverage(records: list[dict]) -> dict:
    """Per op, how often each parameter feature and pair of features was drawn (conformance/coverage.py)."""

    return coverage_of_results(records).table()


def validate(report: dict) -> None:
    """Raise jsonschema.ValidationError when ``report`` does not follow report.schema.json."""
    import jsonschema

    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))


def _worst_row(w: dict | None) -> list | None:
    """A worst element for the page: [case, element, observed, expected, dtype, ulps, ratio, bound,
    ratio/bound], the figures null when infinite (a report.json from before ulps: none, shown as -)."""
    if not w:
        return None
    element = f"{w['output']}[{','.join(str(i) for i in w['index'])}]"
    observed = w.get("observed_text") or ("-" if w["observed"] is None else repr(w["observed"]))
    expected = w.get("expected_text") or ("-" if w["expected"] is None else repr(w["expected"]))
    excess = "inf" if w["infinite"] else w["excess"]
    ratio = "inf" if w["infinite"] else w["ratio"]
    return [
        w["case_id"],
        element,
        observed,
        expected,
        w.get("dtype"),
        w.get("ulps"),
        ratio,
        w["bound"],
        excess,
    ]


def page_data(report: dict) -> dict:
    """What index.html's script draws, from report.json alone, compact: cells as rows (the fields of
    ``report.js``'s ``cell``), the discrepancies, and every result's row of ``report["results"]``
    (absent from a report.json written before it: then none)."""
    cells = []
    for c in report["cells"]:
        h = c["histogram"]
        cells.append(
            [
                c["id"],
                c["framework"],
                c["op"],
                c["check"],
                c["dtype"],
                c["results"],
                c["counts"],
                c["verdict"],
                _worst_row(c["worst"]),
                [h["exact"], *h["counts"], h["infinite"]],
                c["failing_cases"][:12],
                len(c["failing_cases"]),
                [
                    [s["predicate"], s["failing"], s["failing_total"], s["passing"], s["passing_total"]]
                    for s in c["shared_parameters"]
                ],
            ]
        )
    discrepancies = [{**d, "worst": _worst_row(d["worst"])} for d in report["discrepancies"]]
    return {
        "edges": report["histogram_edges"],
        "hist_labels": _hist_labels(report["histogram_edges"]),
        "frameworks": sorted({c["framework"] for c in report["cells"]}),
        "cells": cells,
        "discrepancies": discrepancies,
        "results": (report.get("results") or {"rows": []})["rows"],
    }


def _named_nonfinite(x):
    """``x`` with every non-finite float replaced by "Infinity", "-Infinity" or "NaN"."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, dict):
        return {k: _named_nonfinite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_named_nonfinite(v) for v in x]
    return x


def _script_json(data) -> Markup:
    """``data`` as compact JSON safe inside <script>: '<', '>' and '&' written as JSON's \\u escapes;
    a non-finite number (a case parameter such as a norm's ``ord = inf``) as its name, a string."""
    text = json.dumps(_named_nonfinite(data), separators=(",", ":"), allow_nan=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def render_html(report: dict) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["g"] = lambda x, fmt="%.3g": "-" if x is None else fmt % x
    data = page_data(report)
    return env.get_template("report.html.j2").render(
        report=report,
        data_json=_script_json(data),
        data_frameworks=data["frameworks"],
        script=Markup((TEMPLATE_DIR / "report.js").read_text(encoding="utf-8")),
    )


def _hist_labels(e=HIST_EDGES) -> list[str]:
    return ["0"] + [f"<1e{e[0]}"] + [f"1e{a}..1e{b}" for a, b in zip(e, e[1:])] + [f">=1e{e[-1]}", "inf"]


def report_text(report: dict) -> str:
    """report.json's text: indented, except the per-result table, one line per result."""
    table = report.get("results")
    if not table:
        return json.dumps(report, indent=1)
    head, _, tail = json.dumps({**report, "results": None}, indent=1).rpartition('"results": null')
    rows = ",\n  ".join(json.dumps(r, separators=(",", ":")) for r in table["rows"])
    columns = json.dumps(table["columns"])
    return f'{head}"results": {{\n "columns": {columns},\n "rows": [\n  {rows}\n ]}}{tail}'


def build_report(
    out_dir,
    frameworks: dict | None = None,
    command: str = "",
    run: dict | None = None,
    results=None,
    baseline=None,
    read=None,
    known=None,
    allow_stale=False,
    fail_on="any",
    baseline_report=None,
) -> dict:
    """Summarise results (default ``out_dir/results.jsonl``) into out_dir/report.json and index.html.

    ``run`` carries the run's flags (device, precision, seed, max_examples); ``baseline`` is the
    path of an older report.json for the regression view (``baseline_report``: its content, when the
    caller read it already, e.g. before ``--overwrite`` moved it to previous/).
    """
    import os
    import shutil

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if read is None:
        read = read_results_file(Path(results) if results else out / "results.jsonl", missing_ok=True)
    base = baseline_report
    if base is None and baseline:
        base = read_baseline(baseline)
    # reproducers are written aside and swapped in whole: none from an earlier report survives
    staging = out / f".reproducers-new-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        report = summarise(
            read.records,
            frameworks or {},
            command,
            run,
            out,
            base,
            baseline,
            staging,
            known,
            allow_stale,
            fail_on,
        )
        report["skipped_lines"] = [{"line": n, "why": why} for n, why in read.skipped]
        atomic_write(out / "report.json", report_text(report))
        atomic_write(out / "index.html", render_html(report))
        final = out / "reproducers"
        if final.exists():
            old = out / f".reproducers-old-{os.getpid()}"
            os.replace(final, old)
            shutil.rmtree(old, ignore_errors=True)
        if staging.exists():
            os.replace(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report
