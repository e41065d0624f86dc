"""The Ray executor: a campaign's shards as Ray tasks; the driver alone writes ``results.jsonl``.

``conformance run --executor ray`` starts a local Ray instance for the run (``--ray-workers`` CPUs,
no dashboard) and shuts it down after; with ``--ray-address`` it joins a running cluster. The
campaign is cut into shards (:mod:`conformance.executors.plan`); each shard is a Ray generator task
(:func:`conformance.executors.shard.execute`) that runs the local runner's worker-process isolation
on its node and streams its results back. The driver records every result it receives through the
campaign's own :meth:`~conformance.runner.Campaign.record` (the result digest index drops a result
it already has: a retried shard never duplicates one), saves shrunk failures to ``--found-dir``
once, and keeps one progress line. So ``report``, ``--resume``, reproducers and the HTML are the
same as after a local run.

Resources: every shard asks for one CPU; with ``--device cuda`` also one GPU (``num_gpus=1``), so
CUDA shards run only on nodes with a free GPU and CPU shards never hold one. Faults: a task whose
worker process or node dies is retried by Ray (``MAX_RETRIES``); a framework that cannot start on
a node raises :class:`~conformance.executors.shard.NodeUnfit`, retried the same way. A shard that
still fails is reported at the end (:class:`~conformance.executors.ShardsLost`, exit 5, no report);
``--resume`` then runs only what is missing. docs/scale-out.md.

Processes: the local instance runs in a temporary directory of its own (``refgrad-ray-*``). When the
run ends, or is interrupted at any phase (SIGINT or SIGTERM while Ray starts included), Ray is shut
down and then every process Ray started for this run is stopped (:func:`stop_processes`: each
process whose command line names that directory, and each new Ray process below the driver;
SIGTERM, then SIGKILL after a grace period), so none outlives the run.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from conformance import interrupt
from conformance.executors import ExecutorError, ShardsLost
from conformance.executors import shard as shard_mod
from conformance.executors.plan import make_shards
from conformance.outdir import merge_processes
from conformance.runner import read_results, result_key
from conformance.tolerance import FAILING

MAX_RETRIES = 3
CONNECT_SECONDS = 5.0  # a TCP connection to the head node
PROBE_SECONDS = 900.0  # a framework starting on the cluster (waiting for a node with the resources included)
GCS_SECONDS = 20.0  # the head node's GCS answering (a Python process that imports ray: a few seconds)


def require():
    """The ``ray`` module, or an :class:`ExecutorError` saying what to install."""
    try:
        import ray
    except ImportError as exc:
        raise ExecutorError(
            f"--executor ray: Ray cannot be imported here ({exc}); install it with: pip install refgrad[ray]"
        ) from None
    return ray


def shard_options(device: str) -> dict:
    """The Ray task options of a shard (and of a framework probe) on ``device``."""
    return {
        "num_cpus": 1,
        "num_gpus": 1 if device == "cuda" else 0,
        "max_retries": MAX_RETRIES,
        "retry_exceptions": [shard_mod.NodeUnfit],
    }


def _run_shard(shard, settings, done):
    yield from shard_mod.execute(shard, settings, done)


def _probe(name, spec, device, precision):
    return shard_mod.probe(name, spec, device, precision)


_REMOTE: dict = {}


def _remote(name: str):
    ray = require()
    if not _REMOTE:
        _REMOTE["shard"] = ray.remote(_run_shard)
        _REMOTE["probe"] = ray.remote(_probe)
    return _REMOTE[name]


# -- connecting -------------------------------------------------------------------------------------
def check_address(address: str) -> str:
    """Fail fast, naming the address and the cause, when nothing reachable listens at ``address``.

    Ray itself retries an unreachable head node for minutes; this answers in seconds. Returns the
    ``host:port`` checked (``auto`` resolved to the cluster started on this machine).
    """
    target = address
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address

        try:
            target = canonicalize_bootstrap_address("auto", None)
        except Exception:  # noqa: BLE001 - Ray raises ConnectionError (an OSError) when it finds none
            target = None
        if not target:
            raise ExecutorError(
                "--ray-address auto: no running Ray cluster was found on this machine "
                "(start one with: ray start --head, or give HOST:PORT)"
            )
    hostport = target.split("://", 1)[1] if "://" in target else target
    host, _, port = hostport.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ExecutorError(
            f"--ray-address {address!r}: expected HOST:PORT (the head node's address, e.g. 10.0.0.1:6379), "
            "ray://HOST:PORT (Ray Client) or auto"
        )
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
    except socket.gaierror as exc:
        raise ExecutorError(
            f"--ray-address {address}: cannot resolve host {host!r}: {exc.strerror}"
        ) from None
    except ConnectionRefusedError:
        raise ExecutorError(
            f"--ray-address {address}: connection refused: nothing listens on port {port} of {host} "
            "(is the head node started? ray start --head --port PORT)"
        ) from None
    except TimeoutError:
        raise ExecutorError(
            f"--ray-address {address}: no answer from {host}:{port} within {CONNECT_SECONDS:g} s "
            "(a wrong address, the node is down, or a firewall)"
        ) from None
    except OSError as exc:
        raise ExecutorError(f"--ray-address {address}: cannot connect: {exc.strerror or exc}") from None
    if "://" not in target:  # a GCS address: something listens; make sure it is a Ray head node
        _check_gcs(address, hostport)
    return hostport


def _check_gcs(address: str, hostport: str) -> None:
    code = "import sys, ray._raylet as r; r.GcsClient(address=sys.argv[1])"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, hostport],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=GCS_SECONDS,
            text=True,
        )
    except subprocess.TimeoutExpired:
        raise ExecutorError(
            f"--ray-address {address}: something listens there but no Ray head node answered within "
            f"{GCS_SECONDS:g} s (is it the head node's GCS port, 6379 by default?)"
        ) from None
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ExecutorError(f"--ray-address {address}: not a reachable Ray head node: {last[:300]}")


class RayExecutor:
    """One run's Ray session (a context manager: the local instance is shut down on exit)."""

    def __init__(
        self, address: str | None = None, workers: int | None = None, memory_budget: int | None = None
    ):
        self.address, self.workers, self.memory_budget = address, workers, memory_budget
        self.ray = require()
        self.temp_dir = None  # the local instance's own directory (None: joined a cluster)
        self.before: set[int] = set()  # processes below the driver before Ray started
        self.progress_line = None
        self.nodes = {}  # node id -> host, every node a shard or a probe ran on

    def __enter__(self):
        if self.address:
            check_address(self.address)
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore():  # Ray installs its own SIGTERM handler (it exits the process): ours again
            if threading.current_thread() is threading.main_thread():
                for sig, handler in handlers.items():
                    if handler is not None:
                        signal.signal(sig, handler)

        try:
            self._init()
            restore()  # (a signal that arrived meanwhile is handled here, inside the try)
        except BaseException as exc:  # noqa: BLE001 - whatever stopped the start, stop what it started
            interrupted = False
            try:  # a signal left pending while Ray blocked in C runs its handler now, here
                restore()
            except BaseException:  # noqa: BLE001 - Ray's SystemExit or our Interrupted: an interruption
                interrupted = True
                restore()
            self._fail(exc, interrupted)
        return self

    def _init(self) -> None:
        kwargs = {"logging_level": logging.WARNING, "log_to_driver": False}
        if self.address:
            self.ray.init(address=self.address, **kwargs)
            return
        # "local": never join a cluster named by RAY_ADDRESS without --ray-address
        self.before = descendants(os.getpid())
        # short (Ray's socket paths are length-limited); RAY_TMPDIR as Ray itself honours it
        base = os.environ.get("RAY_TMPDIR") or ("/tmp" if os.path.isdir("/tmp") else None)
        self.temp_dir = tempfile.mkdtemp(prefix="refgrad-ray-", dir=base)
        self.ray.init(
            address="local",
            num_cpus=self.workers or os.cpu_count() or 1,
            include_dashboard=False,
            _temp_dir=self.temp_dir,
            **kwargs,
        )

    def _fail(self, exc: BaseException, interrupted: bool):
        """Ray did not start: stop what it started, then raise what the user needs to know.

        An interruption (SIGINT, SIGTERM: ours, or Ray's own handler's SystemExit; also one that
        arrives while stopping) is :class:`~conformance.interrupt.Interrupted`; another failure of
        Ray is an :class:`ExecutorError` naming the address."""
        interrupted |= isinstance(exc, (KeyboardInterrupt, SystemExit, interrupt.Interrupted))
        interrupted |= self._stop()
        if isinstance(exc, ExecutorError):
            raise exc
        if interrupted or interrupt.requested:
            if isinstance(exc, (KeyboardInterrupt, interrupt.Interrupted)):
                raise exc
            raise interrupt.Interrupted() from None
        if not isinstance(exc, Exception):
            raise exc
        where = f"--ray-address {self.address}" if self.address else "--executor ray"
        raise ExecutorError(f"{where}: Ray could not start: {type(exc).__name__}: {exc}") from None

    def __exit__(self, *exc):
        if self._stop():  # interrupted while stopping: the run's own outcome comes first, if any
            if exc[0] is None:
                raise interrupt.Interrupted()

    def _stop(self) -> bool:
        """Shut Ray down, then stop every process it started for this run (a local instance's).

        Never stopped half-way by a signal: an interruption meanwhile is noted and the stop goes
        on; returns whether one came."""
        interrupted = False
        for _ in range(5):  # each attempt may be cut by another signal; every step is idempotent
            try:
                try:
                    self.ray.shutdown()
                except Exception:  # noqa: BLE001 - shutting down must not hide the run's own outcome
                    pass
                if self.temp_dir is not None:
                    stop_processes(self.temp_dir, self.before)
                    shutil.rmtree(self.temp_dir, ignore_errors=True)
                    self.temp_dir = None
                return interrupted
            except (KeyboardInterrupt, SystemExit, interrupt.Interrupted):
                interrupted = True
        return interrupted

    def progress(self, quiet: bool):
        self.progress_line = RayProgress(quiet)
        return self.progress_line

    def settings(self, campaign) -> dict:
        """What every shard runs with; without --memory-budget each node takes its own default."""
        return {
            "device": campaign.device,
            "precision": campaign.precision,
            "timeout": campaign.timeout,
            "memory_budget": self.memory_budget,
        }

    # -- frameworks ---------------------------------------------------------------------------------
    def start(self, campaign) -> None:
        """Start each framework on the cluster once (with the shards' resources); drop those that cannot."""
        try:
            self._start(campaign)
        except Exception:
            interrupt.check()  # a SIGTERM that Ray's code turned into another error: an interruption
            raise

    def _start(self, campaign) -> None:
        ray = self.ray
        if campaign.device == "cuda" and not ray.cluster_resources().get("GPU"):
            if not self.address:
                raise ExecutorError("--device cuda: this machine's Ray instance has no GPU (Ray found none)")
            print(
                f"conformance: --device cuda: the cluster at {self.address} has no GPU now; "
                f"waiting up to {PROBE_SECONDS:g} s for a GPU node (an autoscaler may add one)",
                file=sys.stderr,
            )
        probe = _remote("probe")
        opts = {k: v for k, v in shard_options(campaign.device).items() if k != "retry_exceptions"}
        refs = {
            name: probe.options(**opts).remote(name, w.spec, campaign.device, campaign.precision)
            for name, w in campaign.workers.items()
        }
        for name, ref in refs.items():
            try:
                answer = ray.get(ref, timeout=PROBE_SECONDS)
            except ray.exceptions.GetTimeoutError:
                ray.cancel(ref, force=True)
                need = "a free GPU" if campaign.device == "cuda" else "a free CPU"
                answer = {"error": f"no node with {need} started it within {PROBE_SECONDS:g} s"}
            except Exception as exc:  # noqa: BLE001 - the probe task itself failed on the cluster
                interrupt.check()  # a SIGTERM that Ray's code turned into this error: an interruption
                answer = {"error": f"could not be started on the cluster: {_why(exc)}"}
            if "error" in answer:
                campaign.startup_errors[name] = answer["error"]
                del campaign.workers[name]
                continue
            self.nodes[answer["node"]] = answer["host"]
            worker = campaign.workers[name]
            worker.info, worker.restarts = answer["info"], 0

    # -- running ------------------------------------------------------------------------------------
    def run(self, campaign, curated, units) -> None:
        """Every shard of the campaign on the cluster; results recorded as they arrive."""
        try:
            self._run(campaign, curated, units)
        except Exception:
            interrupt.check()  # a SIGTERM that Ray's code turned into another error: an interruption
            raise

    def _run(self, campaign, curated, units) -> None:
        ray = self.ray
        shards = make_shards({n: w.spec for n, w in campaign.workers.items()}, curated, units)
        settings = self.settings(campaign)
        done = self._done_refs(campaign)
        task = _remote("shard")
        opts = shard_options(campaign.device)
        live = {task.options(**opts).remote(s, settings, done.get(s.framework)): s for s in shards}
        progress = self.progress_line or RayProgress(True)
        progress.start(len(shards))
        running, lost, finished = {}, {}, 0
        while live:
            interrupt.check()
            gens = list(live)
            ready, _ = ray.wait(gens, num_returns=1, timeout=1.0)
            if ready:
                ready, _ = ray.wait(gens, num_returns=len(gens), timeout=0)
            for gen in ready:
                shard = live[gen]
                try:
                    ref = next(gen)
                except StopIteration:
                    del live[gen]
                    running.pop(shard.index, None)
                    finished += 1
                    continue
                try:
                    item = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 - the shard failed after its retries
                    interrupt.check()  # a SIGTERM that Ray's code turned into this error: an interruption
                    del live[gen]
                    running.pop(shard.index, None)
                    lost[shard.id] = _why(exc)
                    finished += 1
                    continue
                running[shard.index] = item["node"]
                self.nodes.setdefault(item["node"], item["host"])
                self._take(campaign, shard, item)
            progress.shards(finished, len(shards), len(set(running.values())))
        progress.shards(finished, len(shards), 0, final=True)
        if lost:
            raise ShardsLost(lost, len(shards))

    @staticmethod
    def _done_refs(campaign) -> dict:
        """On --resume: per framework, what is recorded (the shards skip it), put in the object store once."""
        if not campaign.resumed:
            return {}

        by_framework: dict = {}
        for rec in read_results(campaign.results_path):
            by_framework.setdefault(rec["framework"], []).append(shard_mod.done_record(rec))
        return {name: require().put(recs) for name, recs in by_framework.items()}

    @staticmethod
    def _take(campaign, shard, item) -> None:
        for rec, found in item.get("records") or ():
            if result_key(rec) in campaign.done:
                continue  # a retried shard's repeat, or a result recorded before --resume
            if found is not None:
                path = campaign.found_dir / os.path.basename(rec["found"])
                campaign.found_dir.mkdir(parents=True, exist_ok=True)
                path.write_text(found, encoding="utf-8")
                rec = {**rec, "found": str(path)}
            campaign.record(rec)
        if item.get("kind") == "final":
            worker = campaign.workers.get(shard.framework)
            if worker is not None:
                if item.get("info") and not worker.info:
                    worker.info = item["info"]
                worker.restarts = max(worker.restarts, 0) + item.get("restarts", 0)
                processes = merge_processes(worker.processes, item.get("processes") or [])
                if processes != worker.processes:  # a node's worker started, restarted or died
                    worker.processes = processes
                    campaign.workers_changed(worker)


# -- the processes of a local instance ------------------------------------------------------------------
def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process visible in /proc (empty elsewhere)."""
    out = {}
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[0] != "Z":  # a zombie is already gone
            out[pid] = (int(fields[1]), cmdline)
    return out


def descendants(root: int, table: dict | None = None) -> set[int]:
    """The pids below ``root`` in the process tree (children, their children, ...)."""
    table = _processes() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def ray_processes(temp_dir: str, before: set[int] = frozenset()) -> set[int]:
    """The processes of the local instance in ``temp_dir``: those whose command line names it, and
    the Ray processes below this one that were not there before (workers retitle themselves
    ``ray::...`` and no longer show the directory)."""
    table = _processes()
    me = os.getpid()
    mine = {pid for pid, (_, cmd) in table.items() if temp_dir in cmd and pid != me}
    below = descendants(me, table) - set(before)
    mine |= {pid for pid in below if "ray" in table[pid][1]}
    return mine


def stop_processes(temp_dir: str, before: set[int] = frozenset(), grace: float = 3.0) -> set[int]:
    """Stop the local instance's processes (SIGTERM, SIGKILL after ``grace`` seconds); return the pids."""
    pids = ray_processes(temp_dir, before)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            alive = pids & set(_processes())
            for pid in list(alive):  # reap our own children, so they do not linger as zombies
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        alive.discard(pid)
                except ChildProcessError:
                    pass
            if not alive:
                return pids
            time.sleep(0.05)
        pids |= ray_processes(temp_dir, before)  # one started meanwhile is stopped too
    return pids


def _why(exc) -> str:
    cause = getattr(exc, "cause", None)
    text = str(cause if cause is not None else exc).strip().splitlines()
    return f"{type(cause or exc).__name__}: {text[-1] if text else ''}"[:300]


class RayProgress:
    """The campaign's one progress line on stderr: shards done/total, results, failures, nodes in use."""

    def __init__(self, quiet: bool):
        self.quiet, self.tty = quiet, sys.stderr.isatty()
        self.n = self.bad = 0
        self.done_shards = self.total = self.nodes = 0
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, rec) -> None:
        self.n += 1
        self.bad += rec["verdict"] in FAILING

    def start(self, total: int) -> None:
        self.total = total
        self.started = time.monotonic()

    def line(self) -> str:
        return (
            f"[shards {self.done_shards}/{self.total}, {self.n} results, {self.bad} failing, "
            f"{self.nodes} node{'s' if self.nodes != 1 else ''} in use, {time.monotonic() - self.started:.1f}s]"
        )

    def shards(self, done: int, total: int, nodes: int, final: bool = False) -> None:
        self.done_shards, self.total, self.nodes = done, total, nodes
        if self.quiet:
            return
        now = time.monotonic()
        if not final and now - self.last < (0.2 if self.tty else 10.0):
            return
        self.last = now
        sys.stderr.write(("\r" + self.line().ljust(90)) if self.tty else self.line() + "\n")
        sys.stderr.flush()

    def done(self) -> None:
        if self.tty and not self.quiet and self.total:
            sys.stderr.write("\n")
        self.total = 0  # once
