"""nox sessions for CI and development.

    nox -s tests                  # the test suite (pytest, Hypothesis profile "ci")
    nox -s slow                   # the tests marked slow (CI's README command leaves them out)
    nox -s lint                   # ruff check + ruff format --check
    nox -s conformance-torch      # one campaign per framework and version (FRAMEWORK_VERSIONS):
    nox -s conformance-tensorflow
    nox -s conformance-jax
    nox -s conformance-torch-compile        # execution modes: torch.compile (Inductor), also
    nox -s conformance-torch-aot-eager      #   -torch-aot-eager, -jax-eager, -tensorflow-function,
    nox -s conformance-tensorflow-xla       #   -tensorflow-xla (docs/conformance.md, "Execution modes")
    nox -s conformance-programs   # autograd programs (views, in-place, second order), all frameworks
    nox -s fuzz                   # a long campaign on every framework; shrunk failures to reports/fuzz/found/
    nox -s report -- DIR          # re-render report.json and index.html from DIR/results.jsonl
    nox -s matrix                 # one table over the version matrix's runs: version x op family x verdict
    nox -s bench_conv             # the convolution benchmark (ratios against torch; not a timed test)
    nox -s bench_autograd         # reference autograd per-op overhead vs torch eager (not a timed test)
    nox -s bench_vmap             # per-sample gradients: vmap(grad) vs loop vs torch.func

Each session installs torch==2.13.0 before the project, as on a CPU-only machine any other
spec pulls the CUDA build.
"""

from __future__ import annotations

from pathlib import Path

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
def slow(session: nox.Session) -> None:
    """The long tests CI leaves out: every OpInfo sample and check, every record in every dtype, the
    random-kill fault injection."""
    _install(session)
    session.run(
        "python",
        "-m",
        "pytest",
        "-n",
        "2",
        "-q",
        "-m",
        "slow",
        *session.posargs,
        env={"HYPOTHESIS_PROFILE": "ci"},
    )


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


@nox.session(python=PYTHON)
def bench_autograd(session: nox.Session) -> None:
    """Reference autograd per-op overhead vs torch eager, printed as a ratio."""
    _install(session, "torch")
    session.run("python", "benchmarks/autograd.py", *session.posargs)


@nox.session(python=PYTHON)
def bench_vmap(session: nox.Session) -> None:
    """Per-sample gradients: reference vmap(grad) vs the loop over samples vs torch.func."""
    _install(session, "torch")
    session.run("python", "benchmarks/vmap.py", *session.posargs)


# The version matrix, oldest first: the newest release and an older one that installs on Python
# 3.11 with refgrad's dependencies (checked with `uv pip install --dry-run`, then run): jax 0.4.30 is
# the project's floor and the first jaxlib with NumPy 2 wheels (jax 0.4.20 installs with numpy<2 but
# the JAX adapter does not start on it); tensorflow-cpu 2.16.2 is the project's floor (extras:
# tensorflow-cpu>=2.16, the first with Keras 3). Older TensorFlow: 2.12 needs numpy<1.24 and 2.14
# pins ml-dtypes 0.2.0, both below refgrad's floors; 2.13.1 installs and runs (conformance bisect
# used it, docs/ci.md). torch: 2.13.0 only, the one CPU wheel this machine's index serves;
# README.md ("Version matrix and bisection") says how to add one.
# `nox -s matrix` prints the verdict counts of every version side by side.
FRAMEWORK_VERSIONS = {
    "torch": ["2.13.0"],
    "tensorflow": ["2.16.2", "2.21.0"],
    "jax": ["0.4.30", "0.10.2"],
}
PIP_NAME = {"torch": "torch", "tensorflow": "tensorflow-cpu", "jax": "jax[cpu]"}
# extra pip arguments for a framework, e.g. torch's CPU wheel index on a machine that reaches it:
# {"torch": ["--index-url", "https://download.pytorch.org/whl/cpu"]}
INDEX_ARGS: dict[str, list[str]] = {}


def _conformance(session: nox.Session, framework: str, version: str, mode: str | None = None) -> None:
    # the framework first (torch: the CPU build), then the project without its extras
    session.install(f"{PIP_NAME[framework]}=={version}", *INDEX_ARGS.get(framework, []))
    session.install("-e", ".")
    name = f"{framework}:{mode}" if mode else framework
    out = f"reports/{framework}-{mode}-{version}" if mode else f"reports/{framework}-{version}"
    # a gate: the known departures refgrad ships (--known builtin: refgrad/cases/known_departures.toml)
    # are 'known', so exit 1 means a departure nobody listed, or a listed one that is gone (stale);
    # docs/ci.md. Shrunk failures go to OUT/found.
    session.run(
        "refgrad",
        "run",
        "--frameworks",
        name,
        "--known",
        "builtin",
        "--junit-xml",
        f"{out}/junit.xml",
        "--out",
        out,
        *session.posargs,
    )


@nox.session(python=PYTHON, name="conformance-torch")
@nox.parametrize("version", FRAMEWORK_VERSIONS["torch"])
def conformance_torch(session: nox.Session, version: str) -> None:
    _conformance(session, "torch", version)


@nox.session(python=PYTHON, name="conformance-tensorflow")
@nox.parametrize("version", FRAMEWORK_VERSIONS["tensorflow"])
def conformance_tensorflow(session: nox.Session, version: str) -> None:
    _conformance(session, "tensorflow", version)


@nox.session(python=PYTHON, name="conformance-jax")
@nox.parametrize("version", FRAMEWORK_VERSIONS["jax"])
def conformance_jax(session: nox.Session, version: str) -> None:
    _conformance(session, "jax", version)


# execution modes (framework:mode): one campaign each, compile time apart from run time in the results;
# a compiling mode's default fuzz budget is smaller (conformance.cli.MODE_MAX_EXAMPLES)
MODE_SESSIONS = {
    "conformance-torch-compile": ("torch", "compile"),
    "conformance-torch-aot-eager": ("torch", "aot_eager"),
    "conformance-jax-eager": ("jax", "eager"),
    "conformance-tensorflow-function": ("tensorflow", "function"),
    "conformance-tensorflow-xla": ("tensorflow", "xla"),
}


def _mode_session(session_name: str, framework: str, mode: str):
    @nox.session(python=PYTHON, name=session_name)
    @nox.parametrize("version", FRAMEWORK_VERSIONS[framework][-1:])  # the newest only
    def run(session: nox.Session, version: str) -> None:
        _conformance(session, framework, version, mode)

    run.__doc__ = f"A conformance campaign of {framework}:{mode}."
    return run


for _name, (_framework, _mode) in MODE_SESSIONS.items():
    globals()[_name.replace("-", "_")] = _mode_session(_name, _framework, _mode)


@nox.session(python=PYTHON, name="conformance-programs")
def conformance_programs(session: nox.Session) -> None:
    """Autograd programs (views, in-place, second order) on every framework."""
    _install(session)
    session.run(
        "refgrad",
        "run",
        "--ops",
        "programs",
        "--max-examples",
        "100",
        "--out",
        "reports/programs",
        *session.posargs,
        success_codes=[0, 1],
    )


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """A long campaign on every framework; shrunk failures go to reports/fuzz/found/ (to make one a
    curated case, copy it into refgrad/cases/, or pass --found-dir refgrad/cases/found)."""
    _install(session)
    session.run(
        "refgrad",
        "run",
        "--max-examples",
        "500",
        "--out",
        "reports/fuzz",
        *session.posargs,
        success_codes=[0, 1],
    )


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Re-render report.json and index.html from a results directory (default reports/latest)."""
    session.install("-e", ".")
    session.run("refgrad", "report", *(session.posargs or ["reports/latest"]), success_codes=[0, 1])


@nox.session(python=PYTHON)
def matrix(session: nox.Session) -> None:
    """The version matrix's verdict counts, one table: framework version x op family x verdict.

    nox -s conformance-jax conformance-tensorflow conformance-torch; nox -s matrix
    (or name the run directories: nox -s matrix -- reports/jax-0.4.30 reports/jax-0.10.2)"""
    session.install("-e", ".")
    # every run directory, also one whose results file is empty or missing (a manifest.json says it
    # is a run's): conformance matrix lists it as empty and exits 4 rather than dropping its column
    dirs = session.posargs or sorted(
        str(p)
        for p in Path("reports").glob("*-*")
        if p.is_dir()
        and "bisect" not in p.name
        and ((p / "results.jsonl").exists() or (p / "manifest.json").exists())
    )
    if not dirs:
        session.error("no run directories under reports/: run the conformance-* sessions first")
    # exits like refgrad report: 1 a departure the known list lacks, 4 an input that judged nothing
    session.run("refgrad", "matrix", *dirs, "--known", "builtin")
