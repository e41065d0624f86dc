"""Count the elements the record judge cannot fail: a finite reference value with a bound that is
not finite (issue #38, "verdicts that can be taken at their word").

For every fuzzed op record (or ``--ops``), ``--n`` seeded samples per real dtype, every check the
record runs (the ``error`` check judges no values), and the arithmetic of each framework in
``--frameworks`` (PyTorch's float32 accumulator for half types, the dtype for JAX and TensorFlow:
conformance.precision), the reference's expected values and bounds are computed as the judge sees
them (``conformance.ops.judge.expected_for``, plus the judge's one ulp) and the elements with a
finite value and a nan bound, or an infinite one, are counted per op/check/dtype/arithmetic.

    PYTHONPATH=. python scripts/scan_free_bounds.py --ops std,var --n 3 --json /tmp/free.json

Nothing here runs a framework: the counts are properties of the reference's error model alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter

import numpy as np

from conformance.case import DTYPES
from conformance.ops import RECORDS, fuzzed
from conformance.ops.judge import expected_for
from conformance.precision import precision_for
from conformance.strategies import draw_examples, record_cases
from conformance.tolerance import free_elements

JUDGED_CHECKS = lambda rec: [c for c in rec.checks if c != "error"]  # noqa: E731


def scan_case(case, checks, frameworks):
    """{(check, framework arithmetic, kind): count} of free elements of one case (kind: nan | inf),
    plus {(check, arithmetic): reason} for the checks whose reference raised."""
    counts, raised = Counter(), {}
    seen = {}
    for framework in frameworks:
        precision = precision_for(case, {}, framework)
        arithmetic = precision.accumulate and f"{precision.dtype}/acc {precision.accumulate}" or precision.dtype
        for check in checks:
            key = (check, repr(precision))
            if key in seen:  # two frameworks with the same arithmetic: the same bounds
                for kind, n in seen[key].items():
                    counts[(check, arithmetic, kind)] += n
                continue
            try:
                with np.errstate(all="ignore"):
                    expected, _ = expected_for(case, check, precision)
            except Exception as exc:  # the reference cannot run it: not a free element, reported apart
                raised[(check, arithmetic)] = f"{type(exc).__name__}: {str(exc)[:120]}"
                seen[key] = {}
                continue
            found = Counter()
            for value, bound in expected.values():
                for kind, n in free_elements(value, bound, precision.dtype).items():
                    found[kind] += n
            seen[key] = found
            for kind, n in found.items():
                counts[(check, arithmetic, kind)] += n
    return counts, raised


def scan(ops, n, seed, dtypes, frameworks, budget_s=None, log=sys.stderr):
    """Rows {op, check, dtype, arithmetic, kind, elements, cases, example} over the records ``ops``."""
    rows, raised = {}, []
    for op in ops:
        rec = RECORDS[op]
        start = time.time()
        for dtype in dtypes:
            if dtype not in rec.dtypes:
                continue
            try:
                cases = draw_examples(record_cases(op, dtypes=(dtype,)), n, seed=seed)
            except Exception as exc:  # a strategy that cannot draw this dtype
                raised.append({"op": op, "dtype": dtype, "reason": f"draw: {exc}"[:160]})
                continue
            for case in cases:
                counts, why = scan_case(case, JUDGED_CHECKS(rec), frameworks)
                for (check, arithmetic), reason in why.items():
                    raised.append({"op": op, "check": check, "dtype": dtype, "arithmetic": arithmetic, "reason": reason})
                for (check, arithmetic, kind), k in counts.items():
                    row = rows.setdefault(
                        (op, check, dtype, arithmetic, kind),
                        {"op": op, "check": check, "dtype": dtype, "arithmetic": arithmetic, "kind": kind,
                         "elements": 0, "cases": 0, "example": case.to_json()},
                    )
                    if k > row.get("example_elements", 0):  # the case with the most free elements
                        row["example"], row["example_elements"] = case.to_json(), k
                    row["elements"] += k
                    row["cases"] += 1
                if budget_s and time.time() - start > budget_s:
                    break
        print(f"{op}: {time.time() - start:.1f}s", file=log, flush=True)
    return list(rows.values()), raised


def summary(rows) -> dict:
    """Totals by kind, and by (op, kind)."""
    by_kind, by_op = Counter(), Counter()
    for r in rows:
        by_kind[r["kind"]] += r["elements"]
        by_op[f"{r['op']} {r['kind']}"] += r["elements"]
    return {"elements_by_kind": dict(by_kind), "elements_by_op": dict(by_op.most_common())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", help="comma-separated records (default: every fuzzed record)")
    ap.add_argument("--n", type=int, default=2, help="samples per record and dtype")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--frameworks", default="torch,jax", help="whose arithmetic (tensorflow's is jax's)")
    ap.add_argument("--budget", type=float, default=None, help="seconds per record (then its next dtype)")
    ap.add_argument("--json", help="write rows, errors and the summary here")
    args = ap.parse_args(argv)
    ops = args.ops.split(",") if args.ops else sorted(fuzzed())
    rows, raised = scan(ops, args.n, args.seed, args.dtypes.split(","), args.frameworks.split(","), args.budget)
    out = {"args": vars(args), "summary": summary(rows), "rows": rows, "reference_raised": raised}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    for r in sorted(rows, key=lambda r: -r["elements"]):
        print(f"{r['elements']:6d} {r['kind']:3s} {r['op']:24s} {r['check']:13s} {r['dtype']:9s} {r['arithmetic']}")
    print(json.dumps(out["summary"]["elements_by_kind"]))


if __name__ == "__main__":
    main()
