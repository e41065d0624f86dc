"""A campaign's work as data: fuzz units (one seeded Hypothesis run each) and shards of them.

A *fuzz unit* is one call of :meth:`conformance.runner.Campaign.fuzz`: one check of one op (the conv
cases, the program cases, or one op record) with its sample strategy over the selected dtypes, the
budget and the seed. Its cases are a function of (strategy, budget, seed) alone: Hypothesis's
generation phase is seeded and the property never fails while generating, so the frameworks a unit
runs on never change which cases it draws. That is what makes a campaign shardable without changing
its results: a local run sends each drawn case to every framework at once; the Ray executor runs
the same unit once per framework (a *shard*), on whichever node, and draws the same cases.

The dtype and the seed range are *not* shard axes: a record's strategy draws the dtype from the
selected dtypes, and a budget split into seed ranges would draw other cases than the local run's
single seeded run. So a fuzz shard is (framework:mode, unit) = (framework:mode, op record, check),
the finest split that keeps the seed -> cases map of a local run (``tests/conformance/test_ray.py``
checks the equality). Curated cases have no such constraint: they are cut into chunks of
``CURATED_CHUNK`` case-checks per framework.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from conformance.case import CONV_CHECKS, DTYPES
from conformance.coverage import (
    CONSTRUCTED_SHARE,
    Coverage,
    construction_cells,
    conv_strategy,
    dealt_dtypes,
    moving_points,
    reach_points,
    record_strategy,
)
from conformance.ops import AT, NEAR, RECORDS
from conformance.strategies import invalid_conv_cases, program_cases

# curated case-checks per shard: each is one framework call (milliseconds to seconds)
CURATED_CHUNK = 64
# the shrunk failures a fuzz run records per framework (Campaign.fuzz's max_shrinks default)
MAX_SHRINKS = 2
#: the reach sweep's examples per unit of a point that moves with an op parameter (its near and its
#: at unit): seeded draws of the record's sample (the point's seed, not the campaign's), so that the
#: point is exercised at several of the parameter values the record draws, not at its simplest only
MOVING_SWEEP = 2


@dataclass(frozen=True)
class FuzzUnit:
    """One seeded Hypothesis run: ``kind`` conv | program | record (``record`` names the op record)."""

    kind: str
    check: str
    #: the dtypes it draws from, in its dealt order (fuzz_units): the first is its simplest draw's
    dtypes: tuple
    max_examples: int
    seed: int
    record: str | None = None
    max_shrinks: int = MAX_SHRINKS
    #: op records drawn over their whole domains and near their hard points (``run --domains whole``)
    whole_domains: bool = False
    #: ``run --domains mixed``: one example in :data:`conformance.coverage.WHOLE_SHARE` of a record
    #: with declared points is drawn over its whole domain, the others as the gate draws them
    mixed_domains: bool = False
    #: whether the first example is Hypothesis's simplest draw, the same at every seed (``run
    #: --draws``: ``simplest-first``, the default) or a draw of the seed like the others (``seeded``)
    simplest: bool = True
    #: a reach-sweep unit (conformance.coverage.reach_points): its one example drawn around this
    #: declared point of the record's domain, ``<input>:<label>``, and with ``point_kind`` "at"
    #: its first element on it
    point: str | None = None
    point_kind: str = NEAR
    #: a conv unit's cells to construct (conformance.coverage.construction_cells, dealt by fuzz_units)
    cells: tuple = ()

    @property
    def label(self) -> str:
        what = {"conv": "conv", "program": "programs"}.get(self.kind, self.record)
        at = "@at" if self.point and self.point_kind == AT else ""
        return f"{what}:{self.check}" + (f"@{self.point}" if self.point else "") + at

    def strategy(self):
        """The unit's Hypothesis strategy (built where it runs: strategies are not shipped)."""

        if self.kind == "program":
            return program_cases(dtypes=self.dtypes)
        if self.kind == "conv":
            if self.check == "error":
                return invalid_conv_cases(list(self.dtypes))
            # steered toward undrawn feature pairs and axis triples, from the unit's own coverage

            return conv_strategy(self.dtypes, (self.check,), Coverage(), cells=self.cells)
        # a record's cases are steered toward feature pairs the unit has not drawn yet; the coverage
        # is the unit's own, so a unit draws the same cases whichever units ran before it (and on
        # whichever node): Campaign.fuzz restores it after generation before each shrink

        return record_strategy(
            self.record,
            list(self.dtypes),
            (self.check,),
            Coverage(),
            whole_domains=self.whole_domains,
            mixed_domains=self.mixed_domains,
            point=self.point,
            point_kind=self.point_kind,
        )


def unit_seed(seed: int, record: str, check: str) -> int:
    """A record unit's seed: the campaign's, mixed with the record and check (stable across runs and
    Python processes), so that two checks of one record draw different cases under one --seed."""
    digest = hashlib.sha256(f"{seed}/{record}/{check}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


def record_checks(name, checks) -> list[str]:
    """The record's checks among ``checks`` in the order its units are dealt dtypes (fuzz_units):
    the record's own order (forward, vjp, vjp_vjp, jvp, ...), the ``error`` check last (the units
    themselves run in the record's order)."""
    own = [c for c in RECORDS[name].checks if c in checks]
    return [c for c in own if c != "error"] + [c for c in own if c == "error"]


def fuzz_units(
    ops,
    records,
    checks,
    dtypes,
    max_examples: int,
    seed: int,
    record_examples: int | None = None,
    record_shrinks: int = MAX_SHRINKS,
    whole_domains: bool = False,
    mixed_domains: bool = False,
    simplest: bool = True,
    reach: bool = True,
) -> list[FuzzUnit]:
    """The fuzz units of a ``run``, in the order a local run fuzzes them (op records: their own
    budget ``record_examples``, default ``max_examples``, and ``record_shrinks``; drawn over their
    whole domains with ``whole_domains``, a share of their examples with ``mixed_domains``;
    ``simplest``: each unit's first example is Hypothesis's simplest draw, see FuzzUnit).

    ``reach``: after a record's own units, two units per declared point of its domains (the reach
    sweep, conformance.coverage.reach_points): one example each, Hypothesis's simplest draw of the
    record's sample with every element of the point's input around it (kind ``near``), or with its
    first element on it (kind ``at``). Its cases are the
    same at every seed and budget (the unit's seed is the point's, not the campaign's), so the
    sweep's verdicts are as stable as the gate's; the record's own units draw what they drew.

    The requested dtypes a record supports are *dealt* over its units (``simplest``): unit ``k``
    (in :func:`record_checks`' order) draws from them rotated to start at dtype ``k + 1``
    (coverage.dealt_dtypes), so its simplest draw, the one example of the default budget, is in
    that dtype, and a record with as many checks as dtypes judges every one of them (before, every
    unit's simplest draw was the first dtype: float64, or complex64 of ``--dtypes
    complex64,complex128``). Which check gets which dtype: the numerical checks are dealt first and
    ``error`` last, since whether invalid input raises rarely depends on the dtype and it should not
    take a dtype a numerical check needs; the dealing starts one dtype after the reach sweep's
    (whose point ``i`` runs check ``i`` in dtype ``i``: forward in float64 first), so that forward,
    the check every record has, is judged in float32 (complex128) by its unit and in float64
    (complex64) by the sweep, and a check's unit and its sweep point judge it in two dtypes. Seeded
    draws (``simplest=False``) keep the requested order: every example is a draw of the seed over
    all the dtypes, and a seeded campaign draws the cases it drew before dealing existed."""

    if not max_examples:
        return []
    dt = tuple(dtypes)
    units = []
    if "programs" in ops and "program" in checks:
        units.append(FuzzUnit("program", "program", dt, max_examples, seed, simplest=simplest))
    conv_dt = tuple(d for d in dt if d in DTYPES)  # (complex dtypes: op records only)
    if "conv" in ops and conv_dt:
        # conv runs its own checks (CONV_CHECKS and error): the op records' second-order forward-mode
        # checks are not implemented for its adapters (docs/conformance.md, "Checks"); each check's
        # unit has its own seed, like a record's, so that its steered draws reach other axis triples
        # than the other checks' (under one seed all six drew the same cases)
        # the valid checks' units construct cells toward the seed's first triples (base-choice), dealt
        # round-robin over the units: together they take the first cells of one order
        valid = [c for c in checks if c in CONV_CHECKS]
        each = max_examples // CONSTRUCTED_SHARE
        cells = construction_cells(seed, conv_dt, each * len(valid))
        units += [
            FuzzUnit(
                "conv",
                c,
                conv_dt,
                max_examples,
                unit_seed(seed, "conv", c),
                simplest=simplest,
                cells=tuple(cells[valid.index(c) :: len(valid)]) if c in valid else (),
            )
            for c in checks
            if c in CONV_CHECKS + ("error",)
        ]
    n = max_examples if record_examples is None else record_examples
    for name in records:
        rec_dt = tuple(d for d in dt if d in RECORDS[name].dtypes)  # complex: complex-capable records only
        if not rec_dt:
            continue
        dealing = record_checks(name, checks)
        units += [
            FuzzUnit(
                "record",
                c,
                dealt_dtypes(rec_dt, dealing.index(c) + 1) if simplest else rec_dt,
                n,
                unit_seed(seed, name, c),
                name,
                record_shrinks,
                whole_domains,
                mixed_domains,
                simplest,
            )
            for c in RECORDS[name].checks
            if c in checks
        ]
        if reach:
            moving = moving_points(name)  # (drawn at the seed's parameters, MOVING_SWEEP examples)
            units += [
                FuzzUnit("record", c, (d,), MOVING_SWEEP if p in moving else 1,
                         unit_seed(0, name, f"{c}@{p}" + ("@at" if k == AT else "")), name, record_shrinks,
                         simplest=p not in moving, point=p, point_kind=k)  # fmt: skip
                for p, c, d, k in reach_points(name, checks, rec_dt)
            ]
    return units


@dataclass(frozen=True)
class Shard:
    """One framework's share of the work: a fuzz unit, or a chunk of curated cases (as dicts)."""

    index: int
    framework: str
    spec: str
    unit: FuzzUnit | None = None
    cases: tuple = ()  # curated cases, Case.to_dict() each (with the checks to run)

    @property
    def id(self) -> str:
        what = self.unit.label if self.unit else f"curated-{self.index}"
        return f"{self.framework}/{what}"

    @property
    def max_records(self) -> int:
        """An upper bound on the results the shard records (it streams at most this many batches)."""
        if self.unit is not None:  # one per example, the shrunk failures, a 'fuzz loop stopped' record
            return self.unit.max_examples + self.unit.max_shrinks + 1
        return sum(len(c.get("checks") or ()) for c in self.cases)


def make_shards(frameworks: dict, curated, units, chunk: int = CURATED_CHUNK) -> list[Shard]:
    """The shards of a campaign: per framework, its curated chunks then one shard per fuzz unit.

    ``frameworks`` is name -> adapter spec, ``curated`` the Case objects a local run would run
    (with their checks already filtered). Deterministic: same arguments, same shards.
    """
    shards: list[Shard] = []
    for name, spec in frameworks.items():
        pending, size = [], 0
        for case in curated:
            n = len(case.checks)
            if pending and size + n > chunk:
                shards.append(Shard(len(shards), name, spec, cases=tuple(pending)))
                pending, size = [], 0
            pending.append(case.to_dict())
            size += n
        if pending:
            shards.append(Shard(len(shards), name, spec, cases=tuple(pending)))
        shards += [Shard(len(shards) + i, name, spec, unit=u) for i, u in enumerate(units)]
    return shards
