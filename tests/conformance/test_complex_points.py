"""The hard points of the complex plane (issue 32, complex records): branch points, poles, zero
divisors and both sides of each branch cut, declared per complex record
(conformance.ops.PLANE_POINTS, conformance.ops._domains.PlanePoint), drawn at them and near them by
the reach sweep in complex64 and complex128, and counted in the reach table."""

from __future__ import annotations

import numpy as np
import pytest

from conformance.case import COMPLEX_DTYPES, PART_DTYPE, Case
from conformance.coverage import Coverage, declared_points, features, reach_points, record_strategy
from conformance.ops import (
    AT,
    NEAR,
    PLANE_POINTS,
    RECORD_CHECKS,
    RECORDS,
    WHOLE,
    RecordData,
    RecordParams,
    as_domain,
    plane_point,
)
from conformance.ops._domains import PlanePoint, cut_sides, in_dtype, plane_near
from conformance.strategies import draw_examples

PLANE_RECORDS = sorted(PLANE_POINTS)


def test_the_complex_records_with_a_hard_point_declare_it():
    """The survey: each complex record whose function has a branch point, a cut, a pole or a zero
    divisor in the plane declares it, on an input it has, with labels apart from its real rows."""
    must = {"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "angle", "asin", "acos", "atanh", "acosh",
            "asinh", "atan", "reciprocal", "div", "addcdiv", "abs", "sgn", "tan", "tanh", "sigmoid"}  # fmt: skip
    assert must <= set(PLANE_POINTS)
    for op, inputs in PLANE_POINTS.items():
        assert set(inputs) <= set(RECORDS[op].inputs), op
        assert "complex64" in RECORDS[op].dtypes, op
        plane = declared_points(op, plane=True)
        assert len(set(plane)) == len(plane) and not set(plane) & set(declared_points(op)), op


def test_a_cut_has_two_sides_decided_by_the_sign_of_its_zero_part():
    """log's cut: -2+0i is on the +0 side, -2-0i on the -0 side, -2+1e-9i near the +0 side only; the
    branch point 0 is on neither side (a row of its own); atan's cut beyond i is decided by the real
    part's zero; pi/2 is at tan's pole in complex64 as float32's rounding."""
    plus, minus = cut_sides("cut", 0, -1)
    z = np.array([complex(-2.0, 0.0)])
    neg = np.empty(1, np.complex128)
    neg.real, neg.imag = -2.0, -0.0
    assert plus.cells(z, "float64") == ["at"] and minus.cells(z, "float64") == []
    assert minus.cells(neg, "float64") == ["at"] and plus.cells(neg, "float64") == []
    assert plus.cells(np.array([-2 + 1e-9j]), "float64") == ["near"] and minus.cells(np.array([-2 + 1e-9j]), "float64") == []
    assert plus.cells(np.array([0j, 2 + 0j, -2 + 1j]), "float64") == []
    up_plus, up_minus = cut_sides("cut", 1j, 1j)
    assert up_plus.cells(np.array([3j]), "float64") == ["at"] and up_plus.cells(np.array([0.5j]), "float64") == []
    left = np.empty(1, np.complex128)
    left.real, left.imag = -0.0, 3.0
    assert up_minus.cells(left, "float64") == ["at"] and up_plus.cells(left, "float64") == []
    pole = PlanePoint("pole", np.pi / 2)
    assert pole.cells(np.array([complex(in_dtype(np.pi / 2, "float32"), 0)]), "float32") == ["at"]
    assert pole.cells(np.array([np.pi / 2 + 1e-3j]), "float32") == ["near"]
    with pytest.raises(ValueError, match="cut must be 0 or one of"):
        PlanePoint("bad", 0, 1 + 1j)
    with pytest.raises(ValueError, match="runs along an axis"):
        PlanePoint("bad", 1j, 1)
    with pytest.raises(ValueError, match="side must be"):
        PlanePoint("bad", 0, -1, "+")


@pytest.mark.parametrize("op", PLANE_RECORDS)
def test_every_complex_point_is_drawn_at_it_and_near_it_in_both_complex_dtypes(op):
    """A scalar sweep case of each kind fills exactly its cell of each declared complex point, in
    complex64 and complex128: ``at`` on it (on a cut: its zero part a zero of the side's sign, the
    element beyond the branch point), ``near`` next to it and not on it; the other inputs drawn as
    usual."""
    rec = RECORDS[op]
    for dtype in COMPLEX_DTYPES:
        for region in declared_points(op, plane=True):
            name, _, label = region.partition(":")
            point = plane_point(op, name, label)
            for kind, cell in ((AT, "at"), (NEAR, "near")):
                params = {"values": kind, "domain": WHOLE, "point": region}
                case = Case(op, RecordParams.of(params), {n: () for n in rec.inputs}, dtype, 5, ("forward",))
                z = RecordData(case)[name]
                assert point.cells(z, PART_DTYPE[dtype]) == [cell], (op, dtype, region, kind, z)
                assert f"{cell}={region}" in features(case)
                if point.cut != 0 and cell == "at":
                    zero = z.imag if point.cut in (1, -1) else z.real
                    assert zero == 0 and bool(np.signbit(zero)) == (point.side == "-0"), (op, region, z)


def test_a_swept_complex_point_draws_every_element_near_it():
    """log's cut swept from below (x-0i): every element of 200 has a negative real part and a negative
    imaginary part at most NEAR of its scale; ``at``: the first exactly x-0i, the others the same."""
    region = "input:z cut (-inf, 0) x-0i"
    case = Case("log", RecordParams.of({"values": NEAR, "domain": WHOLE, "point": region}), {"input": (200,)},
                "complex64", 3, ("forward",))  # fmt: skip
    z = RecordData(case)["input"]
    assert (z.real < 0).all() and (z.imag < 0).all() and (np.abs(z.imag) <= 2.0**-4 * np.maximum(np.abs(z), 1)).all()
    at = RecordData(Case(case.op, RecordParams.of({**case.params.as_dict(), "values": AT}), case.shapes, "complex64", 3, ("forward",)))
    first = at["input"][0]
    assert first.real < 0 and first.imag == 0 and np.signbit(first.imag)
    assert np.array_equal(at["input"][1:], z[1:])
    with pytest.raises(ValueError, match="no complex point 'z zero 7'"):
        plane_point("log", "input", "z zero 7")


def _drawn(unit) -> list:
    from conformance.runner import _hypothesis

    cases = []
    _hypothesis(cases.append, unit.strategy(), unit.max_examples, unit.seed, shrink=False, simplest=unit.simplest)()
    return cases


def test_the_reach_sweep_reaches_every_complex_point_in_the_complex_dtypes():
    """``run --dtypes complex64,complex128`` (one example per record and check): the sweep has an at and
    a near unit per declared complex point, each drawing its cell, so the reach table of the complex
    cases has no unreached complex row; a real campaign sweeps the real points only, as before."""
    from conformance.executors.plan import fuzz_units

    units = fuzz_units(PLANE_RECORDS, PLANE_RECORDS, RECORD_CHECKS, COMPLEX_DTYPES, 1, 1)
    sweep = [u for u in units if u.point is not None]
    assert len(sweep) == 2 * sum(len(declared_points(op, plane=True)) for op in PLANE_RECORDS)
    cov = Coverage()
    for unit in sweep:
        (case,) = _drawn(unit)
        assert case.dtype in COMPLEX_DTYPES and f"{unit.point_kind}={unit.point}" in features(case), unit.label
        cov.add(case)
    table = cov.table()
    for op in PLANE_RECORDS:
        rows = declared_points(op, plane=True)
        assert set(rows) <= set(table[op]["points"]), op
        assert not [r for r in table[op]["points_unreached"] if r.split(" ", 1)[1] in rows], op
    real = [p for op in PLANE_RECORDS for p, *_ in reach_points(op, RECORD_CHECKS, ("float64", "float32"))]
    assert real and not [p for p in real if p.partition(":")[2].startswith("z ")]
    assert all(as_domain(d) for op in PLANE_RECORDS for d in RECORDS[op].domains.values())


def test_the_reference_sigmoid_answers_with_the_mathematics_near_its_complex_poles():
    """Reached by the sweep at sigmoid's pole -i pi (complex128): 1/(1 + e^-z) cancels in 1 + e^-z
    there (3.1e-4 off at 1.79e-13 - i pi); the reference is within 4 ulps of mpmath next to the
    poles i(2k + 1)pi and elsewhere (an entire region of the plane, its far left included)."""
    import mpmath

    import reference as T

    mpmath.mp.prec = 200
    pi = np.pi
    zs = [complex(1.7857886709804195e-13, -pi), complex(1e-12, pi), complex(-2e-13, 3 * pi),
          complex(3e-9, -5 * pi), complex(0.3, 3.0), complex(-40, 3.1), complex(2, 0), complex(-1e-3, pi)]  # fmt: skip
    got = T.sigmoid(T.tensor(np.array(zs))).numpy()
    for z, y in zip(zs, got):
        exact = complex(1 / (1 + mpmath.exp(-mpmath.mpc(z.real, z.imag))))
        assert abs(y - exact) <= 4 * 2.0**-53 * abs(exact), (z, y, exact)


def test_the_whole_domains_near_kind_draws_half_the_elements_at_and_around_the_points():
    """``run --domains whole``'s ``near`` kind on the plane (plane_near, no swept point): about half
    the elements of the input are moved to the record's points (both sides of log's cut, its branch
    point), one in eight of those exactly on one (a cut's point with the zero part of its side's
    sign), the others left as drawn."""
    rng = np.random.default_rng(0)
    z = np.full(4000, 5.0 + 5.0j)
    out = plane_near(rng, z, PLANE_POINTS["log"]["input"], "float64")
    moved = out != z
    assert 0.45 < moved.mean() < 0.55, moved.mean()
    for p in PLANE_POINTS["log"]["input"]:
        per = [p.cells(out[i : i + 1], "float64") for i in range(out.size)]
        on, near = sum(c == ["at"] for c in per), sum(c == ["near"] for c in per)
        assert on > 0 and near > on, (p.label, on, near)  # (each point: ~1/6 of the moved elements)
    cut = out[moved & (out.real < 0) & (out.imag == 0)]
    assert np.signbit(cut.imag).any() and (~np.signbit(cut.imag)).any()  # both zeros of the cut
    assert (plane_near(rng, z, (), "float64") == z).all()  # a record without points: as drawn


@pytest.mark.parametrize("op", ["tan", "sigmoid", "div"])
def test_a_whole_domain_campaign_reaches_every_cell_of_the_complex_points(op):
    """``--domains whole`` in the complex dtypes draws the ``near`` kind at the record's points of
    the plane (aimed at one point's cell as the reach sweep is, steered to the cells not yet
    reached): 30 examples of tan, sigmoid and div reach both cells of each of their poles, which the
    generic complex draws (real and imaginary axes, log's cut, small integers) never land on
    exactly (before: tan 2 of 4, sigmoid 1 of 4, div 1 of 2)."""
    cases = draw_examples(record_strategy(op, list(COMPLEX_DTYPES), ("forward",), Coverage(), whole_domains=True), 30, 1)
    reached = {f for c in cases for f in features(c) if f.split("=", 1)[0] in (AT, NEAR)}
    want = {f"{cell}={p}" for p in declared_points(op, plane=True) for cell in (AT, NEAR)}
    assert reached == want, sorted(want - reached)
