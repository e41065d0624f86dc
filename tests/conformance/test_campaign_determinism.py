"""The same seed draws the same cases and gives the same verdicts; another seed draws other cases.

Speed work on the campaign (batched and pipelined checks, strategies built once, the reference
reused) must leave a seed's campaign unchanged. Two guards:

* the case ids the conv strategies draw for seeds 0 and 1 match a committed digest (so a change
  in case generation, even one that is deterministic run to run, fails here), and differ between
  the seeds;
* two campaigns with the same seed, one with checks pipelined (the default window) and one
  strictly one at a time (``window = 1``), record the same set of (case id, framework, check,
  dtype, verdict), shrunk failures included; a third seed's campaign draws other case ids.

After an intended change to the strategies or the case format (or a Hypothesis upgrade), print the
new digests with ``PYTHONPATH=. python tests/conformance/test_campaign_determinism.py`` and commit
them with the change that explains why the cases moved.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import hypothesis
import pytest

import conformance.cli  # noqa: F401 - loaded before any drawing, as in a campaign (see _DRAW)
import reference.conv  # noqa: F401
from conformance.case import CONV_CHECKS, DTYPES
from conformance.runner import Campaign, read_results
from conformance.strategies import conv_cases, invalid_conv_cases

EXAMPLES = 6
# the Hypothesis versions these digests were drawn with (pinned in the test extra, pyproject.toml)
HYPOTHESIS_VERSIONS = ("6.170.15", "6.170.17")
# sha256 of the newline-joined case ids drawn per (seed, check), 6 examples each, every dtype
EXPECTED = {
    "0:forward": "b6f7ce86d76cdfb4ceaa339879324fde92d3ffb9ff32aa15e5ccf7a3ec8f10dd",
    "0:vjp": "305946fd1ae2d85515ee6b245a6a6f300b591f9729d40a181f13962542dbcabf",
    "0:vjp_vjp": "0cd2ebac56c1894198d17cea84bdd34c4fcf51cc0d9a1b8f957961f8cbebe637",
    "0:jvp": "e0675b6bfaa375380a0ec9551fe90eb7a07ca184ee8d27cdd57307b7b890b2b0",
    "0:vmap": "d255ec639d764e15d651e78eaea3a097f1e7317a0ba2dccfdac7e597357d5c8b",
    "0:vmap_vjp": "7c8b9ef75277b2c6897205e287b78f5d81c150be95d4d530310161159e73e130",
    "0:error": "38cf42c4fe95bb1bd9dcdb0c0c0527699e741be4fe91685045810a9b298d04f0",
    "1:forward": "2d57d2cb4302a6888d8f3d94019559e8e063dc7f9ebc93e73f15749187ac4130",
    "1:vjp": "7e3c3c94a54b35860eec2b05b4210d8f87b3deb20e6e134ac3d59120551a1c96",
    "1:vjp_vjp": "10a95b32181d14f029cb7fec79357a41ff90baf320a687f20a17f183fd8af688",
    "1:jvp": "17547ed8beab968f14390288980b5facb4f1024960f4268da6602ca8d143c176",
    "1:vmap": "cf272c865ece43005b616ad495ff3324f80bba6b2907fd0278664df741da96a5",
    "1:vmap_vjp": "cf00d970328e018c2c2c502f174b26d3319fc10f27cc788433ef4afbb3c74851",
    "1:error": "331a2d38505ecd83a95f80846b81f452a6ff5e517bbd9b4bf980b097c01b5472",
}


# Hypothesis also draws literals of the *local* modules imported so far (its "local constants"), so
# which cases a seed draws would depend on the modules loaded when drawing; conformance.strategies
# turns that off (seed 0's digests moved when it did). The digests are still drawn in a fresh process
# with a campaign's imports, so that what else this test session imported cannot matter.
_DRAW = """
import json, sys
import conformance.cli, conformance.strategies, reference.conv
from conformance.case import DTYPES
from conformance.runner import _hypothesis
from conformance.strategies import conv_cases, invalid_conv_cases
out = {}
for seed in (0, 1):
    for check in sys.argv[2:]:
        strategy = invalid_conv_cases(DTYPES) if check == "error" else conv_cases(DTYPES, checks=(check,))
        ids = []
        _hypothesis(lambda case: ids.append(case.id), strategy, int(sys.argv[1]), seed, shrink=False)()
        out[f"{seed}:{check}"] = ids
print(json.dumps(out))
"""


def drawn_ids() -> dict[str, list[str]]:
    """The case ids a campaign's fuzzing draws per (seed, check), drawn as a campaign draws them."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    checks = [*CONV_CHECKS, "error"]
    proc = subprocess.run(
        [sys.executable, "-c", _DRAW, str(EXAMPLES), *checks],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def digests(ids=None) -> dict[str, str]:
    ids = drawn_ids() if ids is None else ids
    return {key: hashlib.sha256("\n".join(v).encode()).hexdigest() for key, v in ids.items()}


def test_a_seed_draws_the_committed_cases():
    got = digests()
    changed = sorted(k for k in EXPECTED if got[k] != EXPECTED[k])
    if changed and hypothesis.__version__ not in HYPOTHESIS_VERSIONS:
        pytest.skip(
            f"Hypothesis {hypothesis.__version__} draws other cases for {changed} than the versions the "
            f"digests were drawn with {HYPOTHESIS_VERSIONS}: regenerate them (see the module docstring)"
        )
    assert not changed, (
        f"the cases drawn for {changed} changed; if intended, commit the new digests: "
        + json.dumps({k: got[k] for k in changed}, indent=1)
    )


def test_seeds_draw_different_cases_and_the_same_seed_the_same():
    first, again = drawn_ids(), drawn_ids()
    assert first == again
    for check in [*CONV_CHECKS, "error"]:
        assert len(first[f"0:{check}"]) == EXAMPLES
        assert set(first[f"0:{check}"]) != set(first[f"1:{check}"])


def _fuzzed(camp, seed, checks=("forward", "error"), n=5) -> set:
    """The (case id, framework, check, dtype, verdict, phase) of a small fuzz campaign with ``seed``."""
    before = len(read_results(camp.results_path))
    for check in checks:
        strategy = invalid_conv_cases(DTYPES) if check == "error" else conv_cases(DTYPES, checks=(check,))
        camp.fuzz(list(camp.workers), check, strategy, n, seed)
    camp.writer.sync()
    return {
        (r["case_id"], r["framework"], r["check"], r["dtype"], r["verdict"], r["phase"])
        for r in read_results(camp.results_path)[before:]
    }


@pytest.mark.torch
def test_same_seed_same_results_pipelined_or_not(tmp_path):
    """A planted bug (a dropped group) gives failures and shrinking too, so those are compared as well."""
    pytest.importorskip("torch")
    adapter = {"DroppedGroup": "planted_adapters:DroppedGroup"}
    with Campaign(tmp_path / "a", adapter, found_dir=tmp_path / "a" / "found") as camp:
        assert camp.window > 1
        camp.start()
        seed0 = _fuzzed(camp, 0)
        seed1 = _fuzzed(camp, 1)
    with Campaign(tmp_path / "b", adapter, found_dir=tmp_path / "b" / "found") as camp:
        camp.window = 1  # one check at a time: the harness before pipelining
        camp.start()
        again = _fuzzed(camp, 0)
    assert seed0 == again, f"only in the pipelined run: {seed0 - again}; only one at a time: {again - seed0}"
    assert len(seed0) >= 10
    assert {r[0] for r in seed0} != {r[0] for r in seed1}


if __name__ == "__main__":
    print(f"drawn with Hypothesis {hypothesis.__version__} (add it to HYPOTHESIS_VERSIONS)")
    print("EXPECTED = {")
    for key, digest in digests().items():
        print(f'    "{key}": "{digest}",')
    print("}")


def test_seeded_draws_make_one_example_per_record_a_draw_of_the_seed():
    # Hypothesis's first example is its simplest draw (the first dtype, the first values kind, the
    # smallest shapes, data seed 0) at every seed: at the default budget (one example per record
    # and check) every seed draws that same case. ``run --draws seeded`` skips it: each example is
    # a draw of the campaign's seed.
    from conformance.coverage import record_strategy
    from conformance.runner import _hypothesis

    def drawn(seed, simplest):
        cases = []
        strategy = record_strategy("tanh", DTYPES, ("vjp",))
        _hypothesis(lambda case: cases.append(case), strategy, 1, seed, shrink=False, simplest=simplest)()
        return cases

    simplest = {seed: drawn(seed, True) for seed in range(3)}
    assert len({cases[0].id for cases in simplest.values()}) == 1  # what the default draws
    seeded = {seed: drawn(seed, False) for seed in range(6)}
    assert all(len(cases) == 1 for cases in seeded.values())  # one example, as asked
    ids = {cases[0].id for cases in seeded.values()}
    assert len(ids) >= 5, ids  # the seeds draw different cases
    assert {c[0].dtype for c in seeded.values()} != {DTYPES[0]}  # not always the first dtype
    assert {c[0].seed for c in seeded.values()} != {0}  # nor the data of seed 0
    assert [c.id for c in drawn(3, False)] == [c.id for c in seeded[3]]  # a seed draws the same again


@pytest.mark.torch
def test_run_draws_seeded_gives_each_seed_its_own_record_cases(tmp_path):
    # the flag reaches the fuzz units: at the default record budget, two seeds draw other cases
    from conformance.cli import main

    fuzzed = {}
    for seed in (0, 1):
        out = tmp_path / f"seed{seed}"
        argv = ["run", "--ops", "tanh,exp", "--frameworks", "torch", "--checks", "vjp", "--draws", "seeded"]
        main([*argv, "--seed", str(seed), "--out", str(out), "--quiet"])
        fuzzed[seed] = {r["case_id"] for r in read_results(out / "results.jsonl") if r["phase"] == "fuzz"}
    assert fuzzed[0] and fuzzed[1] and fuzzed[0] != fuzzed[1]
