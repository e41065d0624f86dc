"""Confirming a stale known departure by running its reproducer.

An entry whose region a run covered but which matched nothing looks fixed, but a run's draws may
simply have missed the departing part of the region. The entry's ``reproducer`` settles it on the
installed framework version, and the report says what it printed:

* a ``.py`` file: a plain framework script, run with this interpreter; the entry's ``reproduces``
  pattern (a regular expression) is searched in what it printed (stdout and stderr together, so
  a departure that is an exception shows too);
* a ``.json`` case file: replayed on the entry's framework (``conformance replay``) with the
  entry's own known file; it reproduces when one of its results matches the entry.

A reproducer that still reproduces takes the entry off the stale list (``reproduced`` in the
report: the run missed it); one that no longer does leaves it stale with its output beside it (the
entry must go). An entry without a reproducer stays stale on the run's evidence alone. A reproducer
that cannot be run to the end (timeout) confirms nothing, so the entry stays stale and says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: seconds one reproducer may run: a replayed case imports its framework (about 10 s) and runs a
#: handful of checks
REPRODUCER_TIMEOUT = 300
#: characters of a reproducer's output kept in the report
PRINTED_LIMIT = 2000
#: set in a replayed reproducer's environment: its own stale entries are not confirmed again
NESTED = "REFGRAD_CONFIRMING_STALE"


def confirm(entries, stale_ids, timeout=REPRODUCER_TIMEOUT) -> tuple[list[str], dict]:
    """(the ids still stale, {id: what its reproducer did}) for ``stale_ids`` among ``entries``.

    Each value is {"reproducer", "printed", "rc", "reproduces"} ("reproduces" is None when the
    reproducer could not run to the end); entries without a reproducer are not in it."""
    by_id = {e.id: e for e in entries}
    if os.environ.get(NESTED):
        return list(stale_ids), {}
    checked = run_reproducers([by_id[i] for i in stale_ids if by_id[i].reproducer is not None], timeout)
    still = [i for i in stale_ids if i not in checked or not checked[i]["reproduces"]]
    return still, checked


def reproducer_path(entry) -> Path:
    """The reproducer's file (resolved beside the known file that holds the entry when it was read:
    ``entry.source`` is only a label, ``builtin`` for the shipped file)."""
    return Path(entry.reproducer_path)


def run_reproducer(entry, timeout=REPRODUCER_TIMEOUT) -> dict:
    """What ``entry``'s reproducer did: {"reproducer", "rc", "reproduces", "printed"}."""
    return run_reproducers([entry], timeout)[entry.id]


def run_reproducers(entries, timeout=REPRODUCER_TIMEOUT) -> dict:
    """{entry id: what its reproducer did} for ``entries`` (each with a reproducer).

    A ``.py`` script shared by several entries (one script often shows a departure in several
    dtypes or checks, each its own entry) runs once, and each entry's ``reproduces`` is searched in
    that one output; a ``.json`` case is replayed once per entry (the replay counts the results
    that match that entry)."""
    outcomes, scripts = {}, {}
    for entry in entries:
        path = reproducer_path(entry)
        if path.suffix == ".py":
            if path not in scripts:
                scripts[path] = _run([sys.executable, str(path)], timeout)
            rc, printed = scripts[path]
            reproduces = None if rc is None else entry.reproduces.search(printed) is not None
        else:
            with tempfile.TemporaryDirectory(prefix="refgrad-replay-") as out:
                command = [
                    sys.executable, "-m", "conformance", "replay", str(path),
                    "--frameworks", entry.framework, "--known", entry.known_file, "--allow-stale",
                    "--out", str(Path(out) / "out"), "--quiet",
                ]  # fmt: skip
                rc, printed = _run(command, timeout)
                if rc is not None:
                    reproduces, printed = _replayed(Path(out) / "out" / "report.json", entry.id, printed)
                else:
                    reproduces = None
        outcomes[entry.id] = {
            "reproducer": entry.reproducer,
            "rc": rc,
            "reproduces": reproduces,
            "printed": printed[-PRINTED_LIMIT:],
        }
    return outcomes


def _run(command: list[str], timeout: float) -> tuple[int | None, str]:
    """(exit status, stdout and stderr together) of ``command`` run from a temporary directory
    with this checkout's conformance importable; (None, why) when it did not finish in time."""
    # the replay imports this checkout's conformance, whatever the reproducer's working directory
    package_root = str(Path(__file__).resolve().parents[1])
    env = {
        **os.environ,
        NESTED: "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
    }
    with tempfile.TemporaryDirectory(prefix="refgrad-reproducer-") as tmp:
        try:
            done = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"did not finish within {timeout} s: nothing confirmed"
    return done.returncode, (done.stdout + done.stderr).strip()


def _replayed(report_path: Path, entry_id: str, printed: str) -> tuple[bool, str]:
    """(whether a replayed case matched the entry, what to show of it)."""
    if not report_path.exists():
        return False, f"the replay wrote no report: {printed}"
    report = json.loads(report_path.read_text())
    matched = sum(e["matched"] for e in (report.get("known") or {}).get("entries", []) if e["id"] == entry_id)
    totals = ", ".join(f"{v} {k}" for k, v in sorted(report["totals"].items()))
    lines = [f"replay: {totals}; {matched} result(s) matched {entry_id!r}"]
    lines += [
        f"  {d.get('check')} {d.get('case_id')}: {d.get('verdict')}: {d.get('reason')}"
        for d in report.get("failures", [])[:5]
    ]
    return matched > 0, "\n".join(lines)
