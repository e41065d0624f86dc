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
    "0:forward": "6413bc632936dab97a141befa7c445aae6eede16b10525d60fcf0f95eb5f07da",
    "0:vjp": "d10730938655633d92caa2b2f926b4949af83d60ca421b19d258b630cc7ba8d1",
    "0:vjp_vjp": "b30b117969b4173988027b9621f6c87b23578f5861260edcf29431986ff1072d",
    "0:jvp": "c11116d890a7be95ba79bfa9e8e0b941fe8c8451fcec808a07038726c91a4ce8",
    "0:vmap": "a5f8e1293e1b4b6619be3782583aabe99f226fd3b9fa13a4d293fccc9f915c49",
    "0:vmap_vjp": "6fdf12668ea0065733c89dfcc78326e4776670c0181c2bdc758e5ac547b89279",
    "0:error": "161659fd5e481cfc47f53e66b2a43bc6a0bc46d266f356c9cfb8e02827bdf130",
    "1:forward": "2495ed6af824f4c55e752170012520d501b7b70c927cd18477c7e59bf9ff4a4a",
    "1:vjp": "8e402de60919cba1071e2e205b439c70f24a24d1ddbcd3696dc706f62e535df4",
    "1:vjp_vjp": "a01d21ac4c5626893fea6b561fa1c282ba244c25e49c22b0da4c62f7d5a4cbd7",
    "1:jvp": "ee4960a2489faae0a044de095c94a35b669fadc22bd5a5b5d102999be754257c",
    "1:vmap": "d3f7ce522f9c744d21f4dc07ff1c66f708ca3e707bdb80ad1c888fe8a4a566fb",
    "1:vmap_vjp": "1a3ec153d82ae4631a8529b64ba14519b1e6d92ac18d223935b1d462eb3a9dfc",
    "1:error": "a2e4bfe80f56cbee5c8ea3caa9bd9803fd5d4eefd8ec48cbc8290e1a83bebd71",
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
