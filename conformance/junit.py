"""JUnit XML for CI dashboards (GitHub Actions, GitLab, Jenkins read it).

One ``<testcase>`` per (case, framework, check, dtype): ``classname`` is
``refgrad.<framework>.<op>.<check>``, ``name`` is ``<case id>[<dtype>]``. A ``fail``,
``error_mismatch``, ``crash`` or ``timeout`` is a ``<failure>`` whose message is the report's
one-line summary (verdict and reason) and whose text names the reproducer when the report wrote
one; ``known`` is ``<skipped>`` with the known-departure entry's id and reason; ``convention`` is
``<skipped>`` naming the convention(s) and the alternative chosen; ``unsupported``,
``refused`` and ``reference_error`` are ``<skipped>`` with their reason. A stale known-departure
entry is a failing test case of its own (class ``refgrad.known``), so the dashboard shows why the
job failed. The file is written atomically.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from conformance.exitcodes import DEPARTING
from conformance.outdir import atomic_write

_MESSAGE_LIMIT = 1000


def _reproducers(report: dict) -> dict:
    """(case id, framework, check) -> the reproducer path the report wrote for it."""
    out = {}
    for d in report.get("discrepancies", []):
        path = d.get("reproducer_file")
        for case_id in [d.get("case_id"), *d.get("same_kind", [])]:
            if path and case_id:
                out.setdefault((case_id, d.get("framework"), d.get("check")), path)
    return out


def junit_tree(records: list[dict], report: dict, report_dir=".") -> ET.Element:
    reproducers = _reproducers(report)
    known_entries = {e["id"]: e for e in (report.get("known") or {}).get("entries", [])}
    suites: dict[str, ET.Element] = {}
    counts: dict[str, Counter] = {}
    root = ET.Element("testsuites", name="refgrad conformance")
    for rec in records:
        framework = str(rec.get("framework", "?"))
        suite = suites.get(framework)
        if suite is None:
            suite = suites[framework] = ET.SubElement(root, "testsuite", name=f"refgrad.{framework}")
            counts[framework] = Counter()
        op = (rec.get("case") or {}).get("op", "?")
        tc = ET.SubElement(
            suite,
            "testcase",
            classname=f"refgrad.{framework}.{op}.{rec.get('check')}",
            name=f"{rec.get('case_id')}[{rec.get('dtype')}]",
            time=f"{float(rec.get('seconds') or 0.0):.6f}",
        )
        verdict = rec.get("verdict")
        reason = str(rec.get("reason") or "")
        counts[framework]["tests"] += 1
        if verdict in DEPARTING:
            counts[framework]["failures"] += 1
            summary = f"{verdict}: {framework} {rec.get('check')} {rec.get('case_id')}: {reason}"
            failure = ET.SubElement(tc, "failure", message=summary[:_MESSAGE_LIMIT], type=verdict)
            repro = reproducers.get((rec.get("case_id"), framework, rec.get("check")))
            failure.text = summary + (f"\nreproducer: {Path(report_dir) / repro}" if repro else "")
        elif verdict == "known":
            counts[framework]["skipped"] += 1
            entry = known_entries.get((rec.get("known") or {}).get("id"), {})
            ET.SubElement(
                tc,
                "skipped",
                message=f"known departure {entry.get('id')}: {entry.get('reason', '')}"[:_MESSAGE_LIMIT],
            )
        elif verdict == "convention":
            counts[framework]["skipped"] += 1
            names = ", ".join(
                f"{c.get('name')} ({c.get('alternative')})" for c in rec.get("conventions") or []
            )
            ET.SubElement(tc, "skipped", message=f"convention {names}: {reason}"[:_MESSAGE_LIMIT])
        elif verdict != "pass":
            counts[framework]["skipped"] += 1
            ET.SubElement(tc, "skipped", message=f"{verdict}: {reason}"[:_MESSAGE_LIMIT])
    known = report.get("known") or {}
    if known.get("stale") and known.get("strict"):
        suite = ET.SubElement(root, "testsuite", name="refgrad.known")
        counts["known"] = Counter(tests=len(known["stale"]), failures=len(known["stale"]))
        suites["known"] = suite
        for entry_id in known["stale"]:
            tc = ET.SubElement(suite, "testcase", classname="refgrad.known", name=entry_id, time="0")
            ET.SubElement(
                tc,
                "failure",
                type="stale",
                message=f"stale: known departure {entry_id!r} of {known.get('file')} matched nothing in the "
                "region this run covered; the departure is gone: remove the entry",
            ).text = _reproducer_text((known.get("reproducers") or {}).get(entry_id))
    total = Counter()
    for name, suite in suites.items():
        c = counts[name]
        total.update(c)
        suite.set("tests", str(c["tests"]))
        suite.set("failures", str(c["failures"]))
        suite.set("skipped", str(c["skipped"]))
        suite.set("errors", "0")
    root.set("tests", str(total["tests"]))
    root.set("failures", str(total["failures"]))
    root.set("skipped", str(total["skipped"]))
    root.set("errors", "0")
    return root


def write_junit(path, records: list[dict], report: dict, report_dir=".") -> None:
    tree = junit_tree(records, report, report_dir)
    ET.indent(tree)
    atomic_write(Path(path), ET.tostring(tree, encoding="unicode", xml_declaration=True) + "\n")


def _reproducer_text(outcome: dict | None) -> str:
    """What a stale entry's reproducer printed (the failure's body)."""
    if outcome is None:
        return "no reproducer to confirm it"
    return f"reproducer {outcome['reproducer']} (exit {outcome['rc']}):\n{outcome['printed']}"
