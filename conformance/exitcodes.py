"""The exit-code contract of every ``conformance`` subcommand, in one place.

| code | name            | meaning                                                                     |
|------|-----------------|-----------------------------------------------------------------------------|
| 0    | OK              | every selected result was judged (or is ``unsupported`` beside judged ones) |
|      |                 | and none departs (``pass``, ``convention`` and ``known`` do not depart)     |
| 1    | DEPARTURES      | some result is ``fail``, ``error_mismatch``, ``crash`` or ``timeout``        |
| 2    | USAGE           | bad flag, value, case file, results file or output directory; also filters  |
|      |                 | that select nothing (the message names them): nothing was run               |
| 3    | INTERNAL        | a bug in refgrad itself: one line on stderr and the path of a crash log     |
|      |                 | holding the traceback                                                       |
| 4    | NOTHING_JUDGED  | cases ran, but no result was judged (every one ``unsupported``, refused or  |
|      |                 | a reference-side error): a gate that checked nothing is never green         |
| 5    | OUTPUT_LOST     | the run could not keep its results (directory vanished, a write failed):    |
|      |                 | what was recorded before is intact; the report is not claimed               |
| 130  | INTERRUPTED     | SIGINT or SIGTERM; recorded results are kept, continue with ``--resume``    |

Issue #19's ``known`` / ``stale`` verdicts and ``--fail-on new`` fit without a new code:
:func:`outcome` takes ``fail_on``, the set of verdicts that make a run exit 1, so a gate that
only fails on new departures passes the verdicts it tolerates in ``tolerated``.
"""

from __future__ import annotations

OK = 0
DEPARTURES = 1
USAGE = 2
INTERNAL = 3
NOTHING_JUDGED = 4
OUTPUT_LOST = 5
INTERRUPTED = 130

# verdicts that are a framework's departure (the default --fail-on)
DEPARTING = ("fail", "error_mismatch", "crash", "timeout")
# verdicts that judged a result and found it agreeing: within its bounds (pass), or different only
# where a declared convention leaves the choice open and equal there to a documented alternative
AGREEING = ("pass", "convention")
# verdicts that judged nothing: the case was not compared at all
NOT_JUDGED = ("unsupported", "reference_error", "refused")

TABLE = (
    (OK, "OK", "every selected result judged and agreeing"),
    (DEPARTURES, "DEPARTURES", "some result is fail, error_mismatch, crash or timeout"),
    (USAGE, "USAGE", "bad flag, value, input file or output directory, or filters selecting nothing"),
    (INTERNAL, "INTERNAL", "a refgrad bug: one line plus the path of a crash log with the traceback"),
    (NOTHING_JUDGED, "NOTHING_JUDGED", "cases ran but none was judged (all unsupported/refused)"),
    (OUTPUT_LOST, "OUTPUT_LOST", "results could not be kept (directory gone, write failed)"),
    (INTERRUPTED, "INTERRUPTED", "SIGINT/SIGTERM; results so far kept, continue with --resume"),
)


def outcome(verdicts, fail_on=DEPARTING, tolerated=()) -> tuple[int, str]:
    """(exit code, one-line reason) for a run's verdicts (an iterable of strings).

    Unknown verdicts (written by a newer refgrad) neither pass nor fail a run on their own:
    they count as not judged.
    """
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v] = counts.get(v, 0) + 1
    departing = {v: n for v, n in counts.items() if v in fail_on and v not in tolerated}
    if departing:
        what = ", ".join(f"{n} {v}" for v, n in sorted(departing.items()))
        return DEPARTURES, f"departures found: {what}"
    judged = sum(n for v, n in counts.items() if v in AGREEING or v in fail_on or v in tolerated)
    if not counts:
        return NOTHING_JUDGED, "no result at all: nothing was judged"
    if not judged:
        what = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        return NOTHING_JUDGED, f"nothing was judged ({what})"
    return OK, f"{judged} results judged, no departure"


def table_markdown() -> str:
    """The table above as Markdown (docs/reliability.md embeds it; a test keeps them equal)."""
    rows = ["| code | name | meaning |", "|---|---|---|"]
    rows += [f"| {code} | `{name}` | {meaning} |" for code, name, meaning in TABLE]
    return "\n".join(rows)
