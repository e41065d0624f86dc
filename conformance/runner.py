"""Campaigns: cases × frameworks × checks, each framework in a worker subprocess.

Each framework runs in its own worker (:mod:`conformance.worker`), reused across cases. A
request that kills the worker is recorded as ``crash``; one that runs past the per-check
timeout runs once more on a fresh worker, and only a second timeout is recorded as ``timeout``
(the result's ``retried`` keeps the first attempt); either way the worker is restarted and the
campaign goes on. A check is recorded once it has its verdict, so an interrupted retry is
asked again from its first attempt under ``--resume``. Every
result is appended to ``results.jsonl`` (and flushed) as soon as it is known, so an
interrupted campaign loses nothing; ``resume=True`` skips every (case, framework, check)
already recorded there.

Time limits are fair: a framework's deadline runs from the instant its worker starts the
framework's own work (the worker announces it, with the shared monotonic clock), so a worker
restart, data generation or the reference's own computation are never charged to it. The
reference side of a program case (a program is code) runs in a worker process of its own
with the same limit; its failures are ``reference_error`` results, never a framework's.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import select
import signal
import struct
import subprocess
import sys
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field, replace
from functools import singledispatchmethod
from pathlib import Path

import conformance.strategies  # noqa: F401 - turns Hypothesis's local constants off (seeded draws)
from conformance import budget as _budget
from conformance import interrupt
from conformance.amp import AUTOCAST_DOCS, low_dtype
from conformance.case import PART_DTYPE, Case, CaseData, ProgramCase, RecordCase, save_case
from conformance.expected import ReferenceClock, reference_rejects
from conformance.expected import expected as reference_expected
from conformance.identity import case_hash
from conformance.nonfinite import settle
from conformance.ops.judge import record_verdict
from conformance.outdir import OutputDir, OutputLost, ResultsWriter
from conformance.programs import (
    PROGRAM_BOUND_FORMULA,
    ProgramError,
    ProgramOutputs,
    program_precision,
    program_verdict,
)
from conformance.rerun import compare as rerun_compare
from conformance.resultsio import RESULTS_SCHEMA, read_results_file
from conformance.tolerance import (
    BOUND_FORMULA,
    ERROR_MODEL_FORMULA,
    FAILING,
    UNIT_ROUNDOFF,
    check_lengths,
    compute_dtype,
    explain,
    input_rounding_terms,
    judge,
    with_extra_terms,
)
from conformance.worker import _HEADER, REFERENCE_SPEC, write_frame

PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


# seconds allowed for an answer to arrive once its first bytes have (or once it is found waiting
# in the pipe after the deadline): the worker has finished by then; this only bounds a broken pipe
_TRANSFER_GRACE = 60.0

# the line with which a dying process says why: absl's fatal log line (a failed CHECK in TensorFlow
# or XLA: "F0000 00:00:... tensor.cc:896] Check failed: ..."), CPython's, the C++ runtime's
_FATAL_LINE = re.compile(rb"^(?:F\d{4} |Fatal Python error|terminate called).*$", re.M)


def crash_tail(written: bytes, limit: int = 1500) -> str:
    """What a worker wrote to stderr while the request that killed it ran, as its crash result
    quotes it: the last ``limit`` bytes, preceded by the last line that said why it died where
    those bytes begin after it (a stack trace longer than ``limit`` follows a failed check's line)."""
    tail = written[-limit:]
    cut = len(written) - len(tail)
    fatal = max(_FATAL_LINE.finditer(written), key=lambda line: line.start(), default=None)
    if fatal is not None and fatal.start() < cut:
        start = max(cut, fatal.end() + 1)
        if written[start - 1 : start] != b"\n" and b"\n" in written[start:]:  # from a whole line
            start = written.index(b"\n", start) + 1
        tail = fatal.group() + (b"\n" if start == fatal.end() + 1 else b"\n...\n") + written[start:]
    return tail.decode(errors="replace").strip()


class WorkerGone(Exception):
    """The worker died (verdict ``crash``) or timed out (``timeout``) during a request; a timeout
    says how long the framework's work had run when the worker was killed (``after_s``)."""

    def __init__(self, verdict: str, reason: str, after_s: float | None = None):
        super().__init__(reason)
        self.verdict, self.reason, self.after_s = verdict, reason, after_s


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
        # every process started, in order: its pid, UTC start, version and settings, and, once it
        # died, how (the campaign keeps them in the manifest: the processes behind its results)
        self.processes: list[dict] = []
        self.on_start = None  # called with this worker after each start
        self._log_mark = 0
        self.outstanding = 0  # requests sent and not yet answered
        self.cpu_spent, self._cpu_start, self._cpu_now = 0.0, 0.0, 0.0  # worker CPU after start-up

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
        self.outstanding = 0
        hello = self._receive(time.monotonic() + self.startup_timeout)
        if hello.get("status") != "ok":
            self.close()
            raise RuntimeError(
                f"{self.name} adapter failed to start: {hello.get('type')}: {hello.get('message')}"
            )
        self.info = hello
        self.cpu_spent += self._cpu_now - self._cpu_start  # the previous process's, if any
        self._cpu_start = self._cpu_now = hello.get("worker_cpu", 0.0)
        self.processes.append(
            {
                "pid": self.proc.pid,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "version": hello["version"],
                "settings": hello["settings"],
            }
        )
        if self.on_start is not None:
            self.on_start(self)
        return hello

    def _ended(self, how: str) -> None:
        """Note how the current process died (in its entry of :attr:`processes`)."""
        current = self.processes[-1] if self.processes else {}
        if self.proc is not None and current.get("pid") == self.proc.pid:
            current.setdefault("ended", how)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, message: dict) -> None:
        """Queue a request; several may be outstanding (answered in order, see :meth:`receive`).

        A worker that died with requests outstanding is not restarted here: the first outstanding
        request's :meth:`receive` reports the crash, and the campaign sends the others again.
        """
        if not self.outstanding and not self.alive():
            self.start()
        if not self.outstanding:
            self._mark_log()
        try:
            write_frame(self.proc.stdin.fileno(), message)
        except (BrokenPipeError, OSError):
            pass  # it died; _receive reports the crash
        self.outstanding += 1

    def _mark_log(self, at: int | None = None) -> None:
        """Where the log stands as the worker starts a request (a crash quotes what follows): ``at``,
        the size the worker saw as it answered the request before (conformance.worker.stderr_size:
        the log's size now may already hold what the worker wrote running on past that answer,
        a crash's last lines included), or, with none outstanding (the worker idle), its size now."""
        if isinstance(at, int):
            self._log_mark = at
        else:
            self._log_mark = self.log_path.stat().st_size if self.log_path.exists() else 0

    def receive(self, timeout: float, prepare_timeout: float | None = None) -> dict:
        """The worker's answer; ``timeout`` counts from when the worker started the framework's work.

        A worker first announces ``started`` (with its monotonic clock) once the case is parsed
        and its data made; the time before that (up to ``prepare_timeout``) is the harness's.
        """
        try:
            reply = self._receive_one(timeout, prepare_timeout)
        except WorkerGone:
            self.outstanding = 0  # the process is gone, and every request queued to it with it
            raise
        self.outstanding -= 1
        if self.outstanding:  # the next request's stderr starts where this answer's ended
            self._mark_log(reply.get("stderr_size"))
        self._cpu_now = reply.get("worker_cpu", self._cpu_now)
        return reply

    def cpu_seconds(self) -> float:
        """The CPU time the worker processes spent after start-up (the framework's and the harness's)."""
        return self.cpu_spent + self._cpu_now - self._cpu_start

    def _receive_one(self, timeout: float, prepare_timeout: float | None) -> dict:
        prepare = max(prepare_timeout or 0.0, timeout, 600.0)  # the harness's part: generous, never blamed
        reply = self._receive(time.monotonic() + prepare, what="prepare the case")
        if reply.get("status") != "started":
            return reply
        now = time.monotonic()
        started = reply.get("started_at")
        same_clock = isinstance(started, (int, float)) and now - prepare <= started <= now
        if not same_clock:
            started = now  # another clock: count from when the announcement arrived
        allowance = reply.get("allowance") or 0.0  # a first compile: the mode's documented allowance
        allowance = float(allowance) if isinstance(allowance, (int, float)) and allowance > 0 else 0.0
        try:
            reply = self._receive(started + timeout + allowance)
        except WorkerGone as gone:
            if gone.verdict == "timeout":
                gone.after_s = time.monotonic() - started
                if allowance:
                    gone.reason += f" (the limit: {timeout:g} s plus {allowance:g} s for a first compile)"
            raise
        # An answer read after the deadline (the campaign was busy with other checks) was given in
        # time if the worker's own clock says so; one given late is a timeout, though the worker,
        # having answered, lives on. (Judged only when the worker's clock is this one.)
        finished = reply.get("finished_at")
        if same_clock and isinstance(finished, (int, float)) and finished - started > timeout + allowance:
            limit = f"{timeout:g} s" + (f" plus {allowance:g} s for a first compile" if allowance else "")
            late = {
                "status": "timeout",
                "reason": f"the {self.name} worker answered after {finished - started:.3g} s, "
                f"over the time limit ({limit})",
                "after_s": finished - started,
            }
            if "worker_cpu" in reply:  # (the reference worker's replies carry none)
                late["worker_cpu"] = reply["worker_cpu"]
            late["stderr_size"] = reply.get("stderr_size")
            return late
        return reply

    def _receive(self, deadline: float, what: str = "") -> dict:
        fd = self.proc.stdout.fileno()
        buf = b""
        need = _HEADER.size
        header_done = arriving = False
        while len(buf) < need:
            left = deadline - time.monotonic()
            # an answer arriving, or found waiting after the deadline (read late: the caller judges
            # its time by the worker's clock): the worker has finished; allow for the transfer
            if not arriving and (buf or (left <= 0 and select.select([fd], [], [], 0)[0])):
                arriving = True
                deadline = max(deadline, time.monotonic() + _TRANSFER_GRACE)
                left = deadline - time.monotonic()
            if left <= 0:
                self._ended(f"killed: it did not {what} in time" if what else "killed: no answer in time")
                self.kill()
                if what:  # the harness's part (before the framework started): not the framework's timeout
                    raise WorkerGone("crash", f"the {self.name} worker did not {what} in time; worker killed")
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
        self._ended(how)
        tail = ""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_mark)
                tail = crash_tail(f.read())
        except OSError:
            pass
        self.proc = None
        return f"{self.name} worker {how}" + (f"; its stderr ends: {tail}" if tail else "")

    def kill(self, how: str = "") -> None:
        """End the process now (``how``: why, noted in its entry of :attr:`processes`)."""
        if how and self.alive():
            self._ended(how)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        self.outstanding = 0

    def close(self) -> None:
        if self.alive() and not self.outstanding:  # with requests queued (an interrupted run): kill
            try:
                write_frame(self.proc.stdin.fileno(), {"cmd": "exit"})
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def read_results(path) -> list[dict]:
    """Valid records of a results.jsonl (a torn or garbage line is skipped; see conformance.resultsio)."""
    return read_results_file(path, missing_ok=True).records


def result_key(record) -> tuple:
    """(case id, content hash, framework, check); a shrunk failure is a record of its own."""
    key = (record["case_id"], record.get("case_hash"), record["framework"], record["check"])
    return key + ("shrunk",) if record.get("phase") == "shrunk" else key


def _key(case, framework, check) -> tuple:
    facts = _facts(case)
    return (facts.id, facts.hash, framework, check)


class _CaseFacts:
    """What the campaign asks of one case object many times: its id, content hash, dict, rejection."""

    __slots__ = ("case", "id", "hash", "dict", "_rejects")

    def __init__(self, case):
        self.case, self.id, self.hash, self.dict = case, case.id, case_hash(case), case.to_dict()
        self._rejects = self

    def rejects(self):
        if self._rejects is self:
            self._rejects = reference_rejects(self.case)
        return self._rejects


_FACTS: OrderedDict = OrderedDict()


def _facts(case) -> _CaseFacts:
    """The case's facts, computed once per case object (cases are immutable; the entry keeps it alive)."""
    facts = _FACTS.get(id(case))
    if facts is not None and facts.case is case:
        _FACTS.move_to_end(id(case))
        return facts
    facts = _FACTS[id(case)] = _CaseFacts(case)
    while len(_FACTS) > 64:
        _FACTS.popitem(last=False)
    return facts


class ResultIndex:
    """The driver's memory of what is recorded: exact for ``--resume`` and de-duplication, small per result.

    A key is kept as a 16-byte digest. A ``pass`` keeps nothing more (its record, rebuilt on lookup,
    says only what a caller needs: which result and that it passed; the full record is on disk); any
    other verdict keeps its compact record (:func:`_compact`), since a campaign's failures are few and
    the fuzzer reads them back. So the driver's memory grows by about a hundred bytes per result.
    """

    _PASS = "pass"

    def __init__(self):
        self._entries: dict[bytes, object] = {}

    @staticmethod
    def _digest(key: tuple) -> bytes:
        return hashlib.blake2b(repr(key).encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def add(self, key: tuple, rec: dict) -> None:
        entry = self._PASS if rec.get("verdict") == "pass" else _compact(rec)
        self._entries[self._digest(key)] = entry

    def get(self, key: tuple) -> dict | None:
        entry = self._entries.get(self._digest(key))
        if entry is None:
            return None
        if entry is self._PASS:
            case_id, chash, framework, check, *shrunk = key
            return {
                "case_id": case_id,
                "case_hash": chash,
                "framework": framework,
                "check": check,
                "verdict": "pass",
                **({"phase": "shrunk"} if shrunk else {}),
            }
        return entry

    def __contains__(self, key: tuple) -> bool:
        return self._digest(key) in self._entries

    def __len__(self) -> int:
        return len(self._entries)


def check_timeout(value) -> float:
    """A per-check time limit: a positive finite number of seconds (ValueError otherwise)."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"must be a number of seconds, got {value!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"must be a positive finite number of seconds, got {value!r}")
    return value


def _limit_driver_blas(threads):
    """Limit the driver's own BLAS pool to ``threads`` threads (the workers' setting) while a
    campaign runs; the handle restores the previous limits.

    The driver computes the reference on small arrays while the workers run the frameworks. An
    OpenBLAS pool thread of the driver busy-waits for a while after every multithreaded GEMM and so
    takes a core from a worker: the worker, woken by the next request, then waited for a core, and
    the driver's pipe write returned only when the worker had run (3.2 ms per request, median, on
    the 2-core machine; 0.05 ms with one driver thread). ``threads`` 0 (no limit) leaves BLAS as is.
    """
    if not threads:
        return None
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


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
        overwrite=False,
        manifest=None,
        found_dir=None,
        progress=None,
        threads=1,
        memory_budget=None,
    ):
        self.timeout = check_timeout(timeout)
        self.out = Path(out_dir)
        self.outdir = OutputDir(self.out, resume=resume, overwrite=overwrite, manifest=manifest)
        self.results_path = self.out / "results.jsonl"
        self.workers = {
            name: Worker(name, spec, device, precision, self.out / "logs", threads)
            for name, spec in frameworks.items()
        }
        self._keeps_workers = False  # whether the manifest keeps the workers (record_workers)
        for w in self.workers.values():
            w.on_start = self.workers_changed
        self.reference_worker = Worker(
            "reference", REFERENCE_SPEC, "cpu", "highest", self.out / "logs", threads
        )
        self.device, self.precision = device, precision
        self.memory_budget = memory_budget or _budget.default_budget()
        self.found_dir = Path(found_dir) if found_dir else self.out / "found"
        self.progress = progress or (lambda record: None)
        self.done = ResultIndex()
        # (case id, hash) -> the first attempt of a program's reference that timed out and was retried
        self.reference_retries: dict[tuple, dict] = {}
        # (framework, check, op, failure kind) -> its shrunk result: a resumed fuzz run does not
        # shrink again what an earlier run of it already shrank and recorded
        self._shrunk: dict[tuple, dict] = {}
        self.resumed = 0
        try:
            if resume:
                for r in read_results(self.results_path):
                    self.done.add(result_key(r), r)
                    self._note_shrunk(r)
                self.resumed = len(self.done)
                self._repair_torn_tail()
            self.writer = ResultsWriter(self.results_path)
        except BaseException:
            self.outdir.release()
            raise
        self._expected = OrderedDict()
        self._arrays = OrderedDict()  # (case id, hash) -> CaseData, the last few cases
        self._inflight = deque()  # tickets submitted and not yet completed, oldest first
        self._inflight_bytes = 0  # the memory they need together (their estimates)
        self._flying = {}  # result key -> how many tickets in flight will record it
        self.framework_seconds = {name: 0.0 for name in frameworks}  # inside the frameworks' calls, wall
        self.framework_cpu = {name: 0.0 for name in frameworks}  # the same, CPU time
        self.startup_errors = {}
        self._blas_limit = _limit_driver_blas(threads)

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
        for w in [*self.workers.values(), self.reference_worker]:
            try:
                w.close()
            except Exception:  # noqa: BLE001 - closing must not hide the run's own outcome
                pass
        if self._keeps_workers:  # how the last processes ended
            try:
                self.record_workers()
            except Exception:  # noqa: BLE001 - closing must not hide the run's own outcome
                pass
        self.writer.close()
        self.outdir.release()
        if self._blas_limit is not None:
            self._blas_limit.restore_original_limits()
            self._blas_limit = None

    # -- frameworks --------------------------------------------------------------------------
    def start(self) -> dict:
        """Start every worker; a framework that cannot start is dropped with its reason.

        The campaign's own imports (the reference, the judges) are made before it starts, at the
        top of this module (the judges import the reference), as each worker makes its framework's
        at start-up: never inside the first case (Hypothesis's local constants are off,
        conformance.strategies, so what is imported when does not change the cases drawn).
        """
        for name, w in list(self.workers.items()):
            try:
                w.start()
            except (RuntimeError, WorkerGone) as exc:
                self.startup_errors[name] = str(exc)
                del self.workers[name]
        return self.frameworks_info()

    def frameworks_info(self) -> dict:
        """Each framework's worker: the current process's version and settings, its adapter, how many
        times it was restarted and every process it ran (:attr:`Worker.processes`); or why it could
        not start."""
        info = {
            name: {
                "version": w.info["version"],
                "settings": w.info["settings"],
                "spec": w.spec,
                "worker_restarts": max(w.restarts, 0),
                "processes": [dict(p) for p in w.processes],
            }
            for name, w in self.workers.items()
            if w.info
        }
        for name, reason in self.startup_errors.items():
            info[name] = {"error": reason}
        return info

    def record_workers(self) -> None:
        """Keep the workers in the manifest (conformance.outdir.OutputDir.record_workers): once they
        have started (and a resumed run's versions were checked), then again at each restart and
        as the campaign closes, so that it describes every worker process that produced results."""
        self._keeps_workers = True
        self.outdir.record_workers(self.frameworks_info())

    def workers_changed(self, worker=None) -> None:
        """A worker restarted (or, on a cluster, reported its processes): the manifest, once it keeps
        the workers (the first starts are recorded by :meth:`record_workers`), says so at once."""
        if self._keeps_workers:
            self.record_workers()

    # -- recording ---------------------------------------------------------------------------
    def record(self, rec: dict) -> dict:
        rec = {"schema": RESULTS_SCHEMA, **rec}
        if rec.get("case") and "case_hash" not in rec:
            try:
                rec["case_hash"] = case_hash(Case.from_dict(rec["case"]))
            except Exception:  # noqa: BLE001 - a record without a parsable case keeps no hash
                pass
        interrupt.check()  # a SIGTERM whose exception was swallowed: record nothing more
        key = result_key(rec)
        if key in self.done:
            return self.done.get(key)
        self.writer.write(rec)  # OutputLost propagates: the run stops, never a green report
        self.done.add(key, rec)  # what a later lookup needs; the full record is on disk
        self._note_shrunk(rec)
        self.progress(rec)
        return rec

    def _note_shrunk(self, rec: dict) -> None:
        """Remember a shrunk result under its fuzz run and failure kind (the minimal case has the
        kind it was shrunk for: the shrink property accepts only that kind)."""
        if rec.get("phase") != "shrunk" or not isinstance(rec.get("case"), dict):
            return
        compact = _compact(rec)  # the kind as a resumed generation computes it (from compact records)
        kind = _failure_kind(compact)
        if kind:
            self._shrunk.setdefault((rec["framework"], rec["check"], rec["case"].get("op"), kind), compact)

    # -- the reference side -----------------------------------------------------------------
    def _reference(self, case: Case, check: str):
        """('rejects', message) | ('ok', expected) | ('broken', message) — cached per case and content."""
        facts = _facts(case)
        key = (facts.id, facts.hash, check)
        if key in self._expected:
            self._expected.move_to_end(key)
            return self._expected[key]
        value = self._reference_outcome(case, check)
        self._expected[key] = value
        while len(self._expected) > 256:
            self._expected.popitem(last=False)
        return value

    # The runner's answers that differ by the case's format are methods dispatched on its type
    # (functools.singledispatchmethod): conformance.case imports nothing of the harness, so they
    # live here, one per type, instead of branches on ``case.kind``.
    @singledispatchmethod
    def _reference_outcome(self, case: Case, check: str):
        """A convolution's or an op record's: the reference's rejection, or its expected values (an op
        record's are None here: record_verdict makes them in the framework's arithmetic)."""
        if rejected := _facts(case).rejects():
            return ("rejects", rejected)
        if check == "error":
            return ("ok", None)
        try:
            with ReferenceClock.timing():
                return ("ok", reference_expected(case, check, self._data(case)))
        except Exception as exc:  # a bug in the reference itself: never blamed on a framework
            return ("broken", f"the reference raised {type(exc).__name__}: {exc}")

    @_reference_outcome.register(ProgramCase)
    def _(self, case: ProgramCase, check: str):
        """A program raises as its outcome: it runs in the reference worker."""
        return self._program_reference(case)

    def _data(self, case: Case) -> CaseData:
        """The case's arrays, made once for every check of the case (and sent to the workers)."""
        facts = _facts(case)
        key = (facts.id, facts.hash)
        data = self._arrays.get(key)
        if data is None:
            data = self._arrays[key] = CaseData(case)
            while len(self._arrays) > 16:
                self._arrays.popitem(last=False)
        return data

    def _program_reference(self, case: Case):
        """The program's reference outcome, computed in the reference worker under the time limit."""
        precisions = self._program_precisions(case)
        request = {"cmd": "reference", "case": case.to_dict(), "source": case.id, "precisions": precisions}
        reply = self._ask_reference(request)
        if reply["status"] == "timeout":  # retried once, on a fresh worker, as a framework's check is
            reply = self._ask_reference(request, first=reply)
            facts = _facts(case)
            self.reference_retries[(facts.id, facts.hash)] = reply["retried"]
        if reply["status"] == "timeout":
            return ("broken", f"the reference side ran past the time limit twice: {reply['reason']}")
        if reply["status"] == "broken":
            return ("broken", reply["reason"])
        if reply.get("status") != "ok":
            return ("broken", f"the reference side raised {reply.get('message')}")
        status, value = reply["outcome"]
        if status == "raises":
            prefix = value.get("prefix")
            value = ProgramError(
                value["type_name"], value["message"], value["line"], value["text"], value.get("statement")
            )
            if prefix and isinstance(prefix["bounds"], str):  # the error model failed on the prefix
                value.prefix = ("broken", prefix["bounds"])
            elif prefix:  # the run before the raising statement, for frameworks without autograd state
                outputs = ProgramOutputs(prefix["outputs"])
                outputs.bounds = {repr(p): b for p, b in zip(precisions, prefix["bounds"] or [])}
                value.prefix = ("ok", outputs)
        elif status == "ok":
            bounds = reply.get("bounds")
            if isinstance(bounds, str):  # the error model itself failed: never blamed on a framework
                return ("broken", bounds)
            value = ProgramOutputs(value)
            value.bounds = {repr(p): b for p, b in zip(precisions, bounds or [])}
        return (status, value)

    def _ask_reference(self, request: dict, first: dict | None = None) -> dict:
        """The reference worker's answer to ``request``: its reply, ``timeout`` (the worker killed,
        or its answer late) or ``broken`` (it crashed or could not start). ``first``: the attempt
        that timed out, which this one retries on a fresh worker (the answer's ``retried``)."""
        worker = self.reference_worker
        if first is not None and worker.alive():  # it answered late: the retry runs on a fresh one
            worker.kill("killed: restarted to retry a reference that timed out")
        try:
            worker.send(request)
            reply = worker.receive(self.timeout)
        except RuntimeError as exc:  # the reference worker could not start: the harness's problem
            reply = {"status": "broken", "reason": f"the reference worker could not start: {exc}"}
        except WorkerGone as gone:
            reason = gone.reason.replace("reference worker", "worker")
            if gone.verdict == "timeout":
                reply = {"status": "timeout", "reason": reason, "after_s": gone.after_s}
            else:
                reply = {"status": "broken", "reason": f"the reference side crashed: {reason}"}
        if first is not None:
            after = overran(first, self.timeout)
            retried = {"first": "timeout", "after_s": round(after, 3), "reason": first["reason"]}
            reply = {**reply, "retried": retried}
        return reply

    def _program_precisions(self, case: Case) -> list:
        """The distinct arithmetics (dtype, accumulator, flush-to-zero) the campaign's frameworks run
        this program in: the reference derives the bound once for each."""
        out = []
        for name, worker in self.workers.items():
            p = program_precision(case, name, worker.info["settings"] if worker.info else {})
            if p not in out:
                out.append(p)
        return out

    @singledispatchmethod
    def _bound(self, case: Case, check: str, tf32: bool, name: str = "") -> dict:
        """A convolution's bound: its compute dtype's, with the lengths ``K`` of its check."""
        dtype = compute_dtype(case.dtype, tf32)
        bound = {"formula": BOUND_FORMULA, "compute_dtype": dtype, "u": UNIT_ROUNDOFF[dtype]}
        if check != "error" and not _facts(case).rejects():
            extra = input_rounding_terms(dtype)
            bound["K"] = {name: k + extra for name, k in check_lengths(case, check).items()}
        return bound

    @_bound.register(RecordCase)
    def _(self, case: RecordCase, check: str, tf32: bool, name: str = "") -> dict:
        """An op record's derived bound: filled in by record_verdict."""
        return {
            "formula": ERROR_MODEL_FORMULA,
            "compute_dtype": case.dtype,
            "u": UNIT_ROUNDOFF[PART_DTYPE.get(case.dtype, case.dtype)],  # a complex dtype: its parts'
        }

    @_bound.register(ProgramCase)
    def _(self, case: ProgramCase, check: str, tf32: bool, name: str = "") -> dict:
        return self._program_bound(case, name)

    def _program_bound(self, case: Case, name: str) -> dict:
        worker = self.workers.get(name)
        precision = program_precision(case, name, worker.info["settings"] if worker and worker.info else {})
        bound = {"formula": PROGRAM_BOUND_FORMULA, "compute_dtype": case.dtype, **precision.terms()}
        if case.amp:  # each kernel in the dtype the policy says (conformance.amp)
            bound["policy"] = (
                f"{case.amp}: accumulator of its {low_dtype(case.amp)} kernels; cast table {AUTOCAST_DOCS}"
            )
        return bound

    # -- running -----------------------------------------------------------------------------
    # A check of a case is a ticket: submitted (the harness's own checks, the reference, the request
    # sent to every framework's worker) and later completed (the answers received in order, judged
    # and recorded). Up to ``window`` tickets are in flight, so a worker computes one case while
    # the campaign draws the next, computes its reference and judges the previous: the harness's
    # work overlaps the frameworks' instead of adding to it. Tickets complete in submission order,
    # so results are recorded in the same order, with the same content, as one at a time.
    # The window is deep so that the campaign keeps drawing while a framework spends a second or
    # two on its one-off warm-ups (the first call of each kind); what the tickets in flight hold
    # together stays within the memory budget (their estimates summed, see pump), and a worker
    # reads its requests as they come (conformance.worker.requests), so no pipe ever fills.
    window = 256

    def run_check(self, case: Case, check: str, frameworks=None, phase="campaign", record=True) -> list[dict]:
        """Run one check of one case on several frameworks in parallel; return the records."""
        self.drain()
        return self._complete(self.submit(case, check, frameworks, phase, record))

    def submit(self, case: Case, check: str, frameworks=None, phase="campaign", record=True, done=None):
        """Start one check of one case; ``done(records)`` is called when it completes (see :meth:`pump`)."""
        names = [n for n in (frameworks or self.workers) if n in self.workers]
        # a probe (record=False: shrinking) always runs, so its record is whole (the index keeps
        # only what --resume needs); a recorded run skips what is already recorded, or in flight
        keys = {n: _key(case, n, check) for n in names} if record else {}
        pending = [
            n for n in names if not record or (keys[n] not in self.done and keys[n] not in self._flying)
        ]
        # the harness's own checks first: memory budget, then the reference (its own time limit),
        # both before a framework is asked, so neither is ever charged to a framework
        refusal, reference, need = None, None, 0
        if pending:
            need = _budget.estimate_bytes(case)
            if need > self.memory_budget:
                refusal = {
                    "status": "refused",
                    "reason": f"the case needs about {_budget.human(need)} (estimated before allocating: "
                    f"inputs, outputs, magnitudes, workspace), over the memory budget of "
                    f"{_budget.human(self.memory_budget)} (--memory-budget)",
                }
            else:
                reference = self._reference(case, check)
                if reference[0] == "broken":
                    refusal = {"status": "reference_error", "reason": reference[1]}
        ticket = _Ticket(case, check, names, pending, phase, record, refusal, reference, done)
        ticket.bytes = need if refusal is None else 0
        facts = _facts(case)
        ticket.message = {"cmd": "run", "case": case, "check": check, "source": facts.id}
        data = self._arrays.get((facts.id, facts.hash))
        if data:  # what the reference made (a convolution's): the worker need not make it again
            ticket.message["data"] = {n: data[n] for n in case.arrays_for(check) if n in data}
        for name in pending if refusal is None else ():
            self._send(ticket, name)
        ticket.flying = [keys[name] for name in pending] if record else []
        for key in ticket.flying:
            self._flying[key] = self._flying.get(key, 0) + 1
        self._inflight.append(ticket)
        self._inflight_bytes += ticket.bytes
        return ticket

    def _send(self, ticket, name) -> None:
        worker = self.workers[name]
        try:
            worker.send(ticket.message)
        except (RuntimeError, WorkerGone) as exc:  # a worker that died could not be restarted
            ticket.replies[name] = {
                "status": "crash",
                "reason": f"the {name} worker could not restart: {exc}",
            }
            return
        ticket.sent[name] = worker.proc

    def pump(self) -> None:
        """Complete the oldest tickets until fewer than ``window`` are in flight and the memory
        they need together (their estimates, :func:`conformance.budget.estimate_bytes`) is within
        the memory budget (one case alone always is: a larger one is refused, never sent)."""
        window = self.window
        while len(self._inflight) >= max(window, 1) or (
            len(self._inflight) > 1 and self._inflight_bytes > self.memory_budget
        ):
            self._complete(self._inflight[0])

    def drain(self) -> None:
        """Complete every ticket in flight."""
        while self._inflight:
            self._complete(self._inflight[0])

    def _release(self, key) -> None:
        left = self._flying.get(key, 0) - 1
        if left > 0:
            self._flying[key] = left
        else:
            self._flying.pop(key, None)

    def _complete(self, ticket) -> list[dict]:
        """Receive, judge and record the oldest ticket's answers (it must be the oldest)."""
        assert self._inflight and self._inflight[0] is ticket, "tickets complete in submission order"
        case, check = ticket.case, ticket.check
        out, received = [], set()
        facts = _facts(case)
        reference_retried = self.reference_retries.get((facts.id, facts.hash))
        try:
            for name in ticket.names:
                if name not in ticket.pending:
                    out.append(self.done.get(_key(case, name, check)))
                    continue
                reply = ticket.refusal or ticket.replies.get(name) or self._answer(ticket, name)
                if ticket.refusal is None and overran(reply, self.timeout) is not None:
                    reply = self._retry(ticket, name, reply)
                received.add(name)
                rec = self._verdict(case, check, name, reply, ticket.reference, ticket.phase)
                if "retried" in reply:
                    rec = {**rec, **retry_fields(rec, reply["retried"])}
                if reference_retried:
                    rec["reference_retried"] = reference_retried
                if rec["verdict"] == "fail" and name in ticket.sent:
                    rec["rerun"] = self._rerun(ticket, name, reply)
                out.append(self.record(rec) if ticket.record else rec)
        except BaseException:
            for name in ticket.sent:  # an answer left unread would be taken for the next request's
                if name not in received:
                    self.workers[name].kill()
                    self._resend_lost(name)
            raise
        finally:
            self._inflight.popleft()
            self._inflight_bytes -= ticket.bytes
            for key in ticket.flying:
                self._release(key)
        if ticket.done is not None:
            ticket.done(out)
        return out

    def _answer(self, ticket, name) -> dict:
        worker = self.workers[name]
        if ticket.sent.get(name) is not worker.proc:  # lost with a worker that is gone: ask again
            self._send(ticket, name)
            if name in ticket.replies:
                return ticket.replies[name]
        try:
            return worker.receive(self.timeout)
        except WorkerGone as gone:
            if gone.verdict != "timeout":  # a timeout is sent again first (_retry), then the rest
                self._resend_lost(name)
            return {"status": gone.verdict, "reason": gone.reason, "after_s": gone.after_s}

    def _retry(self, ticket, name, first: dict) -> dict:
        """A check that timed out, run once more on a fresh worker (the same request, sent before
        the requests queued after it): a machine's load can push a check past the limit once, so
        only a second timeout is the verdict. The answer carries ``retried``: the first attempt."""
        worker = self.workers[name]
        after = overran(first, self.timeout)
        if worker.alive():  # it answered late, or already serves the requests after this one
            worker.kill("killed: restarted to retry a check that timed out")
        ticket.replies.pop(name, None)
        self._send(ticket, name)  # starts the fresh worker; this request first
        again = ticket.replies.get(name)
        if again is None:
            self._resend_lost(name)
            try:
                again = worker.receive(self.timeout)
            except WorkerGone as gone:
                self._resend_lost(name)
                again = {"status": gone.verdict, "reason": gone.reason, "after_s": gone.after_s}
        if first.get("status") == "timeout":
            first_reason = first.get("reason")
        else:
            first_reason = f"answered after {after:.3g} s, past the {self.timeout:g} s limit"
        return {**again, "retried": {"first": "timeout", "after_s": round(after, 3), "reason": first_reason}}

    def _resend_lost(self, name) -> None:
        """The worker is gone, and the requests queued to it with it: send them again, in order
        (but those already answered: :meth:`_rerun` reads the later answers ahead)."""
        worker = self.workers[name]
        for later in list(self._inflight)[1:]:
            if name in later.sent and later.sent[name] is not worker.proc and name not in later.replies:
                self._send(later, name)

    def _rerun(self, ticket, name, first: dict) -> dict:
        """A failing answer's computation run once more on ``name``'s worker, the same request, and
        whether the two runs were bitwise identical (conformance.rerun). The worker answers in
        order, so the answers to the requests queued after this one are read first and kept for
        their tickets (``replies``: a reply known without asking)."""
        worker = self.workers[name]
        for later in list(self._inflight)[1:]:
            if later.sent.get(name) is not worker.proc or name in later.replies:
                continue
            try:
                later.replies[name] = worker.receive(self.timeout)
            except WorkerGone as gone:  # that request's answer; the ones after it are sent again
                later.replies[name] = {"status": gone.verdict, "reason": gone.reason}
                self._resend_lost(name)
                return {"identical": None, "note": f"rerun: not compared (the {name} worker died first)"}
        try:
            worker.send(ticket.message)
            again = worker.receive(self.timeout)
        except (RuntimeError, WorkerGone) as exc:
            again = {"status": getattr(exc, "verdict", "crash"), "reason": str(exc)}
        return rerun_compare(first, again)

    def _case_fields(self, case, name) -> dict:
        """The fields of a result that describe its case (as :meth:`_verdict` writes them). A result
        answered from the index under ``--resume`` is the compact one (:func:`_compact`: no dtype,
        config or case), so a shrunk case that is one of the generation's own examples is
        re-recorded with these; without them a report files it under op ``conv``, dtype ``-``."""
        facts, worker = _facts(case), self.workers.get(name)
        return {
            "dtype": case.selector,  # (a mixed-precision program case: its policy)
            "config": case.describe(),
            "version": worker.info["version"] if worker is not None and worker.info else None,
            "case": facts.dict,
            "case_hash": facts.hash,
        }

    @singledispatchmethod
    def _format_verdict(self, case: Case, check: str, name: str, reply: dict, reference) -> dict | None:
        """The verdict fields a format judges by its own rule, or None for the shared rule below
        (a convolution's: the reference's rejection, its expected values within the bound)."""
        return None

    @_format_verdict.register(ProgramCase)
    def _(self, case: ProgramCase, check: str, name: str, reply: dict, reference) -> dict | None:
        """A program's: every result, gradient and raised error, each arithmetic's derived bound."""
        ref_status, ref_value = reference
        worker = self.workers[name]
        bounds = None
        judged = ref_value if ref_status == "ok" else getattr(ref_value, "prefix", (None, None))[1]
        if judged is not None and (ref_status == "ok" or reply.get("judged_to")):
            settings = worker.info["settings"] if worker.info else {}
            bounds = judged.bounds.get(repr(program_precision(case, name, settings)))
            if bounds is None and reply["status"] == "ok":
                return {"verdict": "crash", "reason": "the reference derived no bound for this arithmetic"}
        # (non-finite values are judged with the bound: one past the dtype's range has an infinite one)
        return program_verdict(case, (ref_status, ref_value), reply, name, bounds)

    @_format_verdict.register(RecordCase)
    def _(self, case: RecordCase, check: str, name: str, reply: dict, reference) -> dict | None:
        """An op record's answered check (conformance.ops.judge); its error check and a raised
        error take the shared rule."""
        if reply["status"] != "ok" or check == "error":
            return None
        worker = self.workers[name]
        settings = worker.info["settings"] if worker.info else {}
        return record_verdict(case, check, name, reply["outputs"], settings)

    def _verdict(self, case, check, name, reply, reference, phase) -> dict:
        worker = self.workers[name]
        tf32 = bool(worker.info and worker.info["settings"].get("tf32"))
        facts = _facts(case)
        seconds = reply.get("seconds", 0.0)
        self.framework_seconds[name] += seconds
        self.framework_cpu[name] += reply.get("cpu_seconds", 0.0)
        rec = {
            "case_id": facts.id,
            "framework": name,
            "check": check,
            "verdict": None,
            "phase": phase,
            "dtype": case.selector,  # (a mixed-precision program case: its policy)
            "config": case.describe(),
            "max_ratio": None,
            "bound": {"formula": BOUND_FORMULA},
            "seconds": round(seconds, 6),
            "version": worker.info["version"] if worker.info else None,
            "case": facts.dict,
            "case_hash": facts.hash,
        }
        status = reply["status"]
        if status in ("refused", "reference_error"):
            return {**rec, "verdict": status, "reason": reply["reason"]}
        for key in ("compile_seconds", "cache"):  # a compiling execution mode's timing
            if key in reply:
                rec[key] = round(reply[key], 6) if key == "compile_seconds" else reply[key]
        if "compile_seconds" in rec:
            rec["run_seconds"] = round(max(seconds - rec["compile_seconds"], 0.0), 6)
        allowance = reply.get("allowance") or 0.0
        if status in ("ok", "error") and seconds > self.timeout + allowance:
            return {
                **rec,
                "verdict": "timeout",
                "reason": f"answered after {seconds:.3g} s, past the "
                f"{self.timeout:g} s limit (timed from the start of {name}'s own work"
                + (f", plus {allowance:g} s for a first compile)" if allowance else ")"),
            }
        rec["bound"] = self._bound(case, check, tf32, name)
        ref_status, ref_value = reference
        if status in ("crash", "timeout", "unsupported"):
            return {**rec, "verdict": status, "reason": reply["reason"]}
        if status == "harness_error":
            return {**rec, "verdict": "crash", "reason": f"harness error in the worker: {reply['message']}"}
        if ref_status == "broken":
            return {**rec, "verdict": "crash", "reason": ref_value}
        own = self._format_verdict(case, check, name, reply, reference)
        if own is not None:
            return {**rec, **own}
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
        observed, expected, failure = settle(
            reply["outputs"], with_extra_terms(ref_value, extra), value=lambda e: e.value, rebuild=_zeroed
        )
        if failure:
            failure["reason"] += f" [{name} {check} {case.describe()}]"
            return {**rec, **failure}
        judged = judge(observed, expected, rec["bound"]["u"], case.dtype)
        rec.update(verdict=judged["verdict"], max_ratio=judged["max_ratio"], worst=judged["worst"])
        if judged["verdict"] != "pass":
            rec["reason"] = explain(judged, f"{name} {check} {case.describe()}")
            if judged.get("failing_elements"):
                rec["failing_elements"] = judged["failing_elements"]
        return rec

    def run_cases(self, cases, checks=None, phase="campaign", wait=True) -> list[dict]:
        """Run every check of ``cases``; return their records. ``wait=False``: the last checks may
        still be in flight on return (the list fills as they complete: :meth:`drain`), so that
        what the campaign does next overlaps them."""
        out = []
        for case in cases:
            for check in case.checks:
                if checks is None or check in checks:
                    self.submit(case, check, phase=phase, done=out.extend)
                    self.pump()
        if wait:
            self.drain()
        return out

    # -- fuzzing -----------------------------------------------------------------------------
    def fuzz(
        self,
        frameworks,
        check: str,
        strategy,
        max_examples: int,
        seed: int = 0,
        max_shrinks: int = 2,
        simplest: bool = True,
    ) -> list[dict]:
        """Hypothesis-driven fuzzing of one check on one or more frameworks; returns the shrunk failures.

        Generation runs the whole budget, sends each example to every framework at once and
        records every result (a failure does not stop it). Then, for each framework and each
        distinct kind of failure (up to ``max_shrinks``), Hypothesis replays the same seeded
        generation (answered from the recorded results) up to the first example of that kind and
        shrinks it on that framework; shrink steps are not recorded. The minimal case is saved
        as JSON to the found directory and recorded with phase ``shrunk``. ``simplest``: whether
        the first example is Hypothesis's simplest draw (see :func:`_hypothesis`).
        """
        run = self.generate(frameworks, check, strategy, max_examples, seed, simplest)
        return self.shrink(run, max_shrinks)

    def generate(
        self, frameworks, check: str, strategy, max_examples: int, seed: int = 0, simplest: bool = True
    ) -> _FuzzRun:
        """The generation half of :meth:`fuzz`: every example submitted, the last ones possibly
        still in flight on return, so that the next fuzz run's drawing overlaps them. Pass the
        run to :meth:`shrink` (after any number of other generations)."""
        frameworks = [frameworks] if isinstance(frameworks, str) else list(frameworks)
        run = _FuzzRun(frameworks, check, strategy, max_examples, seed, simplest)

        def generate(case):
            # submitted, not awaited: the worker runs it while the next example is drawn (see submit)
            case = case.with_checks([check])
            self.submit(case, check, frameworks, phase="fuzz", done=lambda records: run.judged(case, records))
            self.pump()

        try:
            _hypothesis(generate, strategy, max_examples, seed, shrink=False, simplest=simplest)()
        except OutputLost:  # the results cannot be kept: the run stops (never a result of its own)
            raise
        except Exception as exc:  # the campaign goes on; the problem is a result of its own
            # (the checks in flight are whole: submitted ones complete, and a check whose
            # completion raised has had its workers restarted and the later requests sent again)
            interrupt.check()  # unless it is the aftermath of a swallowed SIGTERM
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
        # a steered strategy's coverage after generation: each framework's shrink starts from it, so
        # a framework's shrunk case does not depend on which other frameworks shrank first (a Ray
        # shard runs one framework: its shrink must draw what the local run's draws)
        coverage = getattr(strategy, "coverage", None)
        run.generated = coverage.snapshot() if coverage is not None else None
        return run

    def shrink(self, run: _FuzzRun, max_shrinks: int = 2) -> list[dict]:
        """The shrinking half of :meth:`fuzz`: waits for the run's examples (every check in flight),
        then shrinks each framework's first ``max_shrinks`` kinds of failure."""
        self.drain()
        check, strategy = run.check, run.strategy
        coverage = getattr(strategy, "coverage", None)
        shrunk = []
        for name in run.frameworks:
            if coverage is not None:
                coverage.restore(run.generated)

            def run_one(case, record, name=name):
                case = case.with_checks([check])
                return case, self.run_check(case, check, [name], phase="fuzz", record=record)[0]

            for kind in run.kinds[name][:max_shrinks]:
                recorded = self._shrunk.get((name, check, run.op, kind))
                if recorded is not None:  # --resume: this run shrank it before it was interrupted
                    shrunk.append(recorded)
                    continue
                last = self._shrink(
                    run_one,
                    kind,
                    strategy,
                    run.max_examples,
                    run.seed,
                    dict(run.answered[name]),
                    run.simplest,
                )
                if last:
                    case, rec = last
                    note = f"found by fuzzing: {name} {check} {rec['verdict']}: {rec.get('reason', '')[:200]}"
                    path = save_case(replace(case, description=note), self.found_dir)
                    rec = {**self._case_fields(case, name), **rec}
                    shrunk.append(self.record({**rec, "phase": "shrunk", "found": str(path)}))
        return shrunk

    @staticmethod
    def _shrink(run_one, kind, strategy, max_examples, seed, seen=None, simplest=True) -> list:
        """The smallest case Hypothesis finds with this kind of failure ([] if none).

        ``seen``: case id -> (case, record) already answered (the generation's records): the
        replay of the seeded generation up to the first failure is answered from them.
        """
        last, seen = [], {} if seen is None else seen

        def prop(case):
            if case.id not in seen:  # a framework may not answer the same way twice: ask once
                seen[case.id] = run_one(case, False)
            case, rec = seen[case.id]
            if _failure_kind(rec) == kind:
                if not last or case.size() <= last[0].size():
                    last[:] = [case, rec]
                raise _Shrinking(kind)

        try:
            _hypothesis(prop, strategy, max_examples, seed, shrink=True, simplest=simplest)()
        except Exception:  # _Shrinking, or Hypothesis giving up (flaky, ...): keep the smallest seen
            pass
        return last


# the fields of a recorded result the driver keeps in memory (the full record is on disk)
_KEPT = (
    "case_id",
    "case_hash",
    "framework",
    "check",
    "verdict",
    "phase",
    "max_ratio",
    "bound",
    "worst",
    "found",
)


def overran(reply: dict, timeout: float) -> float | None:
    """How long a check ran if its answer is a timeout, else None: no answer in time (the worker
    killed at the limit, or an answer late by the worker's clock), or one whose own seconds ran
    past ``timeout`` (plus a first compile's allowance)."""
    status, seconds = reply.get("status"), reply.get("seconds") or 0.0
    if status == "timeout":
        after = reply.get("after_s")
        return float(after) if isinstance(after, (int, float)) else timeout
    allowance = reply.get("allowance") or 0.0
    if status in ("ok", "error") and seconds > timeout + allowance:
        return float(seconds)
    return None


def retry_fields(rec: dict, retried: dict) -> dict:
    """What a result says of a first attempt that timed out (Campaign._retry): ``retried``, and in
    the reason of a second timeout that it is the second."""
    out = {"retried": retried}
    if rec["verdict"] == "timeout":
        out["reason"] = (
            f"{rec.get('reason', '')}; timed out twice: the first attempt ran {retried['after_s']:.3g} s "
            "and the retry, on a fresh worker, timed out too"
        )
    return out


def _compact(rec: dict) -> dict:
    out = {k: rec[k] for k in _KEPT if k in rec}
    if "reason" in rec:
        out["reason"] = str(rec["reason"])[:400]
    return out


def _zeroed(e, agree):
    """An Expected with the positions where both sides agree on a non-finite value made exact zeros."""
    import numpy as np

    return replace(
        e, value=np.where(agree, 0.0, e.value), magnitude=np.where(agree, 0.0, np.asarray(e.magnitude))
    )


@dataclass(eq=False)
class _Ticket:
    """One check of one case in flight: what was sent to which worker, and what to judge it with."""

    case: Case
    check: str
    names: list  # the frameworks asked for
    pending: list  # those that run (the others are recorded already)
    phase: str
    record: bool
    refusal: dict | None  # the harness's own verdict (memory budget, a broken reference): nothing sent
    reference: tuple | None
    done: object  # called with the records on completion, or None
    message: dict | None = None
    flying: list = field(default_factory=list)  # result keys this ticket will record
    sent: dict = field(default_factory=dict)  # framework -> the worker process the request went to
    replies: dict = field(default_factory=dict)  # framework -> a reply known without asking
    bytes: int = 0  # the memory the case needs (estimated), counted while it is in flight


class _FuzzRun:
    """One fuzz run between its generation and its shrinking (Campaign.generate, Campaign.shrink)."""

    def __init__(self, frameworks, check, strategy, max_examples, seed, simplest=True):
        self.frameworks, self.check, self.strategy = frameworks, check, strategy
        self.max_examples, self.seed, self.simplest = max_examples, seed, simplest
        self.kinds = {name: [] for name in frameworks}  # each framework's kinds of failure, first seen first
        self.answered = {name: {} for name in frameworks}  # case id -> (case, record): what shrinking replays
        self.op = None  # the run's op (every case of a run has the same)
        self.generated = None  # a steered strategy's coverage after generation

    def judged(self, case, records) -> None:
        self.op = case.op
        for rec in records:
            self.answered[rec["framework"]].setdefault(case.id, (case, rec))
            kind = _failure_kind(rec)
            if kind and kind not in self.kinds[rec["framework"]]:
                self.kinds[rec["framework"]].append(kind)


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


def _hypothesis(test, strategy, max_examples, seed, shrink, simplest=True):
    from hypothesis import HealthCheck, Phase, Verbosity, given, reject, settings
    from hypothesis import seed as hypothesis_seed

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    # Hypothesis's first example is its simplest draw (every choice at its minimum: the first dtype,
    # the first values kind, the smallest shapes, data seed 0), the same at every seed: at one
    # example per record and check (the default budget) a campaign draws nothing else, whatever
    # --seed says. With ``simplest=False`` (``run --draws seeded``) it is skipped (rejected: it does
    # not count against max_examples), so that every example is a draw of the seed; the shrink
    # phase may still reach it (only the first call is skipped, in the generation and in its replay
    # alike).
    skipped = simplest

    def seeded(case):
        nonlocal skipped
        if not skipped:
            skipped = True
            reject()
        return test(case)

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
        )(given(strategy)(seeded))
    )


def _squeeze(message: str, limit: int = 600) -> str:
    """A framework's error message shortened for a record: its head and its (usually telling) tail."""
    message = " ".join(message.split())
    return message if len(message) <= limit else f"{message[:150]} ... {message[-(limit - 150) :]}"


def failed(records) -> bool:
    return any(r["verdict"] in FAILING for r in records)
