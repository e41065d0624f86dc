"""``conformance bisect``: which released version of a framework changed a case's verdict.

    conformance bisect error-kernel-larger-than-input --framework jax --versions 0.4.30..0.10.2

1. The released versions in the range come from the package index (``pip index versions``, which
   lists only the versions with a distribution this interpreter can install; pre-releases left out).
2. Each version tested gets a virtual environment of its own, built once with ``uv`` and cached
   under ``$REFGRAD_ENV_CACHE`` (default ``$XDG_CACHE_HOME/refgrad/envs``, i.e.
   ``~/.cache/refgrad/envs``) as ``<framework>-<version>``: the framework at that version, the
   project's runtime dependencies (pyproject.toml) and refgrad itself as an editable install of
   this checkout (``uv pip install -e ROOT --no-deps``). An environment is complete only once its
   marker file is written, so a half-built one (an interrupted or failed install) is rebuilt, never
   used. A later bisection reuses every complete environment without installing anything.
3. In each environment the case runs through ``conformance replay`` with that environment's
   Python (one subprocess), into ``OUT/<framework>-<version>/``; the case's verdict is the most
   serious of its results (tolerance.SEVERITY).
4. The search tests both ends first. The same verdict at both ends: there is nothing to bisect
   (exit 2). Otherwise a binary search keeps ``lo`` with the first end's verdict ("good") and ``hi``
   with another ("bad") until they are adjacent: ceil(log2(n)) installs for n versions, and it
   always ends on an adjacent pair whose verdicts differ, also when the verdicts are not monotone
   (it finds *a* change, not necessarily the only one). A version that does not install (or whose
   replay judges nothing) in the middle is skipped, as ``git bisect skip`` does, and the next
   candidate nearest the middle is tried; if every version between two tested ones was skipped the
   answer names them.

Bad input (an unknown framework, a malformed range, a bad ``--timeout``, an ``--out`` or ``--cache``
that is not a usable directory, a case that cannot be read, a version the index does not have, an
end of the range that does not install) is a :class:`BisectError` naming the flag, the value and the
rule (exit 2). Every argument and the case are checked before the package index is asked and
before any environment is built. A package index that cannot be reached is reported as such, never
as a version "not released". Nothing recorded is lost: cached environments are only ever added, and a replay's earlier
results in OUT are moved aside by ``replay --overwrite``, never deleted.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from conformance import exitcodes, shipped
from conformance.case import CaseError
from conformance.identity import load_case_files
from conformance.outdir import OutputError, check_writable
from conformance.runner import check_timeout
from conformance.tolerance import SEVERITY

# --framework -> the distribution(s) to install at version V ({v}); the package index name listed
FRAMEWORKS = {
    "jax": {"index_name": "jax", "specs": ["jax[cpu]=={v}"]},
    "tensorflow": {"index_name": "tensorflow-cpu", "specs": ["tensorflow-cpu=={v}"]},
    "torch": {"index_name": "torch", "specs": ["torch=={v}"]},
}
MARKER = "refgrad-env.json"
PROJECT_ROOT = Path(__file__).resolve().parents[1]
# a case's verdict: its most serious result's (SEVERITY); a framework's answer judged, or not
JUDGED = ("crash", "timeout", "fail", "error_mismatch", "convention", "pass")


class BisectError(Exception):
    """Bad input: names the flag (or the case), the value and the rule. Exit 2."""


class Untestable(Exception):
    """This version could not be judged (it does not install, or its replay judged nothing)."""


class EndUntestable(Exception):
    """An end of the range could not be judged: the range cannot be bisected as given."""

    def __init__(self, version: str, why: str):
        super().__init__(why)
        self.version, self.why = version, why


@dataclass
class Outcome:
    """A version's verdict on the case, with the first result's reason and where the results are."""

    verdict: str
    reason: str = ""
    results: str = ""
    framework_version: str = ""


@dataclass
class Bisection:
    """The search's answer: ``last_good``/``first_bad`` are versions (None when not found)."""

    versions: list[str]
    tested: dict[str, Outcome] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # version -> why it could not be tested
    last_good: str | None = None
    first_bad: str | None = None
    same: bool = False  # both ends have the same verdict: nothing to bisect

    def between(self) -> list[str]:
        """Versions strictly between the answer's two, all skipped (empty for an exact answer)."""
        if self.last_good is None or self.first_bad is None:
            return []
        i, j = self.versions.index(self.last_good), self.versions.index(self.first_bad)
        return self.versions[i + 1 : j]


# ---- versions --------------------------------------------------------------------------------------
def parse_range(value: str) -> tuple[str, str]:
    """``A..B`` with A and B PEP 440 versions, A < B; a BisectError naming --versions otherwise."""
    from packaging.version import InvalidVersion, Version

    rule = "expected A..B, two released versions with A older than B (e.g. 0.9.0..0.10.2)"
    parts = value.split("..")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise BisectError(f"--versions: {value!r} is not a range: {rule}")
    a, b = (p.strip() for p in parts)
    for end in (a, b):
        try:
            Version(end)
        except InvalidVersion:
            raise BisectError(f"--versions: {end!r} in {value!r} is not a version number: {rule}") from None
    if Version(a) >= Version(b):
        raise BisectError(f"--versions: {value!r}: {a} is not older than {b}: {rule}")
    return a, b


def versions_in_range(available: list[str], a: str, b: str, framework: str) -> list[str]:
    """The released versions from a to b (both included), oldest first; both ends must exist."""
    from packaging.version import InvalidVersion, Version

    released, seen = [], set()
    for v in available:
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        # "2.5.0+cpu" on torch's CPU index is release 2.5.0 (torch==2.5.0 installs it)
        parsed = Version(parsed.public)
        if not parsed.is_prerelease and not parsed.is_devrelease and parsed not in seen:
            seen.add(parsed)
            released.append((parsed, str(parsed)))
    released.sort()
    names = {p: v for p, v in released}
    for end in (a, b):
        if Version(end) not in names and getattr(available, "unreachable", None):
            raise BisectError(
                f"--versions: {end} is not in the listing of {FRAMEWORKS[framework]['index_name']} because "
                f"a package index could not be reached ({available.unreachable}); it may well be released: "
                "check the network, or pass --index-url"
            )
        if Version(end) not in names:
            near = ", ".join(v for _, v in released[-8:])
            raise BisectError(
                f"--versions: {end} is not a released version of {FRAMEWORKS[framework]['index_name']} "
                f"installable here (the package index lists {len(released)}; the newest: {near})"
            )
    return [v for p, v in released if Version(a) <= p <= Version(b)]


class Listing(list):
    """The versions an index listing offered; ``unreachable``: why an index could not be read (or None)."""

    unreachable: str | None = None


# pip's words for an index it could not read (its last retry failing, or the page not fetched)
UNREACHABLE = re.compile(
    r"Retry\(total=0\b.*|Could not fetch URL.*|.*(?:Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable).*"
)


def _unreachable(stderr: str) -> str | None:
    """The first line of pip's output saying an index could not be reached, shortened (None if none)."""
    for line in (stderr or "").splitlines():
        if UNREACHABLE.search(line):
            why = re.search(
                r"(Failed to establish[^\"')]*|Could not fetch URL [^ :]*|[^'\"(]*resolution)", line
            )
            host = re.search(r"host='([^']*)', port=(\d+)", line)
            text = (why.group(1) if why else line).strip()
            return (f"{host.group(1)}:{host.group(2)}: {text}" if host else text)[:200]
    return None


def index_versions(framework: str, python: str | None = None, index_url: str | None = None) -> list[str]:
    """Versions of the framework's distribution the package index offers for ``python``.

    An index that could not be reached is a BisectError saying so when nothing was listed; when
    other indexes (pip's extra indexes, find-links) listed some versions, the returned
    :class:`Listing` carries why in ``unreachable`` so that a missing end is not called unreleased."""
    name = FRAMEWORKS[framework]["index_name"]
    cmd = [python or sys.executable, "-m", "pip", "index", "versions", name, "--disable-pip-version-check"]
    if index_url:
        cmd += ["--index-url", index_url]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BisectError(f"--framework {framework}: cannot list the versions of {name}: {exc}") from None
    m = re.search(r"Available versions:\s*(.+)", proc.stdout)
    unreachable = _unreachable(proc.stderr)
    if (proc.returncode or not m) and unreachable:
        where = f"--index-url {index_url}" if index_url else "the package index"
        raise BisectError(
            f"--framework {framework}: {where} could not be reached to list the versions of {name} "
            f"({unreachable}); check the network, or pass --index-url"
        )
    if proc.returncode or not m:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BisectError(
            f"--framework {framework}: the package index lists no versions of {name} "
            f"(pip index versions: {tail[0]})"
        )
    listing = Listing(v.strip() for v in m.group(1).split(",") if v.strip())
    listing.unreachable = unreachable
    return listing


# ---- the search ------------------------------------------------------------------------------------
def search(versions: list[str], evaluate: Callable[[str], Outcome], log=None) -> Bisection:
    """Bisect ``versions`` (oldest first) for a verdict change; ``evaluate`` raises Untestable.

    Both ends must be testable (EndUntestable otherwise). ``log(version, outcome_or_reason)``
    is called after each evaluation."""
    result = Bisection(list(versions))

    def test(v):
        try:
            out = evaluate(v)
        except Untestable as exc:
            result.skipped[v] = str(exc)
            if log:
                log(v, None, str(exc))
            raise
        result.tested[v] = out
        if log:
            log(v, out, None)
        return out

    first, last = versions[0], versions[-1]
    ends = []
    for v in (first, last):
        try:
            ends.append(test(v).verdict)
        except Untestable as exc:
            raise EndUntestable(v, str(exc)) from None
    good = ends[0]
    if ends[1] == good:
        result.same = True
        return result
    lo, hi = 0, len(versions) - 1
    while True:
        candidates = [i for i in range(lo + 1, hi) if versions[i] not in result.skipped]
        if not candidates:
            break
        mid = (lo + hi) // 2
        i = min(candidates, key=lambda k: (abs(k - mid), k))
        try:
            verdict = test(versions[i]).verdict
        except Untestable:
            continue
        if verdict == good:
            lo = i
        else:
            hi = i
    result.last_good, result.first_bad = versions[lo], versions[hi]
    return result


# ---- environments ----------------------------------------------------------------------------------
def cache_root() -> Path:
    if os.environ.get("REFGRAD_ENV_CACHE"):
        return Path(os.environ["REFGRAD_ENV_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "refgrad" / "envs"


def find_uv() -> str:
    """uv: $REFGRAD_UV, beside this Python, or on PATH."""
    for cand in (os.environ.get("REFGRAD_UV"), str(Path(sys.executable).parent / "uv"), shutil.which("uv")):
        if cand and Path(cand).is_file() and os.access(cand, os.X_OK):
            return cand
    raise BisectError(
        "bisect: needs uv (https://docs.astral.sh/uv/) on PATH or beside this Python; none found: "
        "install refgrad's bisect extra (pip install 'refgrad[bisect]'), or set REFGRAD_UV to a uv binary"
    )


def runtime_dependencies(root: Path = PROJECT_ROOT) -> list[str]:
    """The project's [project].dependencies from pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads((root / "pyproject.toml").read_text())
    return list(data["project"]["dependencies"])


class UvInstaller:
    """Cached environments ``cache/<framework>-<version>``, each built once with uv.

    ``install(version)`` returns the environment's Python; it raises Untestable (with uv's last
    lines) when the version does not install. ``installs`` counts the environments built here."""

    def __init__(
        self,
        framework: str,
        cache: Path | None = None,
        python: str | None = None,
        index_url: str | None = None,
        root: Path = PROJECT_ROOT,
        log=None,
        extra=(),
    ):
        self.framework, self.cache = framework, Path(cache or cache_root())
        self.extra = list(extra)  # --with: more requirements, e.g. numpy<2 for an old jaxlib
        self.python, self.index_url, self.root = python or sys.executable, index_url, Path(root)
        self.uv = find_uv()
        self.installs = 0
        self.log = log or (lambda msg: None)

    def env_dir(self, version: str) -> Path:
        name = f"{self.framework}-{version}"
        if self.extra:  # another set of requirements: another environment
            import hashlib

            name += "-with-" + hashlib.sha256("\n".join(sorted(self.extra)).encode()).hexdigest()[:8]
        return self.cache / name

    def _python(self, env: Path) -> Path:
        return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")

    def _uv(self, *args, timeout=1800):
        try:
            proc = subprocess.run([self.uv, *args], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return 124, f"uv {args[0]} timed out after {timeout} s"
        return proc.returncode, (proc.stderr or proc.stdout)

    def install(self, version: str) -> str:
        env = self.env_dir(version)
        marker = env / MARKER
        py = self._python(env)
        if marker.is_file() and py.exists():
            try:
                info = json.loads(marker.read_text())
            except (OSError, ValueError):
                info = {}
            if info.get("root") != str(self.root):  # another checkout: point the editable install here
                code, out = self._uv("pip", "install", "-q", "-p", str(py), "--no-deps", "-e", str(self.root))
                if code:
                    raise Untestable(f"re-pointing refgrad at {self.root} failed: {_tail(out)}")
                info["root"] = str(self.root)
                marker.write_text(json.dumps(info, indent=1))
            self.log(f"reusing {env}")
            return str(py)
        if env.exists():  # half-built (interrupted or failed before the marker): never used as is
            shutil.rmtree(env)
        self.cache.mkdir(parents=True, exist_ok=True)
        self.log(f"building {env} ({self.framework} {version}) with uv")
        self.installs += 1
        specs = [s.format(v=version) for s in FRAMEWORKS[self.framework]["specs"]]
        steps = [("venv", "-q", "-p", self.python, str(env))]
        if self.index_url:  # e.g. torch's CPU wheels: the framework from that index, the rest from PyPI
            steps.append(("pip", "install", "-q", "-p", str(py), "--index-url", self.index_url, *specs))
        deps = [*specs, *runtime_dependencies(self.root), *self.extra]
        steps.append(("pip", "install", "-q", "-p", str(py), *deps))
        steps.append(("pip", "install", "-q", "-p", str(py), "--no-deps", "-e", str(self.root)))
        for step in steps:
            code, out = self._uv(*step)
            if code:
                shutil.rmtree(env, ignore_errors=True)
                raise Untestable(f"{' '.join(specs)} does not install here: {_tail(out)}")
        info = {
            "framework": self.framework,
            "version": version,
            "specs": specs,
            "with": self.extra,
            "root": str(self.root),
            "python": self.python,
            "index_url": self.index_url,
            "created": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        }
        (env / MARKER).write_text(json.dumps(info, indent=1))
        return str(py)


def _tail(text: str, n: int = 3) -> str:
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "no output"


def case_verdict(records: list[dict]) -> Outcome:
    """The most serious verdict among a case's results (Untestable when none was judged)."""
    if not records:
        raise Untestable("the replay recorded no result")
    worst = min(records, key=lambda r: SEVERITY.index(r["verdict"]) if r["verdict"] in SEVERITY else 99)
    if worst["verdict"] not in JUDGED:
        raise Untestable(f"nothing judged: {worst['verdict']}: {(worst.get('reason') or '')[:200]}")
    return Outcome(worst["verdict"], (worst.get("reason") or "")[:300], "", worst.get("version") or "")


class Replayer:
    """Replays the case file with an environment's Python: ``conformance replay`` in a subprocess."""

    def __init__(self, framework: str, case_file: Path, out: Path, extra_args=(), timeout: float = 1800):
        self.framework, self.case_file, self.out = framework, Path(case_file).resolve(), Path(out).resolve()
        self.extra, self.timeout = list(extra_args), timeout

    def __call__(self, python: str, version: str) -> Outcome:
        out = self.out / f"{self.framework}-{version}"
        cmd = [python, "-m", "conformance", "replay", str(self.case_file), "--frameworks", self.framework]
        cmd += ["--out", str(out), "--quiet", "--overwrite", *self.extra]
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the env's own refgrad
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        try:
            # cwd: the output directory, so no ./conformance of the caller's shadows the environment's
            self.out.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=self.timeout, env=env, cwd=self.out
            )
        except subprocess.TimeoutExpired:
            raise Untestable(f"the replay took longer than {self.timeout:.0f} s") from None
        if proc.returncode not in (0, 1, 4):
            raise Untestable(f"the replay exited {proc.returncode}: {_tail(proc.stderr or proc.stdout)}")
        records = []
        results = out / "results.jsonl"
        if results.is_file():
            for line in results.read_text().splitlines():
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
        outcome = case_verdict([r for r in records if r.get("framework") == self.framework])
        outcome.results = str(results)
        return outcome


# ---- the case ----------------------------------------------------------------------------------------
def resolve_case(value: str, cases_dir: Path) -> dict:
    """The one case CASE names, as a JSON object:

    * a case file holding one case (``FILE#ID`` picks one case of a file holding several),
    * a reproducer a report wrote (``reproducers/*.py``): the case it embeds, its one check,
    * a case id among the curated cases (``cases_dir``, recursively, found/ included),
    * a result: ``RESULTS.jsonl#CASE_ID`` or ``DIR#CASE_ID`` (a run's directory), the case as the
      result recorded it."""

    path, _, want = value.partition("#")
    p = Path(path)
    if p.is_dir():
        if not (p / "results.jsonl").is_file():
            raise BisectError(
                f"CASE: {value!r}: {path} is a directory without a results.jsonl (not a run's --out): "
                "bisect takes a case file, a curated case id, a reproducer, or RESULTS.jsonl#CASE_ID / DIR#CASE_ID"
            )
        if not want:
            raise BisectError(f"CASE: {value!r}: a run's directory needs #CASE_ID (which result's case)")
        p = p / "results.jsonl"
    if p.suffix == ".py" and p.is_file():
        return _reproducer_case(p, value)
    if p.suffix == ".jsonl" and p.is_file():
        if not want:
            raise BisectError(f"CASE: {value!r}: a results file needs #CASE_ID (which result's case)")
        return _result_case(p, want, value)
    if p.is_file():
        try:
            cases, _ = load_case_files(p)
        except CaseError as exc:
            raise BisectError(f"CASE: {value!r}: {exc}") from None
        ids = ", ".join(str(c.id) for c in cases[:10]) + (", ..." if len(cases) > 10 else "")
        if want:
            cases = [c for c in cases if c.id == want]
            if not cases:
                raise BisectError(f"CASE: {value!r}: {p} holds no case with id {want!r} (its cases: {ids})")
        if len(cases) != 1:
            raise BisectError(
                f"CASE: {value!r} holds {len(cases)} matching cases; bisect takes one (FILE#ID picks one of: {ids})"
            )
        return _case_json(cases[0])
    if not want and not p.exists():  # a curated case id
        try:
            cases = load_case_files(cases_dir)[0] if cases_dir.is_dir() else []
        except CaseError as exc:
            raise BisectError(f"CASE: the curated cases in {cases_dir} do not load: {exc}") from None
        found = [c for c in cases if c.id == value]
        if found:
            return _case_json(found[0])
        raise BisectError(
            f"CASE: {value!r} is neither a case file, a case id in {cases_dir}, nor RESULTS.jsonl#CASE_ID"
        )
    if p.exists():  # a FIFO, a device: something that is neither a file nor a directory
        raise BisectError(f"CASE: {value!r}: {path} is not a regular file")
    raise BisectError(f"CASE: {value!r}: {path} does not exist")


def _result_case(path: Path, want: str, value: str) -> dict:
    """The case a results file recorded for case ``want`` (RESULTS.jsonl#CASE_ID)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BisectError(f"CASE: {value!r}: {path} cannot be read: {exc.strerror or exc}") from None
    if b"\x00" in data[:8192]:
        raise BisectError(f"CASE: {value!r}: {path} is a binary file, not a results.jsonl")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BisectError(
            f"CASE: {value!r}: {path} is not UTF-8 text (byte {exc.start}), not a results.jsonl"
        ) from None
    wrong = None
    for n, line in enumerate(text.splitlines(), 1):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict) or rec.get("case_id") != want:
            continue
        if isinstance(rec.get("case"), dict):
            return dict(rec["case"], id=want)
        wrong = wrong or f"line {n}: its 'case' is {_json_kind(rec.get('case'))}, not a JSON object"
    if wrong:
        raise BisectError(f"CASE: {value!r}: the results of case {want!r} in {path} hold no case ({wrong})")
    raise BisectError(f"CASE: {value!r}: no result of case {want!r} in {path}")


def _json_kind(value) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "missing"}
    return names.get(type(value), "a number")


def _reproducer_case(path: Path, value: str) -> dict:
    """The case a generated reproducer (``reproducers/*.py``) embeds, narrowed to its check."""
    import ast

    found = {}
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise BisectError(f"CASE: {value!r} is not a readable Python reproducer: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in ("CASE_JSON", "CHECK", "CASE_ID"):
                try:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    pass
    if not isinstance(found.get("CASE_JSON"), str):
        raise BisectError(f"CASE: {value!r} is not a refgrad reproducer (no CASE_JSON string in it)")
    try:
        case = json.loads(found["CASE_JSON"])
    except ValueError as exc:
        raise BisectError(f"CASE: {value!r}: its CASE_JSON is not valid JSON ({exc})") from None
    if not isinstance(case, dict):
        raise BisectError(f"CASE: {value!r}: its CASE_JSON is {_json_kind(case)}, not a case (a JSON object)")
    if isinstance(found.get("CHECK"), str):
        case["checks"] = [found["CHECK"]]
    if isinstance(found.get("CASE_ID"), str):
        case.setdefault("id", found["CASE_ID"])
    return case


def _case_json(case) -> dict:
    data = case.to_dict()
    data.setdefault("id", case.id)
    return data


# ---- the command -------------------------------------------------------------------------------------
def run_bisect(args, out=print) -> int:
    """``conformance bisect``; returns the exit code (BisectError propagates: exit 2)."""

    framework = args.framework
    if framework not in FRAMEWORKS:
        raise BisectError(f"--framework: {framework!r} is not one of {', '.join(FRAMEWORKS)}")
    a, b = parse_range(args.versions)
    timeout = None
    if getattr(args, "timeout", None) is not None:
        try:
            timeout = check_timeout(args.timeout)
        except ValueError as exc:
            raise BisectError(f"--timeout: {exc}") from None
    case = resolve_case(args.case, shipped.cases_dir())
    for flag, key in (("--checks", "checks"), ("--dtypes", "dtype")):
        wanted = getattr(args, flag[2:], None)
        have = case.get(key) if key == "checks" else [case.get(key)]
        if wanted and have and not {w.strip() for w in wanted.split(",")} & set(have):
            raise BisectError(
                f"{flag}: {wanted!r} selects nothing of case {case.get('id')!r} (its {key}: {have})"
            )
    outdir = Path(args.out or f"reports/bisect-{_safe(case.get('id') or 'case')}-{framework}")
    try:  # both directories usable before the index is asked or anything is built
        check_writable(outdir, "--out")
        if args.cache:
            check_writable(args.cache, "--cache")
        elif cache_root().exists() and not cache_root().is_dir():
            raise OutputError(f"the environment cache {str(cache_root())!r} (see --cache) is not a directory")
    except OutputError as exc:
        raise BisectError(str(exc)) from None
    versions = versions_in_range(index_versions(framework, args.python, args.index_url), a, b, framework)
    case_file = outdir / "case.json"
    case_file.write_text(json.dumps(case, indent=1))
    extra = []
    for flag in ("checks", "dtypes"):
        if getattr(args, flag, None):
            extra += [f"--{flag}", str(getattr(args, flag))]
    if timeout is not None:
        extra += ["--timeout", repr(timeout)]
    installer = UvInstaller(
        framework,
        args.cache and Path(args.cache),
        args.python,
        args.index_url,
        log=_stderr,
        extra=getattr(args, "with_", None) or (),
    )
    replayer = Replayer(framework, case_file, outdir, extra)
    out(
        f"bisect {case.get('id')} on {framework} {a}..{b}: {len(versions)} released versions; "
        f"environments in {installer.cache}"
    )

    def evaluate(v):
        return replayer(installer.install(v), v)

    def log(v, outcome, why):
        if outcome is not None:
            out(f"  {framework} {v:12s} {outcome.verdict:15s} {outcome.reason[:160]}")
        else:
            out(f"  {framework} {v:12s} {'skipped':15s} {why[:300]}")

    try:
        result = search(versions, evaluate, log)
    except EndUntestable as exc:
        raise BisectError(
            f"--versions: {exc.version} (an end of {args.versions}) cannot be tested, and both ends must be: "
            f"{exc.why}"
        ) from None
    summary = _summary(case, framework, args.versions, result, installer)
    _keep_earlier(outdir / "bisect.json")
    (outdir / "bisect.json").write_text(json.dumps(summary, indent=1))
    if result.same:
        v = result.tested[versions[0]].verdict
        out(
            f"same verdict at both ends: {framework} {versions[0]} and {versions[-1]} are both {v!r}: "
            "nothing to bisect (the change, if any, is outside this range)"
        )
        out(f"{installer.installs} environment(s) built; wrote {outdir / 'bisect.json'}")
        return exitcodes.USAGE
    good, bad = result.tested[result.last_good], result.tested[result.first_bad]
    out(
        f"last good: {framework} {result.last_good}: {good.verdict}"
        + (f" ({good.reason})" if good.reason else "")
    )
    out(
        f"first bad: {framework} {result.first_bad}: {bad.verdict}"
        + (f" ({bad.reason})" if bad.reason else "")
    )
    if result.between():
        out(f"  (the change is in one of these, which could not be tested: {', '.join(result.between())})")
    # "good" is the first end's verdict, whatever it is: say which way the change went
    if good.verdict == "pass":
        what = f"departs from {result.first_bad} on"
    elif bad.verdict == "pass":
        what = f"fixed in {result.first_bad}"
    else:
        what = f"changed in {result.first_bad}"
    out(f"the change: {good.verdict} -> {bad.verdict} ({framework} {what})")
    out(
        f"{len(result.tested)} of {len(versions)} versions tested, {installer.installs} environment(s) built, "
        f"{len(result.skipped)} skipped; wrote {outdir / 'bisect.json'}"
    )
    return exitcodes.OK


def _keep_earlier(path: Path) -> None:
    """An earlier bisection's summary in the same --out is renamed (bisect-<its time>.json), never lost."""
    if path.exists():
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(path.stat().st_mtime))
        target = path.with_name(f"bisect-{stamp}.json")
        n = 1
        while target.exists():
            target, n = path.with_name(f"bisect-{stamp}-{n}.json"), n + 1
        os.replace(path, target)


def _summary(case, framework, rng, result: Bisection, installer) -> dict:
    return {
        "case": case.get("id"),
        "framework": framework,
        "versions": rng,
        "candidates": result.versions,
        "same_verdict": result.same,
        "last_good": result.last_good,
        "first_bad": result.first_bad,
        "tested": {v: o.__dict__ for v, o in result.tested.items()},
        "skipped": result.skipped,
        "environments_built": installer.installs,
        "cache": str(installer.cache),
    }


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:80]


def _stderr(msg: str) -> None:
    print(f"conformance: {msg}", file=sys.stderr, flush=True)
