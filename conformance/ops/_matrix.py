"""The op × framework matrix of the op records, as Markdown (docs/records.md).

``python -m conformance.ops._matrix`` rewrites docs/records.md from the registry;
``python -m conformance.ops._matrix --check`` exits 1 when the file is out of date (the test
``tests/conformance/test_records_matrix.py`` runs the same comparison).
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance import ops
from conformance.ops.special import MISSING

DOC = Path(__file__).resolve().parents[2] / "docs" / "records.md"
_NAMES = {"torch": "PyTorch", "jax": "JAX", "tensorflow": "TensorFlow"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _spelled(rec, framework) -> bool:
    """``conv`` (no ``fn``: its adapters predate the registry) runs on every framework."""
    return rec.fn is None or callable(rec.spelling(framework))


def render() -> str:
    fuzzed = ops.fuzzed()
    not_fuzzed = {n: r for n, r in ops.RECORDS.items() if r.not_fuzzed}
    lines = [
        "# Op records: the op × framework matrix",
        "",
        "Generated from the registry (`conformance/ops/`) by `python -m conformance.ops._matrix`;",
        "`tests/conformance/test_records_matrix.py` fails when this file is out of date. A ✓ means the",
        "framework has a spelling of the record; a number points to the reason it has none. A spelling",
        "may still refuse single checks or cases with the framework's own reason (`refuses` in",
        "`conformance/ops/_run.py`), reported as `unsupported` in a campaign.",
        "",
        f"{len(ops.RECORDS)} records: {len(fuzzed)} fuzzed (convolution, `conv`, among them), "
        f"{len(not_fuzzed)} not fuzzed on their own (internal primitives reached through another "
        f"record's derivatives, in-place-only or random ops; listed at the end); they cover "
        f"{len(ops.covered_rules())} table primitives.",
        "",
        "## Per family",
        "",
        "| family | records | " + " | ".join(_NAMES.values()) + " |",
        "|---|---|" + "---|" * len(_NAMES),
    ]
    for family, names in sorted(ops.families().items()):
        counts = [sum(1 for n in names if _spelled(ops.RECORDS[n], f)) for f in _NAMES]
        lines.append(f"| {family} | {len(names)} | " + " | ".join(str(c) for c in counts) + " |")
    total = [sum(1 for r in fuzzed.values() if _spelled(r, f)) for f in _NAMES]
    lines.append(f"| **all** | {len(fuzzed)} | " + " | ".join(str(c) for c in total) + " |")
    lines += [
        "",
        "## Per record",
        "",
        "| record | family | checks | " + " | ".join(_NAMES.values()) + " |",
        "|---|---|---|" + "---|" * len(_NAMES),
    ]
    reasons: dict[str, int] = {}
    for family, names in sorted(ops.families().items()):
        for name in sorted(names):
            rec = ops.RECORDS[name]
            cells = []
            for f in _NAMES:
                spelled = rec.spelling(f) if rec.fn else None
                if spelled is None or callable(spelled):
                    cells.append("✓")
                else:
                    k = reasons.setdefault(spelled, len(reasons) + 1)
                    cells.append(f"— [{k}](#why-{k})")
            checks = ", ".join(rec.checks)
            lines.append(f"| `{name}` | {family} | {checks} | " + " | ".join(cells) + " |")
    lines += ["", "### Why a framework has no spelling", ""]
    for text, k in reasons.items():
        lines.append(f'{k}. <a id="why-{k}"></a>{_cell(text)}')
    spelled = {n: r for n, r in sorted(fuzzed.items()) if r.spellings}
    lines += [
        "",
        "## Other public spellings",
        "",
        f"{sum(len(v) for r in spelled.values() for v in r.spellings.values())} spellings of "
        f"{len(spelled)} records besides the primary ones (`conformance/ops/_spellings.py`): each case "
        "draws which one a framework runs (`params.spelling_<framework>`; absent: the primary).",
        "",
        "| record | " + " | ".join(_NAMES.values()) + " |",
        "|---|" + "---|" * len(_NAMES),
    ]
    for name, rec in spelled.items():
        cells = [", ".join(f"`{s}`" for s in rec.spellings.get(f, {})) or "—" for f in _NAMES]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")  # (the per-record table above has `name`)
    with_points = {
        n: r for n, r in sorted(fuzzed.items()) if any(ops.as_domain(d).points for d in r.domains.values())
    }
    n_sweep = 2 * sum(len(ops.as_domain(d).points) for r in with_points.values() for d in r.domains.values())
    n_own = sum(len([c for c in r.checks if c != "error"]) for r in with_points.values())
    lines += [
        "",
        "## Domains and their hard points",
        "",
        f"{len(with_points)} records declare, per input, the function's mathematical domain and the "
        "points in it where accuracy is hard: zeros (relative accuracy), poles, branch points "
        "(`conformance/ops/_domains.py`), and kinks and steps where a derivative's value is a "
        "convention. `refgrad run --domains whole` draws their inputs over the "
        "whole domain and adds the `near` kind: half of the elements at a point or 2^-k of its "
        "scale from it, down to the dtype's last ulps. Under `--domains whole` (and `mixed`'s "
        "whole share) a `near` example is mostly *aimed* as a sweep case is "
        "(`conformance.coverage.near_aims`: `point=<input>:<label>` and `values=near` or `at`, in "
        "the dtypes the point lives in: the real ones for a domain's points, the complex ones for "
        "the points of the plane), and a record's examples are steered to the reach cells it has "
        "not filled yet (while one is unfilled, up to six candidates are drawn until one fills "
        "one); in a complex dtype the unaimed `near` kind moves half of the elements to the "
        "record's points of the plane (`conformance.ops._domains.plane_near`: one in eight of "
        "them on the point, a cut's point with the zero part of its side's sign). The records' own draws in the default "
        "campaign (`--domains gate`) keep the placement the known-departures file is written for, "
        "and at one example per record and check (Hypothesis's simplest draw: a scalar) they reach "
        "almost none of the points; so the default campaign adds the *reach sweep* "
        "(`run --reach sweep`, the default; `--reach off` leaves it out): per declared point two "
        "examples, the record's simplest sample with `domain=whole` and `point=<input>:<label>`: "
        "`values=near`, every element of that input 2^-k (k from 5 to the dtype's mantissa bits: "
        "at least one ulp, never on the point) of its scale from it on the side the domain allows, "
        "and `values=at`, the same with the first element exactly on the point (its value in the "
        "dtype), where a value or derivative is often a rule of its own (TensorFlow's xdivy "
        "gradient masks x != 0); the other inputs over their whole domains "
        "(`conformance.coverage.reach_points`). The record's checks (but `error`) and real dtypes "
        "are dealt round-robin over its points (a point's `near` example takes check and dtype i, "
        "its `at` example i + 1), and a sweep unit's seed is the point's, not the campaign's: the "
        "sweep draws the same cases at every `--seed`, `--draws` and budget, so its verdicts are as "
        "stable as the gate's, and both cells of every declared point of every record are reached "
        f"by `refgrad run` (two units per point: {n_sweep} sweep units beside the "
        f"{n_own} own units, one per check, of these {len(with_points)} records). A campaign "
        "report's coverage table lists, per record, how often each point's two cells were filled "
        "(`at=<input>:<point>`: an element exactly on it; `near=<input>:<point>`: another within "
        "2^-4 of its scale) and which were not; `tests/conformance/test_domains.py` fails for a "
        "point the record's strategy cannot draw near, or exactly at, in some dtype, and for a "
        "cell the default campaign's sweep does not reach. A point may move with the op's drawn "
        "parameters (`param_point`: hardtanh's kinks at `min_val` and `max_val`, clamp's at `min` "
        "and `max`, threshold's step, hardshrink's and softshrink's at -lambd and lambd; the "
        "table's `at <param>`): it lies at the case's own parameter, its `at` element the "
        "parameter rounded to the dtype (a parameter the dtype cannot represent leaves that "
        "element half an ulp or less to one side of the kink, `conformance/ops/_domains.py`; the "
        "records draw representable ones: among them 0, negatives, +-256, and min = max or "
        "lambd = 0 where two kinks meet). The sweep's two units of a moving point draw "
        "`MOVING_SWEEP` (2) seeded examples each (`conformance.executors.plan`; the point's seed, "
        "the same at every campaign seed, an empty input redrawn), so the point is judged at "
        "several of the parameter values the record draws, not at its simplest draw's only. "
        "The `special` kind draws IEEE special "
        "values over the whole line in every record, whatever its domain.",
        "",
        "| record | input | domain | hard points |",
        "|---|---|---|---|",
    ]
    for name, rec in with_points.items():
        for arg, declared in rec.domains.items():
            d = ops.as_domain(declared)
            points = ", ".join(f"{p.label}" + _moves(p) + ("" if p.side == "both" else f" ({p.side})") for p in d.points)
            lines.append(f"| {name} | {arg} | [{d.lo:g}, {d.hi:g}] | {_cell(points) or '—'} |")  # (`name` above)
    n_plane = 2 * sum(len(points) for inputs in ops.PLANE_POINTS.values() for points in inputs.values())
    lines += [
        "",
        "### Points of the complex plane",
        "",
        f"{len(ops.PLANE_POINTS)} complex records declare the hard points of their complex argument "
        "(`conformance.ops.PLANE_POINTS`, declared in `conformance/ops/complex.py`; "
        "`conformance.ops._domains.PlanePoint`): branch points, poles and zero divisors, and each "
        "branch cut as two rows, one per side, the sign of the part that is zero on the cut deciding "
        "the side (`x+0i` and `x-0i` for a cut along the real axis, `+0+iy` and `-0+iy` along the "
        "imaginary axis; C99 Annex G's and PyTorch's convention). In the complex dtypes the reach "
        "sweep deals them like the real points, two examples each (complex64 and complex128 dealt "
        f"round-robin; {n_plane} sweep examples in all): `values=near`, every element of that input "
        "2^-k of its scale from an isolated point in one of eight compass directions, or on the "
        "cut's line beyond the branch point with the zero part 2^-k of the scale on the row's side "
        "(k from 5 to the part dtype's mantissa bits); `values=at`, the first element exactly on "
        "the point (each part the point's in the part dtype), or on the cut with a zero of the "
        "row's sign. The coverage table lists these rows (labels `z ...`) for a record that drew "
        "complex cases; `tests/conformance/test_complex_points.py` fails for a row a complex dtype "
        "does not reach at or near.",
        "",
        "| record | input | points of the complex plane |",
        "|---|---|---|",
    ]
    for name, inputs in sorted(ops.PLANE_POINTS.items()):
        for arg, points in inputs.items():
            lines.append(f"| {name} | {arg} | {_cell(', '.join(p.label for p in points))} |")
    lines += [
        "",
        "## Special functions still missing",
        "",
        "Every public function of torch.special, jax.scipy.special, jax.nn, tf.math.special and the "
        "special functions of tf.math on the installed versions is a spelling of some record or named "
        "here (`conformance/ops/special.py` MISSING; tests/conformance/test_special_survey.py checks both "
        "ways: a new function, or an entry nothing installed needs, fails it).",
        "",
        "| functions | why |",
        "|---|---|",
    ]
    lines += [f"| {_cell(names)} | {_cell(why)} |" for names, why in MISSING.items()]
    lines += ["", "## Not fuzzed on their own", "", "| primitive | family | why |", "|---|---|---|"]
    for name, rec in sorted(not_fuzzed.items()):
        lines.append(f"| `{name}` | {rec.family} | {_cell(rec.not_fuzzed)} |")
    return "\n".join(lines) + "\n"


def _moves(point) -> str:
    """`` (at -lambd)`` for a point that moves with a parameter (its value ``at + scale * param``)."""
    if point.param is None:
        return ""
    scale = {1.0: "", -1.0: "-"}.get(point.scale, f"{point.scale:g} ")
    return f" (at {point.at:g} + {scale}{point.param})" if point.at else f" (at {scale}{point.param})"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if "--check" in argv:
        current = DOC.read_text() if DOC.exists() else ""
        if current != text:
            print(f"{DOC} is out of date: run python -m conformance.ops._matrix", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
