"""Which op record samples fail on the strict device, and where: ``python -m tests.autograd.strict_survey``
prints one line per failing primitive (the innermost reference frames of the failure);
``--write`` rewrites :mod:`tests.autograd.strict_xfail` with them (strict xfails: only namespace
errors count as the expected failure). Run it after merging rules that have not been converted
to their data's namespace; a converted family leaves the list.
"""

from __future__ import annotations

import argparse
import linecache
import sys
from pathlib import Path

SKIP = ("strict_xp.py", "backend.py", "autograd/dispatch.py")


def site(exc):
    """``file:line `call``` of the innermost two reference frames (outside the dispatcher), the rule
    the dispatcher was running, and the kind of failure."""
    tb, frames, rule = exc.__traceback__, [], None
    while tb is not None:
        code = tb.tb_frame.f_code.co_filename
        r = tb.tb_frame.f_locals.get("rule")
        if r is not None and hasattr(r, "name") and "dispatch.py" in code:
            rule = r.name
        if "/reference/" in code and not any(k in code for k in SKIP):
            frames.append((code, tb.tb_lineno))
        tb = tb.tb_next
    root = str(Path(__file__).resolve().parents[2]) + "/"
    parts = [
        f"{path.replace(root, '')}:{line} `{linecache.getline(path, line).strip()[:70]}`"
        for path, line in frames[-2:][::-1]
    ]
    msg = str(exc).split("\n")[0]
    if "same device" in msg:
        kind = f"a CPU tensor made in a rule meets the data in {rule}"
    elif rule and not parts:
        kind = f"NumPy on data in rule {rule}'s forward"
    else:
        kind = msg[:60]
    where = "; called from ".join(parts) if parts else f"rule {rule}"
    return f"{where} ({type(exc).__name__}: {kind})"


def survey():
    from tests.autograd import test_strict_namespace as S
    from tests.autograd.op_records import OP_RECORDS
    from tests.func.test_vmap import OVERRIDES

    found = {"STRICT_XFAIL": {}, "STRICT_XFAIL_VMAP": {}, "STRICT_XFAIL_BOUNDS": {}}
    for op in sorted(OP_RECORDS):
        checks = [("STRICT_XFAIL", lambda s, op=op: S.check_sample(op, *s[:4]), OP_RECORDS[op])]
        if op in S.VMAP_OPS:
            checks.append(
                (
                    "STRICT_XFAIL_VMAP",
                    lambda s, op=op: S.check_vmap_sample(op, *s[:4]),
                    OVERRIDES.get(op, OP_RECORDS[op]),
                )
            )
        if op in S.REAL_OPS:
            real = [s for s in OP_RECORDS[op] if not set(s[3]) & set("cqu")]
            checks.append(("STRICT_XFAIL_BOUNDS", lambda s, op=op: S.check_bounds(op, *s[:4]), real))
        for table, check, samples in checks:
            try:
                for sample in samples:
                    check(sample)
            except S.NAMESPACE_ERRORS as exc:
                found[table][op] = site(exc)
            except AssertionError as exc:  # a wrong value is a failure, never an xfail
                print(f"{table} {op}: values differ: {str(exc).strip().splitlines()[-1]}", file=sys.stderr)
            except Exception as exc:  # not a namespace error: reported, never listed
                print(f"{table} {op}: {type(exc).__name__}: {exc}", file=sys.stderr)
    return found


def write(found):
    path = Path(__file__).with_name("strict_xfail.py")
    text = path.read_text()
    head = text.split("# forward, VJP, JVP")[0]
    body = []
    for table, title in (
        ("STRICT_XFAIL", "# forward, VJP, JVP (test_strict_matches_numpy)"),
        ("STRICT_XFAIL_VMAP", "# vmap (test_strict_vmap_matches_numpy)"),
        ("STRICT_XFAIL_BOUNDS", "# the error tracker (test_strict_error_bounds_match_numpy)"),
    ):
        entries = "".join(f"    {op!r}: {reason!r},\n" for op, reason in found[table].items())
        body.append(f"{title}\n{table}: dict = {{\n{entries}}}\n")
    path.write_text(head + "\n".join(body))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite tests/autograd/strict_xfail.py")
    args = parser.parse_args(argv)
    found = survey()
    for table, entries in found.items():
        for op, reason in entries.items():
            print(f"{table} {op}: {reason}")
    if args.write:
        write(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
