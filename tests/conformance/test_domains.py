"""Whole domains (issue 32): each record's declared domain is drawn in full, its hard points (zeros,
poles, branch points) are reached by the ``near`` kind, and the coverage table says which were."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conformance.case import Case
from conformance.coverage import Coverage, declared_points, features
from conformance.ops import AT, NEAR, RECORDS, WHOLE, RecordData, RecordParams, as_domain, fuzzed
from conformance.ops._domains import Domain, Point, in_dtype, param_point

REAL_DTYPES = ("float64", "float32", "float16", "bfloat16")
#: the kinds whose draws the domain places (``special`` and ``nonfinite`` leave it on purpose)
PLACED = ("normal", "positive", "wide", "ties", "large", "tiny", NEAR)


def _op_params(op, seed=0) -> dict:
    """The op parameters of one draw of the record's sample (where its moving points are)."""
    from conformance.strategies import draw_examples

    (drawn,) = draw_examples(RECORDS[op].sample(), 1, seed)
    return {k: v for k, v in drawn[0].items() if k != "values"}


def _case(op, kind, dtype="float64", seed=0, n=64, whole=True):
    rec = RECORDS[op]
    shapes = {name: (n,) for name in rec.inputs}
    params = {**_op_params(op, seed), "values": kind, **({"domain": WHOLE} if whole else {})}
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
            cases = [_case(op, NEAR, dtype, seed) for seed in range(6)]
            arrays = [(RecordData(c)[name], c.params.as_dict()) for c in cases]
            for point in domain.points:
                assert any(point.reached(a, params) for a, params in arrays), (op, dtype, name, point.label)


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


def test_a_point_states_where_it_is():
    """Review (session 25): ``at`` defaulted to 0.0, so a point declared without it sat at 0 unsaid;
    it is required, and must be a real number (a parameter's name there is the likely slip)."""
    with pytest.raises(TypeError, match="'at'"):
        Point("kink")
    with pytest.raises(TypeError, match=r"Point 'kink': at must be a real number .* got 'lambd'"):
        Point("kink", "lambd")
    with pytest.raises(TypeError, match="at must be a real number .* got None"):
        Point("kink", None)
    assert Point("zero 0", 0).value() == 0 and Point("pole 2", np.float32(2.0)).value() == 2.0


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
            cases = _drawn(unit)
            assert len(cases) == unit.max_examples  # (a moving point's: MOVING_SWEEP, each reaching its cell)
            for case in cases:
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


def _undrawn_cells(op, dtypes=REAL_DTYPES, draws=3) -> list:
    """The ``(dtype, region, kind, x)`` of the reach sweep's scalar cases of ``op`` that miss their
    cell: the record's own draws (its parameters: where a moving point is), as the sweep draws them
    (conformance.coverage.record_strategy with ``point``), ``draws`` of each kind per dtype."""
    from conformance.coverage import record_strategy
    from conformance.strategies import draw_examples

    rec, out = RECORDS[op], []
    for dtype in (d for d in dtypes if d in rec.dtypes):
        for region in declared_points(op):
            name, _, label = region.partition(":")
            (point,) = [p for p in as_domain(rec.domains[name]).points if p.label == label]
            for kind, cell in ((AT, "at"), (NEAR, "near")):
                for drawn in draw_examples(record_strategy(op, [dtype], ("forward",), point=region, point_kind=kind), draws):
                    params = drawn.params.as_dict()
                    case = Case(op, drawn.params, {n: () for n in rec.inputs}, dtype, 5, ("forward",))
                    try:
                        x = RecordData(case)[name]
                    except ValueError as exc:  # a moving point whose parameter the draw lacks
                        out.append((dtype, region, kind, str(exc)))
                        continue
                    if point.cells(x, dtype, params) != [cell] or f"{cell}={region}" not in features(case):
                        out.append((dtype, region, kind, x))
    return out


@pytest.mark.parametrize("op", _with_points())
def test_every_declared_point_is_drawn_at_it_and_near_it_in_every_dtype(op):
    """A record that declares a point its strategy cannot draw exactly ON fails here (the ``at`` cell:
    a value or derivative at a zero, pole or branch point is often a rule of its own, which no draw
    next to it evaluates), and one it cannot draw next to without landing on it (the ``near`` cell):
    a scalar sweep case of each kind, in each dtype, fills its cell (a moving point: at the draw's
    parameters)."""
    assert _undrawn_cells(op) == []


def test_a_moving_point_the_strategy_cannot_draw_is_undrawable(monkeypatch):
    """hardtanh declaring its kink at a parameter its sample never draws (``min_val``: the record's is
    ``lo``) fails the undrawable check above, as does one whose sample draws that parameter None."""
    import dataclasses

    rec = RECORDS["hardtanh"]
    assert _undrawn_cells("hardtanh", ("float32",), 1) == []
    typo = Domain("whole line", points=(param_point("kink min_val", "min_val"),))
    monkeypatch.setitem(RECORDS, "hardtanh", dataclasses.replace(rec, domains={"input": typo}))
    undrawn = _undrawn_cells("hardtanh", ("float32",), 1)
    assert len(undrawn) == 2 and all("moves with the parameter 'min_val'" in u[3] for u in undrawn)
    clamp = RECORDS["clamp"]
    no_max = dataclasses.replace(clamp, sample=lambda: clamp.sample().map(lambda d: ({**d[0], "max": None}, d[1])))
    monkeypatch.setitem(RECORDS, "clamp", no_max)
    assert [u[1] for u in _undrawn_cells("clamp", ("float32",), 1)] == ["input:kink max"] * 2


def test_a_moving_point_is_at_the_drawn_parameter_in_the_dtype():
    """hardshrink's kinks at -lambd and lambd, clamp's at min and max: the sweep's ``at`` element is
    the parameter itself (rounded to the dtype: 0.1 in bfloat16 is 0.10009765625), its ``near``
    elements within NEAR of it, none on it; a case without the parameter has no such point."""
    minus = param_point("step -lambd", "lambd", -1.0)
    assert minus.value({"lambd": 0.5}) == -0.5 and minus.value({}) is None and minus.value({"lambd": None}) is None
    assert minus.cells(np.array([-0.5, -0.5 + 2.0**-10]), "float16", {"lambd": 0.5}) == ["at", "near"]
    assert minus.cells(np.array([-0.5]), "float16", {}) == []
    tenth = param_point("kink min", "min")
    assert tenth.cells(np.array([0.10009765625]), "bfloat16", {"min": 0.1}) == ["at"]
    assert tenth.cells(np.array([0.1]), "bfloat16", {"min": 0.1}) == ["near"]
    for op, region, param, scale in (
        ("hardshrink", "input:step -lambd", "lambd", -1.0),
        ("clamp", "input:kink max", "max", 1.0),
        ("threshold", "input:step threshold", "th", 1.0),
    ):
        for value in (0.5, 1.0, 2.0, 0.0):
            base = {**_op_params(op), param: value, "domain": WHOLE, "point": region}
            at = RecordData(Case(op, RecordParams.of({**base, "values": AT}), {"input": (50,)}, "bfloat16", 2, ("forward",)))["input"]
            near = RecordData(Case(op, RecordParams.of({**base, "values": NEAR}), {"input": (50,)}, "bfloat16", 2, ("forward",)))["input"]
            kink = scale * value
            assert at[0] == kink and np.array_equal(at[1:], near[1:]), (op, value)
            assert (np.abs(near - kink) <= 2.0**-5 * max(abs(kink), 1.0)).all() and not (near == kink).any()
    with pytest.raises(ValueError, match="moves with the parameter 'lambd'"):
        as_domain(RECORDS["hardshrink"].domains["input"]).near(np.random.default_rng(0), np.zeros(3), "float32", "step lambd")
    with pytest.raises(ValueError, match="scale=2.0 without a param"):
        Point("p", 0.0, scale=2.0)


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


#: the records whose kinks and steps move with their parameters (conformance.ops._domains.param_point)
MOVING = ("hardtanh", "clamp", "clamp_min", "clamp_max", "threshold", "hardshrink", "softshrink")


def test_the_reach_sweep_draws_moving_points_at_the_drawn_parameters_and_prelus_kink_with_data():
    """The default campaign's sweep of the records whose points move with a parameter: each ``at`` case
    holds an element equal to its own drawn parameter (hardtanh's min_val -1.0 or -0.5, ...) and each
    ``near`` case elements next to it (before, the draw ignored the parameters); prelu's ``at`` case
    (its simplest draw) has a non-empty batch, so the kink x = 0 is evaluated."""
    from conformance.case import DTYPES
    from conformance.executors.plan import fuzz_units
    from conformance.ops import RECORD_CHECKS

    records = [*MOVING, "prelu", "rrelu_with_noise"]
    sweep = [u for u in fuzz_units(records, records, RECORD_CHECKS, DTYPES, 1, 0) if u.point is not None]
    cov = Coverage()
    for unit in sweep:
        for case in _drawn(unit):
            assert f"{unit.point_kind}={unit.point}" in features(case), (unit.label, case.to_dict())
            cov.add(case)
            if case.op == "prelu" and unit.point_kind == AT:
                assert math.prod(case.shapes["input"]) > 0 and RecordData(case)["input"].reshape(-1)[0] == 0
    table = cov.table()
    assert {op: table[op]["points_unreached"] for op in records} == {op: [] for op in records}
    assert len(sweep) == 2 * sum(len(declared_points(op)) for op in records) == 2 * 13


def test_the_reach_sweep_exercises_each_moving_point_at_several_parameter_values():
    """A moving point's sweep units draw MOVING_SWEEP seeded examples each (the point's seed, the same
    at every campaign seed), so the point is judged at two or more of the parameter values the record
    draws, each case reaching its cell at its own value (before: one value, the simplest draw's:
    hardtanh's kinks only at min_val -1, max_val 1); across the records the values include 0, a
    negative, 256, and the two kinks of hardtanh, clamp and the shrinks at one point (min = max = 0,
    lambd = 0). The sweep stays two units per point."""
    from conformance.case import DTYPES
    from conformance.coverage import moving_points
    from conformance.executors.plan import MOVING_SWEEP, fuzz_units
    from conformance.ops import RECORD_CHECKS

    values, together = {}, set()
    for seed in (0, 3):
        sweep = [u for u in fuzz_units(MOVING, MOVING, RECORD_CHECKS, DTYPES, 1, seed) if u.point in moving_points(u.record)]
        assert len(sweep) == 2 * 11 and all(u.max_examples == MOVING_SWEEP >= 2 and not u.simplest for u in sweep)
        drawn = {}
        for unit in sweep:
            name, label = unit.point.split(":", 1)
            point = next(p for p in as_domain(RECORDS[unit.record].domains[name]).points if p.label == label)
            for case in _drawn(unit):
                params = case.params.as_dict()
                assert f"{unit.point_kind}={unit.point}" in features(case), (unit.label, case.to_dict())
                drawn.setdefault((unit.record, unit.point), []).append(point.value(params))
                if {"lo", "hi"} <= set(params) and params["lo"] == params["hi"] or params.get("lambd") == 0:
                    together.add(unit.record)
        values.setdefault("first", drawn)
        assert drawn == values["first"]  # the same at every campaign seed
    few = {k: v for k, v in values["first"].items() if len(set(v)) < 2}
    assert not few, few
    every = {v for vs in values["first"].values() for v in vs}
    assert {0.0, 256.0, -256.0} & every and any(v < 0 for v in every), sorted(every)
    assert together, "no sweep case with two kinks at one point"


def test_the_drawn_parameters_of_moving_points_are_representable_in_every_dtype():
    """A moving point's ``at`` element is its parameter rounded to the dtype; where the parameter is
    not representable (0.1 in bfloat16) that element is beside the kink, not on it, and the record's
    conventions at the kink (at_params, comparing with the unrounded parameter) would not hold there:
    so the records draw parameters every real dtype represents (-1, -0.5, 0, 0.5, 1, 2)."""
    from conformance.strategies import draw_examples

    moving = {op: {p.param for d in RECORDS[op].domains.values() for p in as_domain(d).points if p.param} for op in fuzzed()}
    moving = {op: names for op, names in moving.items() if names}
    assert set(MOVING) <= set(moving)
    for op, names in moving.items():
        for params, _ in draw_examples(RECORDS[op].sample(), 30):
            for name in names:
                value = params.get(name)
                for dtype in set(REAL_DTYPES) & set(RECORDS[op].dtypes):
                    assert value is None or in_dtype(value, dtype) == value, (op, name, value, dtype)


def test_a_moving_point_reads_any_real_parameter_and_no_other():
    """A parameter given as a NumPy scalar (np.float32 is no Python float) still places the point;
    a missing, None or boolean one means the case has no such point."""
    kink = Point("kink -lambd", 0.0, param="lambd", scale=-1.0)
    assert kink.value({"lambd": 0.5}) == -0.5
    assert kink.value({"lambd": np.float32(0.25)}) == -0.25
    assert [kink.value(p) for p in ({}, {"lambd": None}, {"lambd": True})] == [None, None, None]


def test_a_moving_points_parameter_the_dtype_cannot_hold_is_rounded_or_redrawn(monkeypatch):
    """A record drawing a clamp bound its case's dtype does not represent (1e-5 in float16 or
    bfloat16) gets the bound rounded to the dtype, as its elements are: the sweep's ``at`` element
    is then on the kink the framework computes at (before, it was 1.0014e-05 beside a kink at 1e-5,
    and the case judged another point than it claimed); a bound past the dtype's range (70000 in
    float16) is redrawn, and float32 keeps it (70000 is a float32)."""
    import dataclasses

    from hypothesis import strategies as st

    from conformance.coverage import record_strategy
    from conformance.strategies import draw_examples

    rec = RECORDS["clamp"]
    [(_, shapes)] = draw_examples(rec.sample(), 1)
    drawn = st.sampled_from([{"min": 1e-5, "max": 70000.0}, {"min": 1e-5, "max": 2.0}])
    monkeypatch.setitem(RECORDS, "clamp", dataclasses.replace(rec, sample=lambda: st.tuples(drawn, st.just(shapes))))
    dtypes = ("float16", "bfloat16", "float32")
    cases = draw_examples(record_strategy("clamp", dtypes, ("forward",), point="input:kink min", point_kind=AT), 40)
    assert {c.dtype for c in cases} == set(dtypes)
    for case in cases:
        p = case.params.as_dict()
        for name in ("min", "max"):
            assert in_dtype(p[name], case.dtype) == p[name], (case.dtype, name, p[name])
        assert case.dtype != "float16" or p["max"] == 2.0, p  # 70000 overflows float16
        assert case.dtype == "float32" or p["min"] != 1e-5
        at = RecordData(case)["input"].reshape(-1)[0]
        assert at == p["min"], (case.dtype, at, p["min"])  # the at element is on the kink it claims


def test_a_case_files_moving_point_parameters_are_rounded_to_its_dtype_as_drawn_ones_are(tmp_path):
    """A curated case (``--cases``) of a record whose point moves with a parameter keeps that
    parameter as its dtype holds it, as a drawn case does (moving_params_in_dtype): the framework
    takes clamp's bound in the input's dtype, so a float16 case file's min 1e-5 is 1.0014e-05 to it
    and must be to the reference too (before, the reference clamped at the float64 1e-5 and the
    ``at`` element claimed a kink half an ulp off). float64 keeps it; re-reading a loaded case gives
    the same case (its id unchanged: a results file's cases read again are the same cases); a bound
    the dtype cannot hold is a CaseError naming the parameter, its value and the rule; an error
    case keeps its parameters, as its draws do."""
    import json

    from conformance.case import CaseError, round_to_dtype
    from conformance.identity import load_case_files

    def load(dtype, **params):
        path = tmp_path / f"clamp-{dtype}.json"
        raw = {"op": "clamp", "params": params, "shapes": {"input": [3]}, "dtype": dtype, "seed": 1}
        path.write_text(json.dumps(raw))
        [case], _ = load_case_files(path)
        return case

    for dtype in ("float16", "bfloat16", "float32"):
        case = load(dtype, min=1e-5, max=0.1)
        p = case.params.as_dict()
        held = tuple(float(round_to_dtype(v, dtype)) for v in (1e-5, 0.1))  # what the framework computes with
        assert (p["min"], p["max"]) == held != (1e-5, 0.1), (dtype, p)
        assert Case.from_dict(case.to_dict()).id == case.id
    assert load("float64", min=1e-5, max=0.1).params.as_dict() == {"min": 1e-5, "max": 0.1}
    with pytest.raises(CaseError, match=r"params\.max.*70000\.0 overflows float16"):
        load("float16", min=0.0, max=70000.0)
    assert load("float32", min=0.0, max=70000.0).params.as_dict()["max"] == 70000.0
    assert load("float16", min=1e-5, max=0.1, invalid="min").params.as_dict()["min"] == 1e-5
