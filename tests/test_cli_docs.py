"""docs/conformance.md and ``--help`` say what the parser does: its defaults, the known file's format,
and which checks op records run."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from conformance import cli, shipped
from conformance.ops import RECORDS

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "conformance.md").read_text()


def _run_parser() -> argparse.ArgumentParser:
    (sub,) = (a for a in cli._parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]


def _defaults() -> dict:
    return {a.option_strings[0]: a for a in _run_parser()._actions if a.option_strings}


def _row(flag: str) -> str:
    """The flag table's row for ``flag``."""
    (row,) = [line for line in DOC.splitlines() if re.match(rf"\| `{re.escape(flag)}[ `=]", line)]
    return row


def _limits() -> str:
    return DOC.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]


def test_the_flag_table_states_the_parsers_defaults():
    flags = _defaults()
    assert flags["--ops"].default is None  # resolved to DEFAULT_OPS in cmd_run
    assert f"default `{','.join(cli.DEFAULT_OPS)}`" in _row("--ops")
    examples = _row("--max-examples")
    assert flags["--max-examples"].default is None and f"default {cli.DEFAULT_MAX_EXAMPLES}" in examples
    for mode, n in cli.MODE_MAX_EXAMPLES.items():
        assert f"`{mode}` {n}" in examples
    assert f"op record gets {cli.DEFAULT_RECORD_EXAMPLES} per framework and check" in examples
    assert f"default `{flags['--out'].default}`" in _row("--out")
    assert f"default {flags['--timeout'].default})" in _row("--timeout")
    assert f"default {flags['--seed'].default})" in _row("--seed")
    assert f"(default `{flags['--domains'].default}`)" in _row("--domains")
    assert flags["--found-dir"].default is None and "default `OUT/found`" in _row("--found-dir")
    assert (
        cli.DEFAULT_CASES == ROOT / "refgrad" / "cases"
        and "default the cases refgrad ships, `refgrad/cases/`" in _row("--cases")
    )
    known = _row("--known [FILE]")
    assert flags["--known"].const == shipped.BUILTIN and f"`{shipped.BUILTIN}`" in known
    assert f"`refgrad/cases/{shipped.known_file().name}`" in known and shipped.known_file().suffix == ".toml"


def test_help_names_the_known_file_the_project_ships_and_the_default_ops():
    text = " ".join(_run_parser().format_help().split())
    assert "known_departures.json" not in text and shipped.known_file().name in text
    assert "TOML or JSON" in text and f"'{shipped.BUILTIN}'" in text
    assert f"(default: {','.join(cli.DEFAULT_OPS)};" in text
    assert "default OUT/found" in text


def test_limits_say_which_checks_op_records_run_and_the_default_ops():
    limits = _limits()
    (records,) = [b for b in limits.split("\n* ") if b.startswith("Op records")]
    run_by_records = {c for r in RECORDS.values() for c in r.checks}
    assert {"vmap", "vmap_vjp"} <= run_by_records
    for check in run_by_records:
        assert f"`{check}`" in records, check
    assert "only" not in records.split("The error declaration")[0]  # no check claimed for conv only
    assert f"The default `--ops` is `{','.join(cli.DEFAULT_OPS)}`" in " ".join(records.split())
