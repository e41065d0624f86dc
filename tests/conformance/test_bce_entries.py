"""binary_cross_entropy's departures (issue #38): the failures of `refgrad run --ops
binary_cross_entropy --frameworks torch,jax,tensorflow --max-examples 20 --dtypes float64,float32`
lie in the regions of their known entries, the regions follow the departures' laws (XLA's float64
log1p off for arguments in (-(sqrt(2) - 1), -0.33); PyTorch's 1e-12-regularised double backward in
every float64 second derivative in x), and the reproducers print what the entries say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.known import load_known

VERSIONS = {"jax": "0.10.2", "torch": "2.13.0+cpu", "tensorflow:xla": "2.21.0"}
JAX_BCE = "jax-float64-log1p-near-minus-0.41-in-binary-cross-entropy"
FORWARD_OVER_FORWARD = "torch-bce-double-backward-eps-forward-over-forward"

#: the campaign's open failures before these entries (framework, check, seed, input shape, params)
FAILURES = [
    ("jax", "vjp", 26664, [2, 2, 3], {}),
    ("jax", "vjp", 59433, [5, 4, 5], {}),
    ("jax", "vjp_jvp", 88, [4, 5], {}),
    ("jax", "vmap_jvp_vjp", 380, [2, 3], {"in_dims": [None, -3], "vmap_size": 2}),
    ("jax", "vmap_jvp_vjp", 380, [2, 4, 5], {"in_dims": [None, -3], "vmap_size": 2}),
    ("jax", "vmap_vjp", 5510, [3, 3, 1], {"in_dims": [-2, None], "vmap_size": 1}),
    ("jax", "vmap_vjp", 707, [2], {"in_dims": [0, None], "vmap_size": 3}),
    ("torch", "jvp_jvp", 1009, [], {}),
    ("torch", "jvp_jvp", 1319, [3, 5], {}),
    ("torch", "jvp_jvp", 623, [4, 1, 1], {}),
    ("torch", "jvp_jvp", 623, [4, 5, 1], {}),
    ("torch", "jvp_jvp", 807, [1, 2], {}),
]


def _entries():
    return {e.id: e for e in load_known("builtin").entries}


def _result(framework, check, op="binary_cross_entropy", seed=0, shape=(4,), params=None, data=None):
    if data is not None:
        shape = (len(data["input"]),)
    shapes = {"input": list(shape)} if op == "log1p" else {"input": list(shape), "target": list(shape)}
    case = {"op": op, "params": {"values": "normal", **(params or {})}, "shapes": shapes, "dtype": "float64",
            "seed": seed, "checks": [check]}
    if data is not None:
        case["data"] = data
    return {"framework": framework, "check": check, "dtype": "float64", "version": VERSIONS[framework],
            "case": case}


def _matching(rec):
    return [i for i, e in _entries().items() if e.in_region(rec) and "fail" in e.verdicts]


@pytest.mark.parametrize("failure", FAILURES, ids=lambda f: f"{f[0]}-{f[1]}-{f[2]}")
def test_every_open_failure_of_the_campaign_is_in_a_known_region(failure):
    framework, check, seed, shape, params = failure
    matched = _matching(_result(framework, check, seed=seed, shape=shape, params=params))
    assert (JAX_BCE if framework == "jax" else FORWARD_OVER_FORWARD) in matched


def _bce_data(xs):
    return {"input": xs, "target": [0.1] * len(xs)}


@pytest.mark.parametrize("framework", ["jax", "tensorflow:xla"])
def test_the_log1p_regions_hold_an_element_in_the_band_and_not_one_outside(framework):
    prefix = "jax" if framework == "jax" else "tf-xla"
    bce, log1p = f"{prefix}-float64-log1p-near-minus-0.41-in-binary-cross-entropy", f"{prefix}-float64-log1p-near-minus-0.41"
    inside = _bce_data([0.05, 0.41, 0.8])  # |x| = 0.41: log1p(-0.41) is 98 ulps off
    assert bce in _matching(_result(framework, "vjp", data=inside))
    for outside in ([0.1, 0.3, 0.32], [0.4143, 0.5, 0.85]):  # within 2 ulps on both sides of the band
        assert bce not in _matching(_result(framework, "vjp", data=_bce_data(outside)))
    # second derivatives hold no log(1 - x): not in the region
    assert bce not in _matching(_result(framework, "jvp_jvp", data=inside))
    assert log1p in _matching(_result(framework, "forward", op="log1p", data={"input": [-0.41, 2.0]}))
    # the band is of negative arguments: log1p(0.41) is within 2 ulps
    assert log1p not in _matching(_result(framework, "forward", op="log1p", data={"input": [0.41, 2.0]}))


@pytest.mark.slow  # imports JAX and TensorFlow
@pytest.mark.parametrize(
    "script", ["reproducers/xla-float64-log1p-near-minus-0.41.py", "reproducers/torch-bce-double-backward-eps.py"]
)
def test_the_reproducer_prints_what_each_entry_says(script):
    pytest.importorskip("tensorflow")
    pytest.importorskip("jax")
    pytest.importorskip("mpmath")
    entries = [e for e in _entries().values() if e.reproducer == script]
    assert len(entries) >= 3
    done = subprocess.run([sys.executable, str(Path(entries[0].reproducer_path))], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    missed = [e.id for e in entries if not e.reproduces.search(done.stdout)]
    assert not missed, done.stdout
