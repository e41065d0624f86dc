"""Whole domains (issue 32): each record's declared domain is drawn in full, its hard points (zeros,
poles, branch points) are reached by the ``near`` kind, and the coverage table says which were."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.case import Case
from conformance.coverage import Coverage, declared_points, features
from conformance.ops import AT, NEAR, RECORDS, WHOLE, RecordData, RecordParams, as_domain, fuzzed
from conformance.ops._domains import Domain, Point, in_dtype

REAL_DTYPES = ("float64", "float32", "float16", "bfloat16")
#: the kinds whose draws the domain places (``special`` and ``nonfinite`` leave it on purpose)
PLACED = ("normal", "positive", "wide", "ties", "large", "tiny", NEAR)


def _case(op, kind, dtype="float64", seed=0, n=64, whole=True):
    rec = RECORDS[op]
    shapes = {name: (n,) for name in rec.inputs}
    params = {"values": kind, **({"domain": WHOLE} if whole else {})}
    return Case(op, RecordParams.of(params), shapes, dtype, seed, ("forward",))


def _with_points():
    return sorted(n for n in fuzzed() if any(as_domain(d).points for d in RECORDS[n].domains.values()))


def test_the_domains_that_matter_declare_their_hard_points():
    declared = set(_with_points())
    for op in ("log", "log1p", "sqrt", "tan", "sin", "lgamma", "digamma", "acosh", "atanh", "logit", "sinc"):
        assert op in declared, f"{op}'s domain declares no zero, pole or branch point"


@pytest.mark.parametrize("op", _with_points())
def test_every_declared_point_is_reached_in_every_dtype(op):
    """A record that declares a point its strategy cannot draw fails here: for each dtype, the ``near``
    kind of a few seeds reaches every point (within conformance.ops._domains.NEAR of it)."""
    rec = RECORDS[op]
    for dtype in REAL_DTYPES:
        for name, declared in rec.domains.items():
            domain = as_domain(declared)
            arrays = [RecordData(_case(op, NEAR, dtype, seed))[name] for seed in range(6)]
            for point in domain.points:
                assert any(point.reached(a) for a in arrays), (op, dtype, name, point.label)


@pytest.mark.parametrize("op", _with_points())
def test_placed_draws_stay_in_the_closed_domain(op):
    rec = RECORDS[op]
    for kind in PLACED:
        for name, declared in rec.domains.items():
            domain = as_domain(declared)
            a = RecordData(_case(op, kind, "float32"))[name]
            a = a[np.isfinite(a)]
            assert np.all((a >= domain.lo) & (a <= domain.hi)), (op, kind, name, a.min(), a.max())


def test_near_reaches_the_last_ulps_before_a_point_on_the_allowed_side():
    """log's pole at 0 is approached from above only; its zero at 1 from both sides, down to the
    dtype's own spacing (the cancellation region) and exactly on it."""
    a = RecordData(_case("log", NEAR, "float32", n=4000))["input"]
    assert not (a < 0).any()
    assert (a == 0).any() and (a == 1).any()
    near_one = a[(a != 1) & (np.abs(a - 1) < 2.0**-20)]
    assert (near_one > 1).any() and (near_one < 1).any()
    assert np.abs(a[(a > 0) & (a < 2.0**-20)]).size  # the pole's neighbourhood, just above 0


def test_lgamma_is_drawn_between_its_negative_poles():
    """Before, lgamma and digamma were drawn on (0, inf) only: the reflection formula's region (x < 0,
    not an integer) is where the frameworks' kernels differ."""
    a = RecordData(_case("lgamma", NEAR, "float64", n=2000))["input"]
    negative = a[(a < 0) & (a != np.round(a))]
    assert negative.size > 100
    assert (np.abs(negative - np.round(negative)) < 2.0**-30).any()  # right next to a pole


def test_the_old_domain_names_place_draws_as_before():
    """ "pos" is |a| and "unit" is 0.9 tanh(a), bit for bit."""
    a = np.random.default_rng(0).standard_normal(100) * 10
    assert np.array_equal(as_domain("pos").place(a), np.abs(a))
    assert np.array_equal(as_domain("unit").place(a), np.tanh(a) * 0.9)
    assert as_domain("any").place(a) is a


def test_the_gate_campaign_draws_as_its_known_departures_were_written_for():
    """Without ``--domains whole`` a case carries no ``domain`` param and draws each Domain's gate
    placement: lgamma on (0, inf), acosh at 1.5 + |a|; with it, the whole line and the branch point."""
    gate = RecordData(_case("lgamma", "normal", n=2000, whole=False))["input"]
    assert (gate >= 0).all()
    assert (RecordData(_case("lgamma", "normal", n=2000))["input"] < 0).any()
    assert (RecordData(_case("acosh", "normal", n=2000, whole=False))["input"] >= 1.5).all()
    assert (RecordData(_case("acosh", NEAR, n=2000))["input"] == 1.0).any()


def test_run_domains_whole_sets_the_param_and_draws_near():
    from conformance.coverage import record_strategy
    from conformance.strategies import draw_examples

    whole = draw_examples(record_strategy("log", ["float32"], ("vjp",), whole_domains=True), 60)
    assert all(c.params.as_dict()["domain"] == WHOLE for c in whole)
    assert any(c.params.as_dict()["values"] == NEAR for c in whole)
    gate = draw_examples(record_strategy("log", ["float32"], ("vjp",)), 60)
    assert not any("domain" in c.params.as_dict() or c.params.as_dict()["values"] == NEAR for c in gate)


def test_a_domain_refuses_a_point_outside_it_and_a_bad_side():
    with pytest.raises(ValueError, match="outside"):
        Domain("x", 0.0, 1.0, (Point("p", 2.0),))
    with pytest.raises(ValueError, match="side"):
        Point("p", 0.0, "left")
    with pytest.raises(ValueError, match="must be a Domain"):
        as_domain("positive")


def test_the_coverage_table_lists_reached_and_unreached_points():
    cov = Coverage()
    near = _case("tan", NEAR, "float64", n=200)
    bulk = _case("tan", "normal", "float64", n=1)
    cov.add(near)
    cov.add(bulk)
    row = cov.table()["tan"]
    assert set(row["points"]) == set(declared_points("tan"))
    assert row["points"]["input:pole pi/2"]["near"] >= 1
    assert any(f.startswith("near=input:") for f in features(near))
    lone = Coverage()
    lone.add(bulk)
    unreached = lone.table()["tan"]["points_unreached"]
    assert "at input:pole 1023.5pi" in unreached and "near input:pole 1023.5pi" in unreached
    assert row["point_cells"] == 2 * len(declared_points("tan"))


def test_the_reach_of_a_point_is_relative_to_its_scale():
    p = Point("pole 1023.5pi", 1023.5 * math.pi)
    assert p.reached(np.array([1023.5 * math.pi * (1 + 2.0**-20)]))
    assert not p.reached(np.array([1023.5 * math.pi + 300.0]))
    above = Point("pole 0", 0.0, "above")
    assert not above.reached(np.array([-1e-9])) and above.reached(np.array([1e-9]))


def test_a_record_with_an_old_domain_name_draws_in_it_in_both_campaigns():
    """binary_cross_entropy's input is "unit" and its weight-like losses "pos": the gate campaign must
    keep them there (a gate placement of "any" drew BCE inputs PyTorch rejects)."""
    for whole in (False, True):
        a = RecordData(_case("binary_cross_entropy", "normal", n=500, whole=whole))["input"]
        assert (np.abs(a) <= 0.9).all()
        batched = RecordData(
            Case(
                "binary_cross_entropy",
                RecordParams.of({"values": "wide", "in_dims": [0, None], "vmap_size": 3}),
                {"input": (40,), "target": (40,)},
                "float64",
                1,
                ("vmap",),
            )
        )["batched_input"]
        assert (np.abs(batched) <= 0.9).all()


def test_run_domains_mixed_draws_a_share_whole_and_leaves_other_records_as_the_gate():
    """``--domains mixed``: about one example in four of a record with declared points is drawn
    over its whole domain (and reaches its points); a record without points draws as the gate."""
    from conformance.cli import _parser
    from conformance.coverage import WHOLE_SHARE, record_strategy
    from conformance.executors.plan import fuzz_units
    from conformance.strategies import draw_examples

    mixed = draw_examples(record_strategy("log", ["float32"], ("vjp",), mixed_domains=True), 80)
    whole = [c for c in mixed if c.params.as_dict().get("domain") == WHOLE]
    assert 80 / WHOLE_SHARE / 3 < len(whole) < 80 * 3 / WHOLE_SHARE, len(whole)
    measured = Coverage()
    for c in whole:
        measured.add(c)
    assert measured.table()["log"]["points_unreached"] != declared_points("log")  # some point reached
    plain = record_strategy("exp", ["float32"], ("vjp",), mixed_domains=True)
    gate = record_strategy("exp", ["float32"], ("vjp",))
    assert [c.id for c in draw_examples(plain, 20)] == [c.id for c in draw_examples(gate, 20)]
    args = _parser().parse_args(["run", "--domains", "mixed"])
    units = fuzz_units(["log"], ["log"], ["vjp"], ["float32"], 1, 0, mixed_domains=args.domains == "mixed")
    own = [u for u in units if u.point is None]  # (the reach sweep's units: test_the_reach_sweep_...)
    assert own and all(u.mixed_domains and not u.whole_domains for u in own)


def _drawn(unit) -> list:
    from conformance.runner import _hypothesis

    cases = []
    _hypothesis(cases.append, unit.strategy(), unit.max_examples, unit.seed, shrink=False, simplest=unit.simplest)()
    return cases


def test_the_reach_sweep_reaches_every_declared_point_at_the_default_budget():
    """The default campaign (one example per record and check, conformance.cli) reaches every declared
    point of every record: the sweep's units (one per point) each draw their point's input at or
    around it, in the same cases at every seed; the records' own units are the ones without it."""
    from conformance.case import DTYPES
    from conformance.executors.plan import fuzz_units
    from conformance.ops import RECORD_CHECKS

    records = _with_points()
    sweeps = {}
    for seed in (0, 1):
        units = fuzz_units(records, records, RECORD_CHECKS, DTYPES, 1, seed)
        assert [u for u in units if u.point is None] == fuzz_units(records, records, RECORD_CHECKS, DTYPES, 1, seed, reach=False)
        sweep = [u for u in units if u.point is not None]
        assert len(sweep) == 2 * sum(len(declared_points(op)) for op in records)  # an at and a near unit each
        cov = Coverage()
        drawn = []
        for unit in sweep:
            (case,) = _drawn(unit)
            assert case.params.as_dict()["point"] == unit.point
            assert case.params.as_dict()["values"] == unit.point_kind
            assert f"{unit.point_kind}={unit.point}" in features(case), (unit.label, case.to_dict())
            cov.add(case)
            drawn.append(case.id)
        table = cov.table()
        assert not [op for op in records if table[op]["points_unreached"]]
        sweeps[seed] = drawn
    assert sweeps[0] == sweeps[1]  # the sweep is the same at every seed


def test_a_swept_point_draws_every_element_of_its_input_near_it_and_the_others_placed():
    """pow_tensor's base swept at 0: every base element within NEAR of 0 (none on it; ``at``: the first);
    the exponent drawn over its own
    whole domain (not at its points); an unknown point is refused by name."""
    case = Case(
        "pow_tensor",
        RecordParams.of({"values": NEAR, "domain": WHOLE, "point": "input:branch 0"}),
        {"input": (200,), "other": (200,)},
        "float32",
        3,
        ("forward",),
    )
    data = RecordData(case)
    assert (np.abs(data["input"]) <= 2.0**-5).all() and not (data["input"] == 0).any()  # near, none on it
    assert (np.abs(data["other"]) > 2.0**-4).mean() > 0.8
    at = RecordData(Case(case.op, RecordParams.of({**case.params.as_dict(), "values": AT}), case.shapes, "float32", 3, ("forward",)))
    assert at["input"][0] == 0 and np.array_equal(at["input"][1:], data["input"][1:])  # the first element on it
    assert np.array_equal(at["other"], data["other"])
    with pytest.raises(ValueError, match="no point 'zero 7'"):
        as_domain(RECORDS["log"].domains["input"]).near(np.random.default_rng(0), np.zeros(3), "float32", "zero 7")


@pytest.mark.parametrize("op", _with_points())
def test_every_declared_point_is_drawn_at_it_and_near_it_in_every_dtype(op):
    """A record that declares a point its strategy cannot draw exactly ON fails here (the ``at`` cell:
    a value or derivative at a zero, pole or branch point is often a rule of its own, which no draw
    next to it evaluates), and one it cannot draw next to without landing on it (the ``near`` cell):
    a scalar sweep case of each kind, in each dtype, fills its cell."""
    rec = RECORDS[op]
    for dtype in REAL_DTYPES:
        if dtype not in rec.dtypes:
            continue
        for region in declared_points(op):
            name, _, label = region.partition(":")
            (point,) = [p for p in as_domain(rec.domains[name]).points if p.label == label]
            for kind, cell in ((AT, "at"), (NEAR, "near")):
                params = {"values": kind, "domain": WHOLE, "point": region}
                case = Case(op, RecordParams.of(params), {n: () for n in rec.inputs}, dtype, 5, ("forward",))
                x = RecordData(case)[name]
                assert point.cells(x, dtype) == [cell], (op, dtype, region, kind, x)
                assert f"{cell}={region}" in features(case)


def test_at_is_the_points_value_in_the_dtype_and_near_excludes_it():
    """pi is not a float32: its ``at`` cell is float32's pi, which the float64 pi is not; -0.0 is at 0;
    the last float16 ulps before 1 are near, 1 itself at; a point's other side is neither."""
    pi = Point("zero pi", math.pi)
    f32_pi = float(np.float32(math.pi))
    assert in_dtype(math.pi, "float32") == f32_pi and in_dtype(math.pi, "float64") == math.pi
    assert in_dtype(math.pi, "bfloat16") == 3.140625 and in_dtype(1.0, "float16") == 1.0
    assert pi.cells(np.array([f32_pi]), "float32") == ["at"]
    assert pi.cells(np.array([math.pi]), "float32") == ["near"]
    assert Point("zero 0", 0.0).cells(np.array([-0.0]), "float64") == ["at"]
    one = Point("zero 1", 1.0)
    assert one.cells(np.array([1.0, 1.0 - 2.0**-11]), "float16") == ["at", "near"]
    above = Point("pole 0", 0.0, "above")
    assert above.cells(np.array([-1e-9]), "float64") == [] and above.cells(np.array([0.0, 1e-9]), "float64") == ["at", "near"]
    with pytest.raises(ValueError, match="cell must be one of"):
        above_domain = Domain("d", 0.0, 1.0, (above,))
        above_domain.near(np.random.default_rng(0), np.zeros(2), "float32", "pole 0", "on")
