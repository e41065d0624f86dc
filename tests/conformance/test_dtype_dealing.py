"""A campaign deals the requested dtypes over a record's units, so that the default budget judges
every one of them (issues #34, #38).

At the default budget (one example per record and check, ``--draws simplest-first``) a unit judges
one case: Hypothesis's simplest draw, whose dtype is the first of the unit's dtypes. Before the
dtypes were dealt, that was the first requested dtype for every unit: the default campaign judged
every record's own units in float64 only, and ``--dtypes complex64,complex128`` never judged
complex128. These tests draw the units' cases the way a campaign draws them
(:func:`conformance.runner._hypothesis` over :meth:`FuzzUnit.strategy`, the steered strategy) and
look at the dtypes actually drawn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import conformance.cli  # noqa: F401 - a campaign's imports before drawing (see strategies._no_local_constants)
from conformance import ops
from conformance.case import COMPLEX_DTYPES, DTYPES
from conformance.coverage import dealt_dtypes, reach_points
from conformance.executors.plan import fuzz_units, record_checks
from conformance.ops import RECORDS
from conformance.runner import _hypothesis, read_results

#: four numerical checks and the error check: a record with as many checks as real dtypes
CHECKS = ("forward", "vjp", "jvp", "vmap", "error")


def drawn(unit) -> list:
    """The cases a campaign draws for ``unit`` (its own budget, seed and draws)."""
    cases = []
    _hypothesis(cases.append, unit.strategy(), unit.max_examples, unit.seed, shrink=False, simplest=unit.simplest)()
    return cases


def default_units(records, dtypes, seed=0, checks=CHECKS, **kw):
    """The record units of a default-budget campaign (one example per record and check)."""
    return [u for u in fuzz_units(records, records, checks, dtypes, 50, seed, record_examples=1, **kw) if u.point is None]


def test_dealt_dtypes_rotates():
    assert dealt_dtypes(DTYPES, 0) == DTYPES
    assert dealt_dtypes(DTYPES, 1) == ("float32", "float16", "bfloat16", "float64")
    assert dealt_dtypes(DTYPES, 6) == ("float16", "bfloat16", "float64", "float32")
    assert dealt_dtypes((), 3) == ()


def test_a_record_with_four_checks_judges_every_real_dtype():
    units = default_units(["mul"], DTYPES)
    judged = {u.check: [c.dtype for c in drawn(u)] for u in units}
    assert all(len(d) == 1 for d in judged.values()), judged  # the default budget: one case each
    numerical = {d[0] for check, d in judged.items() if check != "error"}
    assert numerical == set(DTYPES), judged
    # forward, the check every record has, is not left in float64 (the reach sweep's first point
    # judges it there), and the error check is dealt after the numerical ones
    assert judged["forward"] == ["float32"]
    assert judged["error"] == [dealt_dtypes(DTYPES, 5)[0]]


def test_complex_dtypes_are_both_judged():
    units = default_units(["exp"], COMPLEX_DTYPES, checks=("forward", "vjp"))
    assert {c.dtype for u in units for c in drawn(u)} == set(COMPLEX_DTYPES)


def test_every_record_with_enough_checks_judges_every_dtype_it_supports():
    # the plan over every fuzzed record: a unit's first dtype is its simplest draw's (drawn above)
    records = [n for n in ops.select(["all"]) if n != "conv"]
    for dtypes in (DTYPES, COMPLEX_DTYPES):
        checked = 0
        units = default_units(records, dtypes, checks=conformance.cli.ALL_CHECKS)
        for name in {u.record for u in units}:
            supported = {d for d in dtypes if d in RECORDS[name].dtypes}
            numerical = [u for u in units if u.record == name and u.check != "error"]
            if len(numerical) >= len(supported):
                checked += 1
                assert {u.dtypes[0] for u in numerical} == supported, name
            assert all(set(u.dtypes) == supported for u in units if u.record == name)
        assert checked > 100


def test_the_dealing_is_the_same_at_every_seed():
    dealt = {seed: [(u.check, c.dtype, c.id) for u in default_units(["tanh"], DTYPES, seed) for c in drawn(u)] for seed in (0, 1, 7)}
    assert dealt[0] == dealt[1] == dealt[7]


_DRAW = """
import json, sys
import conformance.cli
from conformance.case import DTYPES
from conformance.executors.plan import fuzz_units
from conformance.runner import _hypothesis
out = []
for u in fuzz_units(["tanh", "mul"], ["tanh", "mul"], ["forward", "vjp", "jvp", "vmap"], DTYPES, 50, int(sys.argv[1]), record_examples=1):
    _hypothesis(lambda c: out.append([u.label, c.dtype, c.id]), u.strategy(), 1, u.seed, shrink=False)()
print(json.dumps(out))
"""


def test_the_dealing_is_the_same_in_another_process():
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}

    def run(seed):
        proc = subprocess.run([sys.executable, "-c", _DRAW, str(seed)], env=env, cwd=root, capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)

    here = run(3)
    assert here == run(4)
    assert {dtype for label, dtype, _ in here if "@" not in label} == set(DTYPES)


def test_seeded_draws_keep_the_requested_order_and_draw_over_every_dtype():
    # ``--draws seeded``: no example is the simplest draw, so nothing is dealt; a seeded campaign
    # draws the cases it drew before (the seeded campaigns' classifications stay reproducible)
    units = default_units(["tanh"], DTYPES, simplest=False)
    assert all(u.dtypes == DTYPES for u in units)
    seeded = {c.dtype for seed in range(8) for u in default_units(["tanh"], DTYPES, seed, checks=("vjp",), simplest=False) for c in drawn(u)}
    assert len(seeded) >= 2, seeded


def test_error_check_is_dealt_last_and_the_sweep_starts_one_dtype_before():
    assert record_checks("tanh", ("error", "vmap", "forward")) == ["forward", "vmap"]
    name = next(n for n in RECORDS if "error" in RECORDS[n].checks and RECORDS[n].checks.index("error") < len(RECORDS[n].checks) - 1)
    assert record_checks(name, RECORDS[name].checks)[-1] == "error"
    # the reach sweep's point 0 judges forward in float64; the forward unit judges it in float32
    points = reach_points("log", CHECKS, DTYPES)
    assert points[0][1:] == ("forward", "float64", "near")
    assert points[1][1:] == ("vjp", "float32", "at")  # the same point's ``at`` cell: check and dtype 1
    (forward,) = [u for u in default_units(["log"], DTYPES) if u.check == "forward"]
    assert forward.dtypes[0] == "float32"


@pytest.mark.torch
def test_a_default_campaign_judges_every_dtype(tmp_path):
    # end to end: the CLI's default budget over one record with four numerical checks
    pytest.importorskip("torch")
    from conformance.cli import main

    out = tmp_path / "run"
    argv = ["run", "--ops", "tanh", "--frameworks", "torch", "--checks", "forward,vjp,jvp,vmap", "--reach", "off"]
    main([*argv, "--out", str(out), "--quiet"])
    judged = {r["dtype"] for r in read_results(out / "results.jsonl") if r.get("phase") == "fuzz" and r.get("case_id")}
    assert judged == set(DTYPES)


def test_the_finding_the_dealing_reached_is_its_entrys():
    # the default campaign judged max_pool2d's and max_pool3d's vmap_vjp in float32 once dtypes were
    # dealt: TensorFlow's oneDNN gradient aborted (refgrad/cases/known_departures.toml, dtypereach)
    from conformance.known import load_known

    known = load_known("builtin")
    for op, shape in (("max_pool2d", [0, 1, 1, 1]), ("max_pool3d", [0, 1, 1, 1, 1])):
        k = [1] * (len(shape) - 2)
        case = {"op": op, "params": {"in_dims": [0], "kernel_size": k, "padding": [0] * len(k), "stride": k, "values": "normal", "vmap_size": 1}, "shapes": {"input": shape}, "dtype": "float32", "seed": 0, "checks": ["vmap_vjp"]}
        rec = {"case_id": f"{op}-x", "framework": "tensorflow", "check": "vmap_vjp", "verdict": "crash", "phase": "fuzz", "dtype": "float32", "case": case, "version": "2.21.0", "reason": "tensorflow worker killed by SIGABRT; its stderr ends: F0000 tensor.cc:896] Check failed: dtype() == expected_dtype (1 vs. 3)  int32 expected, got float"}
        (got,), _ = known.classify([rec], {"tensorflow": {"onednn": True}})
        assert got["known"]["id"] == "tf-onednn-max-pool-gradient-vectorized-empty-batch-aborts", got
        (off,), _ = known.classify([rec], {"tensorflow": {"onednn": False}})
        assert off["verdict"] == "crash"
        # a crash that quotes no check failure is not this departure (the harness quotes the line)
        bare = {**rec, "reason": "tensorflow worker killed by SIGABRT"}
        (bare,), _ = known.classify([bare], {"tensorflow": {"onednn": True}})
        assert bare["verdict"] == "crash"
