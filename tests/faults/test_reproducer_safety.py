"""Reproducers are safe for any case text: adversarial ids and descriptions never break the script,
never run as code, and never escape the reproducers directory."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conformance.case import Case
from conformance.reproducer import reproducer, write_reproducer
from tests.faults.conftest import env

HOSTILE = [
    "'''",
    '"""',
    "'''); import os; os.system('echo pwned') #",
    '"""\nimport os\nos._exit(0)\n"""',
    "back\\slash\\",
    "\\'\\\"\\n",
    "line\nbreak\r\n",
    "../../etc/passwd",
    "a/b\\c",
    "ünïcødé ✓ 漢字",
    "\udcff lone surrogate",
    "x" * 10000,
    "\x00nul",
    "{}{{}}%s%(x)s",
]

CONV = {
    "op": "conv",
    "params": {"rank": 1, "stride": 1, "padding": 0},
    "shapes": {"input": [1, 1, 3], "weight": [1, 1, 2]},
    "dtype": "float64",
    "checks": ["forward"],
}


def _conv_record(text):
    case = Case.from_dict({**CONV, "description": text, "id": text})
    return {
        "case_id": text,
        "framework": "torch",
        "check": "forward",
        "verdict": "fail",
        "reason": text,
        "bound": {"u": 2.0**-53, "K": {"output": 3}},
        "case": case.to_dict(),
    }


def _program_record(text):
    case = Case.from_dict(
        {
            "op": "program",
            "shapes": {"v0": [2]},
            "checks": ["program"],
            "description": text,
            "id": text,
            "source": "def prog(T, v0):\n    y = (v0 * 3).sum()\n    y.backward()\n    return y\n",
        }
    )
    return {
        "case_id": text,
        "framework": "torch",
        "check": "program",
        "verdict": "fail",
        "reason": text,
        "bound": {"u": 2.0**-53, "K": {"all": 10}, "M": 10.0},
        "case": case.to_dict(),
    }


TORCH = "conformance.adapters.torch_adapter:TorchAdapter"


@pytest.mark.parametrize("make", [_conv_record, _program_record])
def test_every_hostile_text_gives_a_script_that_compiles_and_keeps_the_text_as_data(make, tmp_path):
    pytest.importorskip("torch")
    for i, text in enumerate(HOSTILE):
        script = reproducer(make(text), TORCH)
        code = compile(script, f"<repro {i}>", "exec")  # a SyntaxError fails the test
        assert "pwned" not in {c for c in code.co_names}
        path = write_reproducer(make(text), TORCH, tmp_path / "repros")
        assert path.parent == tmp_path / "repros" and path.exists(), path
    assert len(list((tmp_path / "repros").iterdir())) == len(HOSTILE)  # distinct, safe names


def _run(script_path):
    return subprocess.run(
        [sys.executable, str(script_path)], capture_output=True, text=True, env=env(), timeout=300
    )


@pytest.mark.torch
@pytest.mark.parametrize("make", [_conv_record, _program_record])
def test_a_hostile_reproducer_runs_and_reports_no_departure(make, tmp_path):
    """The worst texts, run for real: exit 0 (torch agrees), no injected code ran."""
    pytest.importorskip("torch")
    texts = [HOSTILE[2] + HOSTILE[3] + HOSTILE[6] + HOSTILE[10]]
    for text in texts:
        path = write_reproducer(make(text), TORCH, tmp_path)
        proc = _run(path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "pwned" not in proc.stdout


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("make", [_conv_record, _program_record])
def test_every_hostile_reproducer_runs(make, tmp_path):
    pytest.importorskip("torch")
    for text in HOSTILE:
        path = write_reproducer(make(text), TORCH, tmp_path)
        proc = _run(path)
        assert proc.returncode == 0 and "pwned" not in proc.stdout, (text[:50], proc.stdout + proc.stderr)


def test_nan_rule_in_both_reproducer_kinds():
    import numpy as np

    from conformance import repro_oracle

    class A(dict):
        pass

    # the program reproducer's comparison is text: check the rule is there
    script = reproducer(_program_record("nan"), TORCH)
    assert "non-finite on one side" in script and "np.isnan(obs) & np.isnan(exp)" in script
    assert "non-finite on one side" in reproducer(_conv_record("nan"), TORCH)
    assert np is not None and repro_oracle is not None and A is not None
