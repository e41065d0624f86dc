"""refgrad's pytest plugin (entry point ``pytest11: refgrad``): ``--refgrad-report DIR``.

With the option, every :func:`refgrad.testing.assert_conforms` call of the session is recorded,
and at the end of the session ``DIR/results.jsonl`` and a refgrad report (``report.json``,
``index.html``) are written there, the same report ``conformance run`` writes and
``conformance report DIR`` re-renders.

``DIR`` is owned as ``conformance run`` owns its ``--out`` (conformance/outdir.py): the session
holds ``DIR/.lock`` from start to end, so a second session (or a run) into the same directory is
refused, and an earlier session's or run's results there are moved to ``DIR/previous/<UTC time>/``
before the new ones are written, never replaced. A directory that cannot be used (not writable,
a file, held by another run) is a pytest usage error (exit 4) before any test runs. Under
pytest-xdist (``-n N``) each worker sends its records to the controller, which writes the one
report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.outdir import OutputDir, OutputError, atomic_write
from conformance.report import build_report
from conformance.resultsio import RESULTS_SCHEMA
from conformance.testing import conforms

WORKER_KEY = "refgrad_records"  # a worker's records, as JSON, in its workeroutput


def pytest_addoption(parser):
    group = parser.getgroup("refgrad")
    group.addoption(
        "--refgrad-report",
        metavar="DIR",
        default=None,
        help="write the results of this session's assert_conforms calls as a refgrad report in DIR "
        "(earlier results there are moved to DIR/previous/)",
    )


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")  # a pytest-xdist worker


def pytest_configure(config):
    target = config.getoption("--refgrad-report", default=None)
    if not target:
        return
    if not _is_worker(config):  # the controller (or a plain session) owns the directory
        try:
            config._refgrad_outdir = OutputDir.lock_only(Path(target), flag="--refgrad-report")
        except OutputError as exc:
            raise pytest.UsageError(str(exc)) from None
    conforms._RESULTS = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """pytest-xdist: a worker finished; its records join the controller's."""
    data = getattr(node, "workeroutput", {}).get(WORKER_KEY)
    if data and conforms._RESULTS is not None:
        conforms._RESULTS.extend(json.loads(data))


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    target = config.getoption("--refgrad-report", default=None)
    records, conforms._RESULTS = conforms._RESULTS, None
    if not target or records is None:
        return
    if _is_worker(config):
        config.workeroutput[WORKER_KEY] = json.dumps(records)
        return
    outdir = config._refgrad_outdir
    try:
        _write(outdir, records, target, config)
    finally:
        outdir.release()


def _write(outdir, records, target, config) -> None:
    out = outdir.path
    config._refgrad_moved = outdir.keep_earlier()
    atomic_write(
        out / "results.jsonl", "".join(json.dumps({"schema": RESULTS_SCHEMA, **r}) + "\n" for r in records)
    )
    frameworks = {
        r["framework"]: {"version": r.get("version"), "settings": {}, "spec": None} for r in records
    }
    report = build_report(out, frameworks, "pytest --refgrad-report " + str(target))
    config._refgrad_summary = (len(records), report["totals"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    summary = getattr(config, "_refgrad_summary", None)
    if summary:
        n, totals = summary
        counts = ", ".join(f"{v} {c}" for v, c in totals.items() if v != "results")
        terminalreporter.write_line(
            f"refgrad: {n} assert_conforms results ({counts}) written to "
            f"{config.getoption('--refgrad-report')}/index.html"
        )
        moved = getattr(config, "_refgrad_moved", None)
        if moved:
            terminalreporter.write_line(f"refgrad: the earlier results there were moved to {moved}")
