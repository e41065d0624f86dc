"""Measure, without running any framework, what the default conv campaign draws at each seed: its
fuzz units' examples (`refgrad run --ops conv`, the default budget), the distinct cases, the axis
triples drawn of those possible (the report's conv coverage, less the curated cases), and the draws
inside a known entry's region (its op, checks, dtypes and ``where``; default the partial entry
``jax-conv1d-mixed-sign-padding-wrong-values``). Drawing is cheap (about a second a seed); running
is not (minutes), so this is how a change to the conv strategy or its steering is weighed before a
campaign runs.

``--save DIR`` writes the region's draws (each with the check it was drawn for) as case files, to
be judged on the entry's framework alone, which tells which of them depart (a partial entry's
region is wider than its failing part):

    python scripts/measure_conv_reach.py --seeds 0-11 --save /tmp/region
    python -m conformance run --cases /tmp/region --ops conv --max-examples 0 --frameworks jax \\
        --known builtin --out /tmp/region-run

``--entry conv`` takes every conv entry of the builtin file whose framework runs in the default
campaign (torch, jax, tensorflow in their default modes) and whose settings hold here (``--settings``:
the frameworks' settings as JSON, default oneDNN on, an avx512_fp16 CPU: this machine's), and
prints per seed how many draws of the default conv units (the error check's invalid ones included)
lie in each region; ``--save DIR`` then writes them under ``DIR/<entry>/seed<N>/``, to be replayed
on the entry's framework (``run --cases DIR/<entry>/seed<N> --frameworks FW --max-examples 0``).

Run from the repository root: ``python scripts/measure_conv_reach.py [--seeds 0-5]``."""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's conformance

from conformance.case import DTYPES, save_case  # noqa: E402
from conformance.cli import ALL_CHECKS, DEFAULT_MAX_EXAMPLES  # noqa: E402
from conformance.coverage import Coverage  # noqa: E402
from conformance.executors.plan import fuzz_units  # noqa: E402
from conformance.known import load_known  # noqa: E402
from conformance.runner import _hypothesis  # noqa: E402

ENTRY = "jax-conv1d-mixed-sign-padding-wrong-values"


def failing_part(check: str, case) -> bool:
    """Whether a draw in the default entry's region is also in its measured failing part (docs/ci.md,
    convseed25: every failing result of three JAX replays): a non-empty batch, dilation 1, and
    either a plain conv with stride 1 whose (channels per group) x kernel width >= 8, or a
    transposed one's input gradient (a vjp check) whose contraction (weight dim 1) x width >= 8."""
    p, weight = case.params, case.shapes["weight"]
    if p.transposed:
        plain_part = "vjp" in check
        contracted = weight[1]
    else:
        plain_part = all(s == 1 for s in p.stride)
        contracted = case.shapes["input"][1] // p.groups
    return case.shapes["input"][0] > 0 and all(d == 1 for d in p.dilation) and plain_part and contracted * weight[2] >= 8


def conv_draws(seed: int, max_examples: int = DEFAULT_MAX_EXAMPLES, errors: bool = False) -> list[tuple[str, object]]:
    """(check, case) of every example the conv fuzz units of ``run --ops conv --seed SEED`` draw
    (the error check's invalid cases left out unless ``errors``), in the order the campaign draws them."""
    drawn = []
    for unit in fuzz_units(("conv",), [], ALL_CHECKS, DTYPES, max_examples, seed):
        if unit.check == "error" and not errors:
            continue
        got = []
        test = _hypothesis(got.append, unit.strategy(), unit.max_examples, unit.seed, False, unit.simplest)
        test()
        drawn += [(unit.check, case) for case in got]
    return drawn


def seeds_of(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


#: the settings a default campaign's workers report on the development machine (oneDNN on in
#: TensorFlow, an avx512_fp16 CPU): what ``--entry conv`` judges the entries' settings conditions by
HERE = {
    "tensorflow": {"onednn": True, "device": "cpu", "avx512_fp16": True},
    "torch": {"device": "cpu", "avx512_fp16": True},
    "jax": {"device": "cpu", "avx512_fp16": True},
}
DEFAULT_FRAMEWORKS = ("torch", "jax", "tensorflow")


def conv_entries(settings: dict) -> list:
    """The builtin conv entries a default campaign can match here: framework in its default mode,
    version installed, settings holding."""
    out = []
    for entry in load_known("builtin").entries:
        framework = entry.framework
        if entry.ops is None or "conv" not in entry.ops or framework not in DEFAULT_FRAMEWORKS:
            continue
        if not entry.applies_to(framework, version(_distribution(framework))):
            continue
        if entry.settings and not all(c.holds(settings.get(framework, {})) for c in entry.settings):
            continue
        out.append(entry)
    return out


def _distribution(framework: str) -> str:
    """The installed distribution of ``framework`` (TensorFlow's CPU wheel is tensorflow-cpu)."""
    if framework != "tensorflow":
        return framework
    return next(name for name in ("tensorflow", "tensorflow-cpu") if _installed(name))


def _installed(name: str) -> bool:
    try:
        version(name)
    except PackageNotFoundError:
        return False
    return True


def entries_table(seeds, settings: dict, save: str | None) -> None:
    """Per seed, the draws of the default conv units in each conv entry's region (``--entry conv``)."""
    entries = conv_entries(settings)
    counts = {e.id: [] for e in entries}
    for seed in seeds:
        drawn = conv_draws(seed, errors=True)
        for entry in entries:
            fw = entry.framework
            rec = {"framework": fw, "version": version(_distribution(fw)), "check": None}
            inside = []
            for check, case in drawn:
                rec.update(check=check, case=case.to_dict())
                if entry.in_region(rec, settings):
                    inside.append(case.with_checks((check,)))
            counts[entry.id].append(len(inside))
            if save:
                for case in inside:
                    save_case(case, Path(save) / entry.id / f"seed{seed}")
    print(f"{'entry':72s} " + " ".join(f"s{s:<3d}" for s in seeds))
    for entry in entries:
        print(f"{entry.id:72s} " + " ".join(f"{n:<4d}" for n in counts[entry.id]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-5", help="a seed or a range (default 0-5)")
    parser.add_argument("--entry", default=ENTRY, help=f"a known entry's id (default {ENTRY})")
    parser.add_argument("--save", help="write the region's draws here as case files")
    parser.add_argument("--settings", help="--entry conv: the frameworks' settings as JSON (default: HERE)")
    args = parser.parse_args(argv)
    if args.entry == "conv":
        entries_table(seeds_of(args.seeds), json.loads(args.settings) if args.settings else HERE, args.save)
        return 0
    entry = next((e for e in load_known("builtin").entries if e.id == args.entry), None)
    if entry is None:
        parser.error(f"--entry: no known entry {args.entry!r} in the builtin file")
    framework = entry.framework.split(":", 1)[0]
    installed = version(_distribution(framework))
    for seed in seeds_of(args.seeds):
        drawn = conv_draws(seed)
        coverage, distinct, region, part = Coverage(), set(), [], 0
        for check, case in drawn:
            key = case.with_checks(("forward",)).id  # one case per content, as the report counts
            if key not in distinct:
                distinct.add(key)
                coverage.add(case)
            rec = {"framework": entry.framework, "version": installed, "check": check, "case": case.to_dict()}
            if entry.in_region(rec):
                region.append(case.with_checks((check,)))
                part += args.entry == ENTRY and failing_part(check, case)
                if args.save:
                    save_case(region[-1], args.save)
        table = coverage.table()["conv"]
        print(
            f"seed {seed}: {len(drawn)} examples, {len(distinct)} distinct cases, triples "
            f"{table['triples_drawn']}/{table['triples_possible']}, in {entry.id}'s region {len(region)}"
            + (f" (its failing part {part})" if args.entry == ENTRY else "")
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
