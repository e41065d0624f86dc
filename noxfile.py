"""nox sessions for CI and development.

    nox -s tests      # the test suite (pytest, Hypothesis profile "ci")
    nox -s lint       # ruff check + ruff format --check
    nox -s bench_conv # the convolution benchmark (ratios against torch; not a timed test)

Each session installs torch==2.13.0 before the project, as on a CPU-only machine any other
spec pulls the CUDA build.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True
PYTHON = "3.11"


def _install(session: nox.Session, extras: str = "all") -> None:
    session.install("torch==2.13.0")
    session.install("-e", f".[{extras}]")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole suite; pass pytest arguments after --, e.g. nox -s tests -- -m 'not slow'."""
    _install(session)
    session.run("python", "-m", "pytest", "-n", "2", "-q", *session.posargs, env={"HYPOTHESIS_PROFILE": "ci"})


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.5")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def bench_conv(session: nox.Session) -> None:
    """Reference conv vs torch CPU float64, printed as ratios."""
    _install(session, "torch")
    session.run("python", "benchmarks/conv.py", *session.posargs)
