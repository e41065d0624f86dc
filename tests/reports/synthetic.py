"""A synthetic campaign of any size in the real result record's shape, for the report's scale tests.

``REAL_LINE`` is one line of ``results.jsonl`` copied from a real run (``conformance run --frameworks
torch --ops exp,add --max-examples 2``); :func:`synthetic_results` varies its framework, op, check,
dtype, case id, verdict and worst element, so that the report groups the results into cells as a
default campaign does (about two results per framework x op x check x dtype), with a share of
failures (each its own discrepancy with a reproducer), unsupported and known results.
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
from ml_dtypes import bfloat16

from conformance.tolerance import explain, ulps

REAL_LINE = r"""{"schema": 1, "case_id": "exp-02da23ef9d6e", "framework": "torch", "check": "vmap_vjp", "verdict": "pass", "phase": "fuzz", "dtype": "bfloat16", "config": "exp in_dims=[0] values=\"ties\" vmap_size=1 input=[] bfloat16", "max_ratio": 0.034566665760375974, "bound": {"formula": "|observed - expected| <= bound, bound composed by reference.errors: sum_i |dy/dx_i|\u00b7e_i + own rounding (2\u00b7c\u00b7u\u00b7|y| for a c-ulp op; K\u00b7u_acc\u00b7M + u\u00b7|y| for sums of products) + eta (underflow), per primitive, through the forward and every differentiation pass + 1 ulp of the expected value", "compute_dtype": "bfloat16", "u": 0.00390625, "dtype": "bfloat16", "accumulator": "float32", "u_acc": 5.960464477539063e-08, "tf32": false, "underflow": "gradual", "eta": 4.591774807899561e-41, "accumulation_contract": "PyTorch CPU kernels accumulate float16/bfloat16 in float32 (at::opmath_type / acc_type); the reduced-precision reductions of the docs' 'Numerical accuracy' notes (allow_fp16_reduced_precision_reduction) are CUDA GEMM flags", "ops": {"clone": "derived: |dy/dx|\u00b7e + 2\u00b70.5\u00b7u\u00b7|y| (IEEE 754-2019 \u00a75.4: +, -, *, /, sqrt are correctly rounded (0.5 ulp))", "exp": "elementwise: |dy/dx|\u00b7e + 2\u00b72\u00b7u\u00b7|y| (SLEEF *_u10 (PyTorch's Vectorized<float> exp/log/tanh/erf/...): 1.0 ulp error bound; glibc manual, 'Errors in Math Functions': exp/log/expf/logf listed at <= 1-2 ulp on x86_64; XLA and Eigen use their own polynomial exp/log, for which no figure is stated: c = 2, twice SLEEF's bound (a stated choice; the exp/log record campaigns on JAX and TensorFlow are its check))", "mul": "derived: |dy/dx|\u00b7e + 2\u00b70.5\u00b7u\u00b7|y| (IEEE 754-2019 \u00a75.4: +, -, *, /, sqrt are correctly rounded (0.5 ulp))"}}, "seconds": 0.001088, "version": "2.13.0+cpu", "case": {"op": "exp", "params": {"in_dims": [0], "values": "ties", "vmap_size": 1}, "shapes": {"input": []}, "dtype": "bfloat16", "seed": 215, "checks": ["vmap_vjp"]}, "case_hash": "50054ff66595d5a3", "worst": {"output": "grad_input", "index": [0], "observed": 0.0693359375, "expected": 0.06925360196873541, "bound": 0.0023819344288326626, "ratio": 0.034566665760375974, "limit": 1.0, "dtype": "bfloat16", "ulps": 0.16862316802988175}}"""

FRAMEWORKS = ("torch", "jax", "tensorflow")
CHECKS = ("forward", "vjp", "jvp", "vjp_vjp", "vmap", "vmap_vjp")
DTYPES = ("float64", "float32", "float16", "bfloat16")
# ops whose case takes the real line's parameters, so that a failure's reproducer is a real script
FAIL_OPS = ("exp", "tanh", "sigmoid", "abs", "neg")
_ROUND = {"float64": np.float64, "float32": np.float32, "float16": np.float16, "bfloat16": bfloat16}


def verdict_of(i: int, fail_every: int) -> str:
    """Result i's verdict: one in ``fail_every`` fails, one in 50 is unsupported, one in 97 known."""
    if i % fail_every == fail_every - 1:
        return "fail"
    if i % 50 == 7:
        return "unsupported"
    if i % 97 == 11:
        return "known"
    return "pass"


def synthetic_results(n: int, ops: int = 290, fail_every: int = 200, old_format: bool = False) -> list[dict]:
    """``n`` result records; ``old_format`` drops the worst element's ``dtype`` and ``ulps`` (results
    written before they were recorded)."""
    base = json.loads(REAL_LINE)
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        # about two results per cell: consecutive pairs share framework, op, check and dtype
        cell = i // 2
        fw = FRAMEWORKS[cell % len(FRAMEWORKS)]
        op = f"op{cell // len(FRAMEWORKS) % ops:03d}"
        check = CHECKS[cell // (len(FRAMEWORKS) * ops) % len(CHECKS)]
        dtype = DTYPES[cell // (len(FRAMEWORKS) * ops * len(CHECKS)) % len(DTYPES)]
        verdict = verdict_of(i, fail_every)
        if verdict == "fail":
            op = FAIL_OPS[i // fail_every % len(FAIL_OPS)]
        r = copy.deepcopy(base)
        case_id = f"{op}-{i:08x}"
        r.update(case_id=case_id, framework=fw, check=check, dtype=dtype, verdict=verdict)
        r["config"] = f'{op} in_dims=[0] values="ties" vmap_size=1 input=[] {dtype}'
        r["case"].update(op=op, dtype=dtype, checks=[check], seed=i % 1000)
        expected = float(rng.standard_normal())
        observed = float(_ROUND[dtype](expected))
        bound = 2.0 * abs(expected) * 2.0**-8
        if verdict == "fail":
            observed = float(_ROUND[dtype](expected * (1 + 0.5 * (i % 7 + 1))))
        ratio = abs(observed - expected) / bound
        r["max_ratio"] = ratio
        r["worst"] = {
            "output": "grad_input" if check != "forward" else "output",
            "index": [0],
            "observed": observed,
            "expected": expected,
            "bound": bound,
            "ratio": ratio,
            "limit": 1.0,
            "dtype": dtype,
            "ulps": ulps(observed, expected, dtype),
        }
        if verdict == "unsupported":
            r["worst"] = None
            r["max_ratio"] = None
            r["reason"] = f"{fw} has no {op} in {dtype}"
        elif verdict == "fail":
            r["reason"] = explain({"worst": r["worst"]}, f"{fw} {check} {r['config']}")
            r["failing_elements"] = 1
        elif verdict == "known":
            r["known"] = {"id": f"{fw}-{op}-slow-tail"}
            r["reason"] = "a known departure"
        if old_format and r["worst"]:
            del r["worst"]["dtype"], r["worst"]["ulps"]
        assert r["worst"] is None or math.isfinite(r["worst"]["ratio"])
        out.append(r)
    return out


def write_results(path, records) -> int:
    """Write ``records`` as results.jsonl; its size in bytes."""
    text = "".join(json.dumps(r) + "\n" for r in records)
    path.write_text(text)
    return len(text)


def embedded_data(html: str) -> dict:
    """The JSON index.html's script draws from (``<script type="application/json" id="report-data">``)."""
    start = html.index('<script type="application/json" id="report-data">')
    start = html.index(">", start) + 1
    return json.loads(html[start : html.index("</script>", start)])
