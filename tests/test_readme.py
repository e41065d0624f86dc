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
    assert main_job.startswith("scripts/bootstrap.sh && ") and ".venv/bin/refgrad run --known" in main_job


def test_readmes_main_command_is_one_the_cli_accepts_with_the_shipped_known_file():
    from conformance.cli import _parser
    from conformance.known import SHIPPED, load_known

    main_job = _readme_commands()[0]
    argv = main_job.split(" && ", 1)[1].split()
    assert argv[0] == ".venv/bin/refgrad"
    args = _parser().parse_args(argv[1:])
    assert args.command == "run" and args.known == ["builtin"]
    assert load_known(args.known).files[0]["path"] == str(SHIPPED) and SHIPPED.is_file()


def test_bootstrap_installs_torch_before_the_project():
    script = (ROOT / "scripts" / "bootstrap.sh").read_text()
    assert script.index('"torch==2.13.0"') < script.index('".[all]"')
