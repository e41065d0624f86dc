"""refgrad's pytest plugin (entry point ``pytest11: refgrad``): ``--refgrad-report DIR``.

With the option, every :func:`refgrad.testing.assert_conforms` call of the session is recorded,
and at the end of the session ``DIR/results.jsonl`` and a refgrad report (``report.json``,
``index.html``) are written there, the same report ``conformance run`` writes and
``conformance report DIR`` re-renders.
"""

from __future__ import annotations

import json
from pathlib import Path


def pytest_addoption(parser):
    group = parser.getgroup("refgrad")
    group.addoption(
        "--refgrad-report",
        metavar="DIR",
        default=None,
        help="write the results of this session's assert_conforms calls as a refgrad report in DIR",
    )


def pytest_configure(config):
    from conformance.testing import conforms

    target = config.getoption("--refgrad-report", default=None)
    if target:
        from conformance.outdir import check_writable

        check_writable(Path(target), "--refgrad-report")
        conforms._RESULTS = []


def pytest_sessionfinish(session, exitstatus):
    from conformance.testing import conforms

    target = session.config.getoption("--refgrad-report", default=None)
    records, conforms._RESULTS = conforms._RESULTS, None
    if not target or records is None:
        return
    from conformance.outdir import atomic_write
    from conformance.report import build_report
    from conformance.resultsio import RESULTS_SCHEMA

    out = Path(target)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(
        out / "results.jsonl", "".join(json.dumps({"schema": RESULTS_SCHEMA, **r}) + "\n" for r in records)
    )
    frameworks = {
        r["framework"]: {"version": r.get("version"), "settings": {}, "spec": None} for r in records
    }
    report = build_report(out, frameworks, "pytest --refgrad-report " + str(target))
    session.config._refgrad_summary = (len(records), report["totals"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    summary = getattr(config, "_refgrad_summary", None)
    if summary:
        n, totals = summary
        counts = ", ".join(f"{v} {c}" for v, c in totals.items() if v != "results")
        terminalreporter.write_line(
            f"refgrad: {n} assert_conforms results ({counts}) written to "
            f"{config.getoption('--refgrad-report')}/index.html"
        )
