"""README's commands are the ones CI and users run."""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _readme_commands():
    block = re.search(r"## Quick start.*?```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S).group(1)
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_ci_runs_readmes_test_command():
    main_job, test_command = _readme_commands()
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci == test_command
    assert main_job.startswith("scripts/bootstrap.sh && ") and "conformance run" in main_job


def test_bootstrap_installs_torch_before_the_project():
    script = (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert script.index('"torch==2.13.0"') < script.index('".[all]"')
