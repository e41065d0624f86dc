"""Coverage measured (conformance/coverage.py): features and pairs per record, deterministic
steering toward undrawn pairs, and the report's op x framework matrix, departure lines and
coverage table (JSON and HTML)."""

from __future__ import annotations

import functools

from conformance.case import Case
from conformance.coverage import (
    CONV_AXES,
    Coverage,
    channels_bucket,
    conv_axes,
    conv_strategy,
    coverage_of_results,
    features,
    group_channels_bucket,
    pairs,
    record_strategy,
    triples,
)
from conformance.ops import RecordParams
from conformance.strategies import conv_cases, draw_examples


def _record_case(op="sum_dim", dtype="float16", shape=(2, 4100), **params):
    params = {"values": "wide", "dim": -1, "keepdim": True, **params}
    return Case(op, RecordParams.of(params), {"input": shape}, dtype, 0, ("forward",))


def test_features_of_a_record_case():
    f = features(_record_case())
    assert {"dtype=float16", "values=wide", "dim<0", "keepdim=True", "large"} <= set(f)
    assert "empty" in features(_record_case(shape=(0, 3))) and "empty" not in f
    f = features(_record_case(dim=[0, 1], keepdim=False))
    assert {"len(dim)>1", "keepdim=False"} <= set(f) and "dim<0" not in f
    vm = Case(
        "add",
        RecordParams.of({"values": "normal", "in_dims": [None, -2], "vmap_size": 1}),
        {"input": (3,), "other": (2, 3)},
        "float32",
        0,
        ("vmap",),
    )
    assert {"in_dims=None", "in_dims<0", "vmap_size=1", "broadcast"} <= set(features(vm))
    assert "dim<0 & dtype=float16" in pairs(features(_record_case()))


def test_features_of_a_conv_case():
    case = Case.from_dict(
        {
            "op": "conv",
            "params": {
                "rank": 2,
                "stride": [2, 1],
                "dilation": [1, 2],
                "groups": 2,
                "transposed": True,
                "output_padding": [1, 0],
            },
            "shapes": {"input": [0, 4, 5, 5], "weight": [4, 3, 2, 2]},
            "dtype": "float16",
        }
    )
    f = set(features(case))
    assert {"transposed", "output_padding>0", "groups>1", "stride>1", "dilation>1", "batch_empty"} <= f
    assert "dtype=float16" in f


def _ids(cov, n=25, seed=3):
    return [
        c.id
        for c in draw_examples(record_strategy("sum_dim", ("float32", "float16"), ("forward",), cov), n, seed)
    ]


def test_steering_is_deterministic_for_a_seed():
    assert _ids(Coverage()) == _ids(Coverage())
    cov = Coverage()
    first = _ids(cov)
    # a replay of the same choices (the shrink phase) rebuilds the same cases from the memo
    assert _ids(cov) == first


def test_steering_reaches_pairs_a_plain_draw_misses():
    n, seed = 25, 3
    plain = Coverage()
    for c in draw_examples(record_strategy("sum_dim", ("float32", "float16"), ("forward",)), n, seed):
        plain.add(c)
    steered = Coverage()
    cases = draw_examples(record_strategy("sum_dim", ("float32", "float16"), ("forward",), steered), n, seed)
    measured = Coverage()
    for c in cases:
        measured.add(c)
    got, base = set(measured.pairs["sum_dim"]), set(plain.pairs["sum_dim"])
    assert len(got) > len(base), (len(got), len(base))
    assert got - base, "steering reached no pair the plain draw missed"
    table = measured.table()["sum_dim"]
    assert table["cases"] == n and 0 < table["pairs_drawn"] <= len(got)


def test_coverage_of_results_counts_each_case_once():
    case = _record_case()
    recs = [
        {"case_id": case.id, "case": case.to_dict(), "framework": fw, "check": "forward", "phase": "fuzz"}
        for fw in ("torch", "jax")
    ]
    table = coverage_of_results(recs).table()
    assert table["sum_dim"]["cases"] == 1 and table["sum_dim"]["features"]["dtype=float16"] == 1


def _result(op, fw, verdict, check="forward", dtype="float32", reason=""):
    case = (
        _record_case(op="sum_dim", dtype=dtype)
        if op == "sum_dim"
        else Case.from_dict(
            {"op": "exp", "shapes": {"input": [3]}, "dtype": dtype, "params": {"values": "normal"}}
        )
    )
    return {
        "case_id": f"{case.id}-{fw}-{verdict}",
        "framework": fw,
        "check": check,
        "dtype": dtype,
        "verdict": verdict,
        "phase": "fuzz",
        "reason": reason,
        "case": case.to_dict(),
        "config": case.describe(),
        "bound": {"formula": "|observed - expected| <= bound", "u": 2.0**-24, "compute_dtype": dtype},
    }


def test_report_has_matrix_departure_lines_and_coverage(tmp_path):
    from conformance.report import render_html, summarise, validate

    records = [
        _result("exp", "torch", "pass"),
        _result("exp", "jax", "pass"),
        _result(
            "exp",
            "jax",
            "fail",
            check="vjp",
            reason="grad_input[0]=1 but reference says 2\n(ratio 3 > bound 1)",
        ),
        _result("exp", "jax", "fail", check="vjp", reason="grad_input[1]=1 but reference says 2"),
        _result(
            "sum_dim", "tensorflow", "error_mismatch", reason="tensorflow raised InvalidArgumentError: x"
        ),
        _result("sum_dim", "torch", "unsupported", reason="no"),
    ]
    report = summarise(records, {}, out_dir=tmp_path)
    validate(report)
    rows = {r["op"]: r["cells"] for r in report["matrix"]["rows"]}
    assert rows["exp"]["jax"]["counts"] == {"fail": 2, "pass": 1} and rows["exp"]["jax"]["verdict"] == "fail"
    assert rows["sum_dim"]["tensorflow"]["verdict"] == "error_mismatch" and "jax" not in rows["sum_dim"]
    lines = report["departure_lines"]
    assert [(d["op"], d["framework"], d["check"], d["count"]) for d in lines] == [
        ("exp", "jax", "vjp", 2),
        ("sum_dim", "tensorflow", "forward", 1),
    ]
    assert "\n" not in lines[0]["summary"] and lines[0]["line"].startswith("exp jax vjp float32: fail x2")
    assert report["coverage"]["sum_dim"]["cases"] == 1
    html = render_html(report)
    assert html.index('id="departure-lines"') < html.index('id="how-to-read"')
    assert html.count('class="departure-line') == 2
    assert 'id="op-framework-matrix"' in html and 'id="coverage-table"' in html
    assert "<code>values=wide</code>" in html


def test_the_default_campaign_covers_every_record():
    from conformance import ops
    from conformance.cli import DEFAULT_RECORD_EXAMPLES, _parser, _selected_ops
    from conformance.executors.plan import fuzz_units

    args = _parser().parse_args(["run"])
    items, records = _selected_ops(args)
    assert "conv" in items and set(records) == set(ops.fuzzed()) - {"conv"}
    plan = [u.label for u in fuzz_units(items, records, ["forward", "vmap", "error"], ["float32"], 1, 0)]
    assert "exp:vmap" in plan and "add:error" in plan and "exp:error" not in plan
    assert DEFAULT_RECORD_EXAMPLES >= 1


def _conv(padding, transposed=False, cin=8, groups=1, layout="channels_last", dtype="float16"):
    w = [cin, 3, 2, 2] if transposed else [3 * groups, cin // groups, 2, 2]
    return Case.from_dict(
        {
            "op": "conv",
            "params": {
                "rank": 2,
                "stride": [2, 1],
                "padding": padding,
                "groups": groups,
                "transposed": transposed,
                "layout": layout,
            },
            "shapes": {"input": [1, cin, 6, 6], "weight": w},
            "dtype": dtype,
        }
    )


def test_conv_axes_name_padding_form_channels_and_groups():
    axes = conv_axes(_conv([[-1, 0], [1, 1]]))
    assert axes == {
        "batch": ">0",
        "channels": "8±1",
        "dilation": "1",
        "dtype": "float16",
        "group_channels": ">=8",
        "groups": "plain",
        "layout": "channels_last",
        "padding": "crop",
        "rank": "2",
        "stride": ">1",
        "transposed": "False",
    }
    assert conv_axes(_conv([[0, 1], [1, 1]]))["padding"] == "pairs"
    # a pair that crops one side and pads the other (XLA:CPU's rank-1 float32 bug) is its own form
    assert conv_axes(_conv([[0, 0], [-1, 1]]))["padding"] == "crop_pad"
    # the mirror pair pads the low side and crops the high one: a form of its own (XLA's bug is one-sided)
    assert conv_axes(_conv([[2, -1], [0, 0]], transposed=True))["padding"] == "pad_crop"
    assert conv_axes(_conv([[1, -1], [-1, 1]]))["padding"] == "crop_pad"
    assert conv_axes(_conv([[-1, -1], [0, 2]]))["padding"] == "crop"
    assert conv_axes(_conv(1))["padding"] == "per_dim"  # an int is one padding per dim
    assert conv_axes(_conv("same", cin=16, groups=16))["groups"] == "depthwise"
    assert conv_axes(_conv("valid", cin=4, groups=2, transposed=True))["groups"] == "grouped"
    assert [channels_bucket(n) for n in (1, 2, 5, 7, 9, 10, 17)] == [
        "1",
        "other",
        "4±1",
        "8±1",
        "8±1",
        "other",
        "16±1",
    ]
    assert len(triples(axes)) == 165 and "layout=channels_last & padding=crop & transposed=False" in triples(
        axes
    )
    assert "dtype=float16 & padding=crop & rank=2" in triples(axes)


def test_conv_axes_count_input_channels_per_group_and_an_empty_batch():
    """``group_channels`` is what one group contracts (a grouped kernel's reduction), not the total
    the ``channels`` axis buckets; ``batch`` tells an empty batch (no output to compute: kernels that
    skip their checks or never write their output) from a non-empty one."""
    grouped = _conv("valid", cin=8, groups=2)  # 4 channels per group: one 4-lane vector
    assert conv_axes(grouped)["channels"] == "8±1" and conv_axes(grouped)["group_channels"] == "4-7"
    assert conv_axes(_conv("valid", cin=16, groups=16))["group_channels"] == "1"  # depthwise
    assert conv_axes(_conv("valid", cin=6, groups=2))["group_channels"] == "2-3"
    assert conv_axes(_conv("valid", cin=16, groups=2, transposed=True))["group_channels"] == ">=8"
    assert [group_channels_bucket(n) for n in (1, 2, 3, 4, 7, 8, 17)] == [
        "1",
        "2-3",
        "2-3",
        "4-7",
        "4-7",
        ">=8",
        ">=8",
    ]
    empty = Case.from_dict(
        {**_conv("valid").to_dict(), "shapes": {"input": [0, 8, 6, 6], "weight": [3, 8, 2, 2]}}
    )
    assert conv_axes(empty)["batch"] == "0" and conv_axes(_conv("valid"))["batch"] == ">0"
    assert "batch=>0 & group_channels=4-7 & padding=valid" in triples(conv_axes(grouped))


def test_grouped_convolutions_draw_every_group_channels_bucket():
    """A grouped convolution (not only a plain one) draws each ``group_channels`` bucket, so that
    a triple of it with ``groups=grouped`` can be reached, and so can grouped kernels' vector paths."""
    drawn = {
        (conv_axes(c)["groups"], conv_axes(c)["group_channels"])
        for c in draw_examples(conv_cases(group_kinds=("grouped",)), 200, 0)
    }
    assert {v for kind, v in drawn if kind == "grouped"} == set(CONV_AXES["group_channels"])


def test_conv_cases_draw_every_value_of_every_axis():
    """Every value an axis declares (CONV_AXES) is drawn by the conv strategy, and no other: a value
    the strategy cannot draw (a padding form it never writes, a channel bucket no group kind reaches)
    is a triple the steering can never reach, and fails here."""
    drawn = {axis: set() for axis in CONV_AXES}
    for case in draw_examples(conv_cases(), 400, 0):
        for axis, value in conv_axes(case).items():
            drawn[axis].add(value)
    assert drawn == {axis: set(values) for axis, values in CONV_AXES.items()}


def _conv_triples(coverage, n=30, seed=1):
    cases = draw_examples(conv_strategy(("float32", "float16"), ("vjp",), coverage), n, seed)
    measured = Coverage()
    for c in cases:
        measured.add(c)
    return measured


def test_conv_steering_draws_more_distinct_triples_than_plain_draws():
    plain, steered = _conv_triples(None), _conv_triples(Coverage())
    assert plain.cases["conv"] == steered.cases["conv"] == 30
    got, base = set(steered.triples["conv"]), set(plain.triples["conv"])
    assert len(got) > len(base) * 1.2, (len(got), len(base))
    table = steered.table()["conv"]
    assert table["triples_drawn"] == len(got) <= table["triples_possible"]
    assert table["triples_missing_count"] == table["triples_possible"] - table["triples_drawn"]


def test_conv_triples_measured_from_results_equal_the_campaigns(tmp_path):
    """The campaign's own path (FuzzUnit's strategy under runner._hypothesis) steers a coverage;
    the report's table measured from the results those cases produce counts the same triples."""
    from conformance.executors.plan import FuzzUnit
    from conformance.report import render_html, summarise, validate
    from conformance.runner import _hypothesis

    unit = FuzzUnit("conv", "vjp", ("float32", "float16"), 20, 5)
    strategy = unit.strategy()
    records = []

    def generate(case):
        case = case.with_checks(["vjp"])
        for fw in ("torch", "jax"):
            records.append(
                {
                    "case_id": case.id,
                    "framework": fw,
                    "check": "vjp",
                    "dtype": case.dtype,
                    "verdict": "pass",
                    "phase": "fuzz",
                    "reason": "",
                    "case": case.to_dict(),
                    "config": case.describe(),
                    "bound": {
                        "formula": "|observed - expected| <= bound",
                        "u": 2.0**-24,
                        "compute_dtype": case.dtype,
                    },
                }
            )

    _hypothesis(generate, strategy, unit.max_examples, unit.seed, shrink=False)()
    campaign = strategy.coverage.table()["conv"]
    report = summarise(records, {}, out_dir=tmp_path)
    validate(report)
    measured = report["coverage"]["conv"]
    assert measured["triples_drawn"] == campaign["triples_drawn"] > 56
    assert measured["triples_possible"] == campaign["triples_possible"]
    assert measured["cases"] == campaign["cases"]
    html = render_html(report)
    assert f'<td class="num triples">{campaign["triples_drawn"]}/{campaign["triples_possible"]}</td>' in html


def test_each_conv_check_draws_its_own_cases():
    """A campaign's conv units (one per check) are seeded per check, like a record's: under one seed
    the six checks drew the same cases, and the conv budget reached a sixth of the triples it can."""
    from conformance.case import CONV_CHECKS, DTYPES
    from conformance.executors.plan import fuzz_units
    from conformance.runner import _hypothesis

    drawn = {}
    for unit in fuzz_units(("conv",), [], CONV_CHECKS, list(DTYPES), 4, 0):
        cases = []
        _hypothesis(cases.append, unit.strategy(), 4, unit.seed, shrink=False)()
        drawn[unit.check] = [c.with_checks(("forward",)).id for c in cases]
    assert set(drawn) == set(CONV_CHECKS)
    # past each unit's first example (Hypothesis's simplest draw, the same for every check)
    later = [tuple(ids[1:]) for ids in drawn.values()]
    assert len(set(later)) == len(later), drawn


@functools.cache
def _campaign_conv_draws(seed, max_examples=40):
    """{check: cases} of the conv units of ``run --ops conv --seed SEED`` (every dtype)."""
    from conformance.case import CONV_CHECKS, DTYPES
    from conformance.executors.plan import fuzz_units
    from conformance.runner import _hypothesis

    drawn = {}
    for unit in fuzz_units(["conv"], [], CONV_CHECKS, DTYPES, max_examples, seed):
        drawn[unit.check] = (unit, [])
        _hypothesis(drawn[unit.check][1].append, unit.strategy(), unit.max_examples, unit.seed, False)()
    return drawn


def test_every_seed_draws_the_failing_part_of_the_jax_mixed_sign_padding_entry():
    """``jax-conv1d-mixed-sign-padding-wrong-values`` fails only where a rank-1 non-float64 conv
    with a (-1, 1)-style padding contracts several channels (x kernel width >= 8) over a non-empty
    batch with dilation 1 and (not transposed) stride 1: six or seven axis values at once, which
    best-of-six steering drew at 2 of seeds 0-5 (docs/ci.md, convseed25). The base-choice
    construction (coverage.construction_cells: three rounds of rank x padding x group_channels, the
    other axes plain) draws it at every seed 0-5. Hypothesis draws other cases at other versions:
    see tests/conformance/test_campaign_determinism.py."""
    import hypothesis
    import pytest
    from test_campaign_determinism import HYPOTHESIS_VERSIONS  # (this directory is on sys.path)

    from conformance.known import load_known

    if hypothesis.__version__ not in HYPOTHESIS_VERSIONS:
        pytest.skip(f"Hypothesis {hypothesis.__version__} draws other cases than {HYPOTHESIS_VERSIONS}")
    [entry] = [
        e for e in load_known("builtin").entries if e.id == "jax-conv1d-mixed-sign-padding-wrong-values"
    ]

    def failing_part(c, check):  # docs/ci.md (convseed25): every failing result of three JAX replays
        p, weight = c.params, c.shapes["weight"]
        contracted = weight[1] if p.transposed else c.shapes["input"][1] // p.groups
        plain = "vjp" in check if p.transposed else all(s == 1 for s in p.stride)
        return c.shapes["input"][0] > 0 and all(d == 1 for d in p.dilation) and plain and contracted * weight[2] >= 8

    for seed in range(6):
        hits = [
            c.id
            for check, (_, cases) in _campaign_conv_draws(seed).items()
            for c in cases
            if c.dtype in entry.dtypes
            and all(cond.holds(c.to_dict(), check) for cond in entry.where)
            and failing_part(c, check)
        ]
        assert hits, f"seed {seed}: no draw in the entry's failing part"


def test_constructed_conv_cases_reach_their_cells_with_every_other_axis_at_base():
    """A conv unit constructs each of its cells (fuzz_units deals coverage.construction_cells over
    the units): some drawn case has exactly the cell's three axis values and every other axis at its
    base value (coverage.base_axes: a non-empty batch, stride and dilation 1, one plain group,
    float32, ...), and together the units' cells take three rounds of the first dispatch triple:
    every rank x padding form pair with three (or four) different group_channels values."""
    from conformance.case import DTYPES
    from conformance.coverage import BASE_AXES, DISPATCH_TRIPLES, base_axes, cell_key

    for seed in (0, 3):
        dealt = []
        for check, (unit, cases) in _campaign_conv_draws(seed).items():
            assert len(unit.cells) == 40 // 3, check
            got = [conv_axes(c) for c in cases]
            for cell in unit.cells:
                want = base_axes(dict(cell), DTYPES)
                # (a cell the unit's first example, Hypothesis's simplest draw, reached is not built)
                assert want in got or cell_key(cell) in triples(got[0]), (seed, check, cell)
                fixed = {axis for axis, _ in cell}
                plain = {k: v for k, v in want.items() if k not in fixed}
                # every other axis at its base, but where the cell rules it out (channels 1: one
                # channel contracted; depthwise or grouped: not 8 channels in one group)
                moved = {k for k, v in plain.items() if v != BASE_AXES[k]}
                assert moved <= {"channels", "group_channels", "groups"}, (cell, want)
            dealt += unit.cells
        first = DISPATCH_TRIPLES[0]
        by_pair = {}
        for cell in dealt:
            if tuple(axis for axis, _ in cell) == first:
                by_pair.setdefault((cell[0][1], cell[1][1]), set()).add(cell[2][1])
        assert len(by_pair) == len(CONV_AXES["rank"]) * len(CONV_AXES["padding"])
        assert all(len(values) >= 3 for values in by_pair.values()), by_pair


def test_base_axes_keep_the_cell_and_fall_back_only_where_the_base_cannot_go():
    import pytest

    from conformance.coverage import base_axes

    axes = base_axes({"rank": "1", "padding": "crop_pad", "group_channels": "4-7"}, ("float64", "float16"))
    assert axes == {
        "batch": ">0",
        "channels": "8±1",
        "dilation": "1",
        "dtype": "float16",
        "group_channels": "4-7",
        "groups": "plain",
        "layout": "channels_first",
        "padding": "crop_pad",
        "rank": "1",
        "stride": "1",
        "transposed": "False",
    }
    one = base_axes({"channels": "1", "stride": ">1", "transposed": "True"}, ("float32",))
    assert (one["group_channels"], one["groups"], one["dtype"]) == ("1", "plain", "float32")
    depthwise = base_axes({"groups": "depthwise", "rank": "3", "batch": "0"}, ("float32",))
    assert (depthwise["group_channels"], depthwise["channels"]) == ("1", "8±1")
    with pytest.raises(ValueError, match="no convolution has"):
        base_axes({"groups": "depthwise", "transposed": "True", "rank": "1"}, ("float32",))

def test_constructed_conv_cases_with_a_batch_give_every_example_but_the_last_a_neighbour():
    """A constructed case with a non-empty batch has two examples (coverage.CONSTRUCTED_BATCH): a
    kernel that reads a padded element from past the row it cropped (XLA:CPU's (-1, 1) convolution,
    jax-conv1d-mixed-sign-padding-wrong-values) then reads the next example's nonzero data and is
    wrong in every run; at batch 1 it read past the buffer and was right by chance two runs in three
    (conv28). Every padding form, rank and transposition, the cells the construction draws first."""
    from conformance.case import DTYPES
    from conformance.coverage import axes_cases, base_axes

    for rank in CONV_AXES["rank"]:
        for padding in CONV_AXES["padding"]:
            for transposed in CONV_AXES["transposed"]:
                cell = {"rank": rank, "padding": padding, "transposed": transposed}
                cases = draw_examples(axes_cases(base_axes(cell, DTYPES), ("forward",)), 6)
                batches = {c.shapes["input"][0] for c in cases}
                assert batches == {2}, (cell, batches)
    empty = base_axes({"rank": "1", "padding": "crop_pad", "batch": "0"}, DTYPES)
    assert {c.shapes["input"][0] for c in draw_examples(axes_cases(empty, ("forward",)), 4)} == {0}


def test_a_constructed_pad_crop_case_runs_the_crop_pad_form_through_its_input_gradient():
    """A plain convolution's input gradient is a convolution under (k - 1 - low, k - 1 - high): a
    constructed pad_crop case has a 1-wide kernel in its pad_crop dim, so that the least pair (1, -1)
    is (-1, 1) there, and 8 or more output channels per group (the gradient's contraction) where its
    channel cells allow them: XLA:CPU's crop_pad kernel departs only so
    (jax-conv1d-pad-crop-input-gradient-with-a-1-wide-kernel), and the default campaign drew it at
    seeds 0 and 4 of 0-4 (7 output channels or a 2-3-wide kernel at the others; conv29). Every rank
    and group_channels value; a transposed or another form's case keeps its drawn kernel."""
    from conformance.case import DTYPES
    from conformance.coverage import axes_cases, base_axes

    for rank in CONV_AXES["rank"]:
        for group_channels in CONV_AXES["group_channels"]:
            cell = {"rank": rank, "padding": "pad_crop", "group_channels": group_channels}
            for case in draw_examples(axes_cases(base_axes(cell, DTYPES), ("vjp",)), 8):
                p, weight = case.params, case.shapes["weight"]
                mixed = [d for d, (lo, hi) in enumerate(p.padding) if lo > 0 > hi]
                assert mixed and all(weight[2 + d] == 1 for d in mixed), (cell, p.padding, weight)
                assert weight[0] // p.groups >= 8, (cell, weight, p.groups)
    wide = set()
    for padding, transposed in (("crop_pad", "False"), ("pad_crop", "True")):
        cell = base_axes({"rank": "1", "padding": padding, "transposed": transposed}, DTYPES)
        wide |= {c.shapes["weight"][2] for c in draw_examples(axes_cases(cell, ("vjp",)), 12)}
    assert wide - {1}, wide
