"""Campaigns: cases × frameworks × checks, each framework in a worker subprocess.

Each framework runs in its own worker (:mod:`conformance.worker`), reused across cases. A
request that kills the worker is recorded as ``crash`` and one that runs past the per-check
timeout as ``timeout``; either way the worker is restarted and the campaign goes on. Every
result is appended to ``results.jsonl`` (and flushed) as soon as it is known, so an
interrupted campaign loses nothing; ``resume=True`` skips every (case, framework, check)
already recorded there.
"""

from __future__ import annotations

import json
import os
import select
import signal
import struct
import subprocess
import sys
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

from conformance.case import Case, CaseData, save_case
from conformance.expected import expected as reference_expected
from conformance.expected import reference_rejects
from conformance.programs import PROGRAM_BOUND_FORMULA, program_bound, program_verdict, reference_outcome
from conformance.tolerance import (
    BOUND_FORMULA,
    FAILING,
    UNIT_ROUNDOFF,
    check_lengths,
    compute_dtype,
    explain,
    input_rounding_terms,
    judge,
    with_extra_terms,
)
from conformance.worker import _HEADER, write_frame

PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


class WorkerGone(Exception):
    """The worker died (verdict ``crash``) or timed out (``timeout``) during a request."""

    def __init__(self, verdict: str, reason: str):
        super().__init__(reason)
        self.verdict, self.reason = verdict, reason


class Worker:
    """One framework's subprocess; restarted on demand after a crash or a timeout."""

    def __init__(
        self, name, spec, device="cpu", precision="highest", log_dir=None, threads=1, startup_timeout=600.0
    ):
        self.name, self.spec, self.device, self.precision = name, spec, device, precision
        self.log_path = Path(log_dir or ".") / f"worker-{name}.log"
        self.threads, self.startup_timeout = threads, startup_timeout
        self.proc = None
        self.info = None
        self.restarts = -1
        self._log_mark = 0

    def _env(self) -> dict:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [PACKAGE_ROOT, os.getcwd()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if self.threads:
            for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "REFGRAD_THREADS"):
                env[var] = str(self.threads)
            env.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
        return env

    def start(self) -> dict:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "conformance.worker", self.spec, self.device, self.precision],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=self._env(),
            bufsize=0,
        )
        log.close()
        self.restarts += 1
        hello = self._receive(time.monotonic() + self.startup_timeout)
        if hello.get("status") != "ok":
            self.close()
            raise RuntimeError(
                f"{self.name} adapter failed to start: {hello.get('type')}: {hello.get('message')}"
            )
        self.info = hello
        return hello

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, message: dict) -> None:
        if not self.alive():
            self.start()
        self._log_mark = self.log_path.stat().st_size if self.log_path.exists() else 0
        try:
            write_frame(self.proc.stdin.fileno(), message)
        except (BrokenPipeError, OSError):
            pass  # it died; _receive reports the crash

    def receive(self, timeout: float) -> dict:
        return self._receive(time.monotonic() + timeout)

    def _receive(self, deadline: float) -> dict:
        fd = self.proc.stdout.fileno()
        buf = b""
        need = _HEADER.size
        header_done = False
        while len(buf) < need:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerGone("timeout", f"no answer within the time limit; {self.name} worker killed")
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, need - len(buf))
            if not chunk:
                raise WorkerGone("crash", self._death_reason())
            buf += chunk
            if not header_done and len(buf) == need:
                header_done = True
                need += struct.unpack("<Q", buf)[0]
        import pickle

        return pickle.loads(buf[_HEADER.size :])

    def _death_reason(self) -> str:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.returncode
        how = f"killed by {signal.Signals(-code).name}" if code and code < 0 else f"exited with status {code}"
        tail = ""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_mark)
                tail = f.read()[-1500:].decode(errors="replace").strip()
        except OSError:
            pass
        self.proc = None
        return f"{self.name} worker {how}" + (f"; its stderr ends: {tail}" if tail else "")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def close(self) -> None:
        if self.alive():
            try:
                write_frame(self.proc.stdin.fileno(), {"cmd": "exit"})
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def read_results(path) -> list[dict]:
    """Records of a results.jsonl; a torn last line (an interrupted write) is ignored."""
    records = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    except FileNotFoundError:
        pass
    return records


def result_key(record) -> tuple:
    """(case id, framework, check); a shrunk failure is a record of its own (it may repeat a case)."""
    key = (record["case_id"], record["framework"], record["check"])
    return key + ("shrunk",) if record.get("phase") == "shrunk" else key


class Campaign:
    """Runs cases on workers and appends results; use as a context manager."""

    def __init__(
        self,
        out_dir,
        frameworks: dict[str, str],
        *,
        device="cpu",
        precision="highest",
        timeout=120.0,
        resume=False,
        found_dir=None,
        progress=None,
        threads=1,
    ):
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.results_path = self.out / "results.jsonl"
        self.workers = {
            name: Worker(name, spec, device, precision, self.out / "logs", threads)
            for name, spec in frameworks.items()
        }
        self.device, self.precision, self.timeout = device, precision, timeout
        self.found_dir = Path(found_dir) if found_dir else self.out / "found"
        self.progress = progress or (lambda record: None)
        self.done = {}
        if resume:
            self.done = {result_key(r): r for r in read_results(self.results_path)}
            self._repair_torn_tail()
        elif self.results_path.exists():
            self.results_path.unlink()
        self._file = open(self.results_path, "a")
        self._expected = OrderedDict()
        self.framework_seconds = {name: 0.0 for name in frameworks}
        self.startup_errors = {}

    def _repair_torn_tail(self):
        if self.results_path.exists():
            data = self.results_path.read_bytes()
            if data and not data.endswith(b"\n"):
                self.results_path.write_bytes(data[: data.rfind(b"\n") + 1])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for w in self.workers.values():
            w.close()
        self._file.close()

    # -- frameworks --------------------------------------------------------------------------
    def start(self) -> dict:
        """Start every worker; a framework that cannot start is dropped with its reason."""
        for name, w in list(self.workers.items()):
            try:
                w.start()
            except (RuntimeError, WorkerGone) as exc:
                self.startup_errors[name] = str(exc)
                del self.workers[name]
        return self.frameworks_info()

    def frameworks_info(self) -> dict:
        info = {
            name: {
                "version": w.info["version"],
                "settings": w.info["settings"],
                "spec": w.spec,
                "worker_restarts": max(w.restarts, 0),
            }
            for name, w in self.workers.items()
            if w.info
        }
        for name, reason in self.startup_errors.items():
            info[name] = {"error": reason}
        return info

    # -- recording ---------------------------------------------------------------------------
    def record(self, rec: dict) -> dict:
        key = result_key(rec)
        if key in self.done:
            return self.done[key]
        self.done[key] = rec
        self._file.write(json.dumps(rec) + "\n")
        self._file.flush()
        self.progress(rec)
        return rec

    # -- the reference side -----------------------------------------------------------------
    def _reference(self, case: Case, check: str):
        """('rejects', message) | ('ok', expected) | ('broken', message) — cached per case."""
        key = (case.id, check)
        if key in self._expected:
            self._expected.move_to_end(key)
            return self._expected[key]
        rejected = None if case.op == "program" else reference_rejects(case)
        if case.op == "program":
            value = reference_outcome(case)
        elif rejected:
            value = ("rejects", rejected)
        elif check == "error":
            value = ("ok", None)
        else:
            try:
                value = ("ok", reference_expected(case, check, CaseData(case)))
            except Exception as exc:  # a bug in the reference itself: never blamed on a framework
                value = ("broken", f"the reference raised {type(exc).__name__}: {exc}")
        self._expected[key] = value
        while len(self._expected) > 256:
            self._expected.popitem(last=False)
        return value

    def _bound(self, case: Case, check: str, tf32: bool) -> dict:
        if case.op == "program":
            return self._program_bound(case)
        if case.op != "conv":  # an op record: the derived bound, filled in by record_verdict
            from conformance.tolerance import ERROR_MODEL_FORMULA

            return {
                "formula": ERROR_MODEL_FORMULA,
                "compute_dtype": case.dtype,
                "u": UNIT_ROUNDOFF[case.dtype],
            }
        dtype = compute_dtype(case.dtype, tf32)
        bound = {"formula": BOUND_FORMULA, "compute_dtype": dtype, "u": UNIT_ROUNDOFF[dtype]}
        if check != "error" and not reference_rejects(case):
            extra = input_rounding_terms(dtype)
            bound["K"] = {name: k + extra for name, k in check_lengths(case, check).items()}
        return bound

    def _program_bound(self, case: Case) -> dict:
        bound = {"formula": PROGRAM_BOUND_FORMULA, "compute_dtype": "float64", "u": UNIT_ROUNDOFF["float64"]}
        status, value = self._reference(case, "program")
        if status == "ok":
            K, M = program_bound(case.source, value)
            bound.update(K={"all": K}, M=M)
        return bound

    # -- running -----------------------------------------------------------------------------
    def run_check(self, case: Case, check: str, frameworks=None, phase="campaign", record=True) -> list[dict]:
        """Run one check of one case on several frameworks in parallel; return the records."""
        names = [n for n in (frameworks or self.workers) if n in self.workers]
        pending = [n for n in names if (case.id, n, check) not in self.done]
        message = {"cmd": "run", "case": case.to_dict(), "check": check, "source": case.id}
        sent, unstarted = {}, {}
        for name in pending:
            try:
                self.workers[name].send(message)
            except (RuntimeError, WorkerGone) as exc:  # a worker that died could not be restarted
                unstarted[name] = {"status": "crash", "reason": f"the {name} worker could not restart: {exc}"}
            sent[name] = time.monotonic()
        reference = self._reference(case, check) if pending else None
        out = []
        for name in names:
            if name not in sent:
                out.append(self.done[(case.id, name, check)])
                continue
            worker = self.workers[name]
            try:
                reply = unstarted.get(name) or worker.receive(
                    max(self.timeout - (time.monotonic() - sent[name]), 0.01)
                )
            except WorkerGone as gone:
                reply = {"status": gone.verdict, "reason": gone.reason}
            rec = self._verdict(case, check, name, reply, reference, phase)
            out.append(self.record(rec) if record else rec)
        return out

    def _verdict(self, case, check, name, reply, reference, phase) -> dict:
        worker = self.workers[name]
        tf32 = bool(worker.info and worker.info["settings"].get("tf32"))
        seconds = reply.get("seconds", 0.0)
        self.framework_seconds[name] += seconds
        rec = {
            "case_id": case.id,
            "framework": name,
            "check": check,
            "verdict": None,
            "phase": phase,
            "dtype": case.dtype,
            "config": case.describe(),
            "max_ratio": None,
            "bound": self._bound(case, check, tf32),
            "seconds": round(seconds, 6),
            "version": worker.info["version"] if worker.info else None,
            "case": case.to_dict(),
        }
        status = reply["status"]
        ref_status, ref_value = reference
        if status in ("crash", "timeout", "unsupported"):
            return {**rec, "verdict": status, "reason": reply["reason"]}
        if status == "harness_error":
            return {**rec, "verdict": "crash", "reason": f"harness error in the worker: {reply['message']}"}
        if ref_status == "broken":
            return {**rec, "verdict": "crash", "reason": ref_value}
        if case.op == "program":
            return {**rec, **program_verdict(case, (ref_status, ref_value), reply, name, rec["bound"]["u"])}
        if case.op != "conv" and status == "ok" and check != "error":  # an op record (conformance.ops)
            from conformance.ops.judge import record_verdict

            settings = worker.info["settings"] if worker.info else {}
            return {**rec, **record_verdict(case, check, name, reply["outputs"], settings)}
        if ref_status == "rejects":
            if status == "error":
                return {
                    **rec,
                    "verdict": "pass",
                    "reason": f"both reject: reference: {ref_value}; "
                    f"{name}: {reply['type']}: {reply['message'][:300]}",
                }
            return {
                **rec,
                "verdict": "error_mismatch",
                "reason": f"the reference rejects this configuration ({ref_value}) but {name} accepted it",
            }
        if status == "error":
            return {
                **rec,
                "verdict": "error_mismatch",
                "reason": f"{name} raised {reply['type']}: {_squeeze(reply['message'])} "
                "(the reference accepts this configuration)",
            }
        if check == "error":
            return {**rec, "verdict": "pass", "reason": "both accept"}
        extra = input_rounding_terms(rec["bound"]["compute_dtype"])
        judged = judge(reply["outputs"], with_extra_terms(ref_value, extra), rec["bound"]["u"])
        rec.update(verdict=judged["verdict"], max_ratio=judged["max_ratio"], worst=judged["worst"])
        if judged["verdict"] != "pass":
            rec["reason"] = explain(judged, f"{name} {check} {case.describe()}")
            if judged.get("failing_elements"):
                rec["failing_elements"] = judged["failing_elements"]
        return rec

    def run_cases(self, cases, checks=None, phase="campaign") -> list[dict]:
        out = []
        for case in cases:
            for check in case.checks:
                if checks is None or check in checks:
                    out.extend(self.run_check(case, check, phase=phase))
        return out

    # -- fuzzing -----------------------------------------------------------------------------
    def fuzz(
        self, frameworks, check: str, strategy, max_examples: int, seed: int = 0, max_shrinks: int = 2
    ) -> list[dict]:
        """Hypothesis-driven fuzzing of one check on one or more frameworks; returns the shrunk failures.

        Generation runs the whole budget, sends each example to every framework at once and
        records every result (a failure does not stop it). Then, for each framework and each
        distinct kind of failure (up to ``max_shrinks``), Hypothesis replays the same seeded
        generation (answered from the recorded results) up to the first example of that kind and
        shrinks it on that framework; shrink steps are not recorded. The minimal case is saved
        as JSON to the found directory and recorded with phase ``shrunk``.
        """
        frameworks = [frameworks] if isinstance(frameworks, str) else list(frameworks)
        kinds = {name: [] for name in frameworks}

        def generate(case):
            for rec in self.run_check(case.with_checks([check]), check, frameworks, phase="fuzz"):
                kind = _failure_kind(rec)
                if kind and kind not in kinds[rec["framework"]]:
                    kinds[rec["framework"]].append(kind)

        try:
            _hypothesis(generate, strategy, max_examples, seed, shrink=False)()
        except Exception as exc:  # the campaign goes on; the problem is a result of its own
            for name in frameworks:
                self.record(
                    {
                        "case_id": f"fuzz-{name}-{check}",
                        "framework": name,
                        "check": check,
                        "verdict": "crash",
                        "phase": "fuzz",
                        "dtype": None,
                        "config": "",
                        "max_ratio": None,
                        "bound": {"formula": BOUND_FORMULA},
                        "seconds": 0.0,
                        "case": None,
                        "reason": f"the fuzz loop stopped: {type(exc).__name__}: {exc}",
                    }
                )
        shrunk = []
        for name in frameworks:

            def run_one(case, record, name=name):
                case = case.with_checks([check])
                return case, self.run_check(case, check, [name], phase="fuzz", record=record)[0]

            for kind in kinds[name][:max_shrinks]:
                last = self._shrink(run_one, kind, strategy, max_examples, seed)
                if last:
                    case, rec = last
                    note = f"found by fuzzing: {name} {check} {rec['verdict']}: {rec.get('reason', '')[:200]}"
                    path = save_case(replace(case, description=note), self.found_dir)
                    shrunk.append(self.record({**rec, "phase": "shrunk", "found": str(path)}))
        return shrunk

    @staticmethod
    def _shrink(run_one, kind, strategy, max_examples, seed) -> list:
        """The smallest case Hypothesis finds with this kind of failure ([] if none)."""
        last, seen = [], {}

        def prop(case):
            if case.id not in seen:  # a framework may not answer the same way twice: ask once
                seen[case.id] = run_one(case, False)
            case, rec = seen[case.id]
            if _failure_kind(rec) == kind:
                if not last or _size(case) <= _size(last[0]):
                    last[:] = [case, rec]
                raise _Shrinking(kind)

        try:
            _hypothesis(prop, strategy, max_examples, seed, shrink=True)()
        except Exception:  # _Shrinking, or Hypothesis giving up (flaky, ...): keep the smallest seen
            pass
        return last


def _size(case) -> tuple:
    """A size order for cases (fewer elements first), to keep the smallest failing one."""
    import math

    if case.op == "program":  # fewer lines first, then fewer input elements
        return (case.source.count("\n"), sum(math.prod(s) for s in case.shapes.values()), case.source)
    if case.op != "conv":  # an op record: fewer elements first
        return (sum(math.prod(s) for s in case.shapes.values()), case.to_json())
    return (math.prod(case.shapes["input"]) + math.prod(case.shapes["weight"]), case.to_json())


class _Shrinking(Exception):
    """Raised by the shrink property so that Hypothesis shrinks towards a smaller example."""


def _failure_kind(rec) -> str | None:
    """What kind of failure a record is (None when it is not one worth shrinking)."""
    verdict = rec["verdict"]
    if verdict not in ("fail", "error_mismatch", "crash"):
        return None
    reason = rec.get("reason", "")
    if verdict == "fail":
        detail = "shape" if "has shape" in reason else (rec.get("worst") or {}).get("output", "values")
    elif verdict == "error_mismatch":
        detail = "accepts" if "accepted it" in reason else reason.split(" raised ")[-1].split(":")[0]
    else:
        detail = ""
    return f"{verdict}:{detail}"


def _hypothesis(test, strategy, max_examples, seed, shrink):
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hypothesis_seed

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return hypothesis_seed(seed)(
        settings(
            max_examples=max_examples,
            database=None,
            deadline=None,
            derandomize=False,
            phases=phases,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
            verbosity=Verbosity.quiet,
            print_blob=False,
        )(given(strategy)(test))
    )


def _squeeze(message: str, limit: int = 600) -> str:
    """A framework's error message shortened for a record: its head and its (usually telling) tail."""
    message = " ".join(message.split())
    return message if len(message) <= limit else f"{message[:150]} ... {message[-(limit - 150) :]}"


def failed(records) -> bool:
    return any(r["verdict"] in FAILING for r in records)
