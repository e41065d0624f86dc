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

import hypothesis
import pytest

from conformance.case import DTYPES, VALID_CHECKS
from conformance.runner import Campaign, _hypothesis, read_results
from conformance.strategies import conv_cases, invalid_conv_cases

EXAMPLES = 6
HYPOTHESIS_VERSION = "6.170.15"
# sha256 of the newline-joined case ids drawn per (seed, check), 6 examples each, every dtype
EXPECTED = {
    "0:forward": "1158690165e0aa29b8bb574d71a3c77206039957e44e7b24d9a929415a2bdfa1",
    "0:vjp": "06b29eefe3c60dbbd11aebbe73a32a12126ecd057871a531a89c77354d77c2f8",
    "0:vjp_vjp": "ec51247461d649ab1c048185b0089487ab254f7803a2fde8f964ab9a71c81c72",
    "0:jvp": "ea97211a3e47b71236f06247afb2c268e3be4d1618128518be399798f285e2e8",
    "0:vmap": "7495349c90ae3e77b2ecd736f49b2ff126bd864400ad316f8aa17cb43bc30c72",
    "0:vmap_vjp": "e13a9585c026f23acf1f052636f0987c5660973e41d33005bb89fa8868bff433",
    "0:error": "46d67c5f3251e43d1ac3fedfbf74abab74bf665da47d7163b3d78f5505bb972f",
    "1:forward": "43cabc62a43e8712c44118800b87fbad5a5327f52ee25703e09ab50d04c137fc",
    "1:vjp": "6354768c61b21274da59e95befbb9ff4f6f7768ac1c1922b9793b49e8296cb1f",
    "1:vjp_vjp": "4242fed44dfc630d333996ca021bde6c886760c2ffbe311b3e0cde00595a1eed",
    "1:jvp": "81ec8ed90f472dbdf25228000073d8b11e59dfb3ad53f67246903cc249d4cda5",
    "1:vmap": "c894a96e07d311d84a89d2cf1487b39da2af8a33e04d55a71b8fa2b65cfbc4e2",
    "1:vmap_vjp": "f5b2782f35d21b65e138cef21dd3756c816d24e2cbe98f960a5a3933dfd9c26a",
    "1:error": "0d049a72ae61e4446c3b983c440cc560c530f391f405046d257bc01e4361a657",
}


def drawn_ids(seed: int, check: str) -> list[str]:
    """The case ids a campaign's fuzzing draws for ``check`` (the same call as ``Campaign.fuzz``)."""
    strategy = invalid_conv_cases(DTYPES) if check == "error" else conv_cases(DTYPES, checks=(check,))
    ids = []
    _hypothesis(lambda case: ids.append(case.id), strategy, EXAMPLES, seed, shrink=False)()
    return ids


def digests() -> dict[str, str]:
    return {
        f"{seed}:{check}": hashlib.sha256("\n".join(drawn_ids(seed, check)).encode()).hexdigest()
        for seed in (0, 1)
        for check in VALID_CHECKS + ("error",)
    }


@pytest.mark.skipif(
    hypothesis.__version__ != HYPOTHESIS_VERSION,
    reason=f"the digests were drawn with Hypothesis {HYPOTHESIS_VERSION} (another version draws other cases); "
    "regenerate them (see the module docstring)",
)
def test_a_seed_draws_the_committed_cases():
    got = digests()
    changed = sorted(k for k in EXPECTED if got[k] != EXPECTED[k])
    assert not changed, (
        f"the cases drawn for {changed} changed; if intended, commit the new digests: "
        + json.dumps({k: got[k] for k in changed}, indent=1)
    )


def test_seeds_draw_different_cases_and_the_same_seed_the_same():
    for check in ("vjp", "error"):
        first, again, other = drawn_ids(0, check), drawn_ids(0, check), drawn_ids(1, check)
        assert first == again
        assert set(first) != set(other) and len(first) == EXAMPLES


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
    print(f'HYPOTHESIS_VERSION = "{hypothesis.__version__}"')
    print("EXPECTED = {")
    for key, digest in digests().items():
        print(f'    "{key}": "{digest}",')
    print("}")
