"""One shard, run on a node: the local runner's worker-process isolation, results streamed out.

This module runs inside a Ray worker process (it does not need Ray itself, so it is tested without a
cluster). A shard is run by a :class:`~conformance.runner.Campaign` of its own whose results go to a
queue instead of a file: the same code judges a case here as in a local run, and a framework that
segfaults or hangs is the same ``crash`` / ``timeout`` verdict of that case, never a lost shard.

Framework worker processes are kept between the shards a Ray worker process runs (one pool per
process, at most ``POOL_SIZE`` frameworks), so a framework is imported once per Ray worker, not once
per shard. When the Ray worker dies, its framework workers read end-of-file and exit.

Streaming and retries. :func:`execute` yields exactly ``shard.max_records + 2`` items: a hello (the
node and process), then up to ``max_records`` batches of results as they are recorded (padded with
empty batches), then a final item holding *every* result of the attempt. Ray retries a task whose
worker or node died and, for a generator, skips the items of the new attempt whose index the caller
already received; a fixed item count puts the complete final item past anything an earlier attempt
sent, so nothing is lost whatever the earlier attempt had streamed, and the driver drops what it
already has by the result digest.
"""

from __future__ import annotations

import os
import queue
import shutil
import socket
import tempfile
import threading
import time
from collections import OrderedDict
from pathlib import Path

from conformance.case import Case
from conformance.runner import Campaign, Worker, WorkerGone, result_key
from conformance.worker import REFERENCE_SPEC

# frameworks whose worker process a Ray worker keeps between shards (each holds a framework in memory)
POOL_SIZE = 2
# seconds between streamed batches (a batch also goes out when the shard ends)
FLUSH_SECONDS = 0.5
# fields of a recorded result a resumed shard needs to know it is done (and which failure it was)
DONE_FIELDS = ("case_id", "case_hash", "framework", "check", "verdict", "phase", "worst", "max_ratio")

_POOL: OrderedDict = OrderedDict()  # (name, spec, device, precision) -> Worker
_REFERENCE = {}


class NodeUnfit(Exception):
    """The framework cannot start on this node: Ray retries the shard (maybe elsewhere)."""


def done_record(rec: dict) -> dict:
    """What a shard needs of an already recorded result (--resume): its key and its failure kind."""
    out = {k: rec[k] for k in DONE_FIELDS if k in rec}
    if "reason" in rec:
        out["reason"] = str(rec["reason"])[:400]
    return out


def _root() -> Path:
    """This node's scratch directory for worker logs and shard directories.

    ``$REFGRAD_SHARD_DIR`` if set; inside Ray, ``refgrad/`` in the node's Ray session directory
    (beside Ray's own logs, and gone with them); else the temporary directory.
    """
    base = os.environ.get("REFGRAD_SHARD_DIR")
    root = Path(base) / f"refgrad-shards-{os.getuid()}" if base else None
    if root is None:
        try:
            import ray

            if ray.is_initialized():
                from ray._private.worker import _global_node  # the session directory (no public API)

                root = Path(_global_node.get_session_dir_path()) / "refgrad"
        except Exception:  # noqa: BLE001 - no usable Ray session: the temporary directory
            root = None
    if root is None:
        root = Path(tempfile.gettempdir()) / f"refgrad-shards-{os.getuid()}"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _node() -> str:
    """The Ray node id inside a Ray worker; the host name outside Ray (never starts Ray itself)."""
    try:
        import ray

        if ray.is_initialized():
            return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - no usable Ray here
        pass
    return socket.gethostname()


def _worker(name, spec, device, precision):
    """This process's worker for a framework (kept between shards; the oldest closed past POOL_SIZE)."""

    key = (name, spec, device, precision)
    if key in _POOL:
        _POOL.move_to_end(key)
        return _POOL[key]
    while len(_POOL) >= POOL_SIZE:
        _, old = _POOL.popitem(last=False)
        old.close()
    _POOL[key] = Worker(name, spec, device, precision, _root() / f"logs-{os.getpid()}")
    return _POOL[key]


def _reference_worker():
    if "w" not in _REFERENCE:
        _REFERENCE["w"] = Worker(
            "reference", REFERENCE_SPEC, "cpu", "highest", _root() / f"logs-{os.getpid()}"
        )
    return _REFERENCE["w"]


def _info(worker) -> dict:
    return {k: worker.info[k] for k in ("version", "settings", "devices") if k in worker.info}


def probe(name: str, spec: str, device: str, precision: str) -> dict:
    """Start a framework's worker on this node: ``{"info": ...}`` or ``{"error": why}`` (plus the node)."""

    worker = _worker(name, spec, device, precision)
    try:
        if not worker.alive():
            worker.start()
    except (RuntimeError, WorkerGone) as exc:
        _POOL.pop((name, spec, device, precision), None)
        return {"error": str(exc), "node": _node(), "host": socket.gethostname()}
    return {"info": _info(worker), "node": _node(), "host": socket.gethostname()}


class _Sink:
    """Stands in for the campaign's ResultsWriter: each recorded result goes to the shard's queue."""

    def __init__(self, out: queue.Queue):
        self.out = out

    def write(self, rec: dict) -> None:
        found = None
        if rec.get("found"):  # a shrunk failure saved on this node: its case file travels with it
            try:
                found = Path(rec["found"]).read_text(encoding="utf-8")
            except OSError:
                found = None
        self.out.put((rec, found))

    def sync(self) -> None:
        pass

    def close(self) -> None:
        pass


def _campaign(shard, settings: dict, scratch: Path, out: queue.Queue, done):
    campaign = Campaign(
        scratch,
        {shard.framework: shard.spec},
        device=settings["device"],
        precision=settings["precision"],
        timeout=settings["timeout"],
        found_dir=scratch / "found",
        memory_budget=settings.get("memory_budget"),
    )
    campaign.writer.close()
    campaign.writer = _Sink(out)
    campaign.workers = {
        shard.framework: _worker(shard.framework, shard.spec, settings["device"], settings["precision"])
    }
    campaign.reference_worker = _reference_worker()
    for rec in done or ():
        if rec.get("framework") == shard.framework:
            campaign.done.add(result_key(rec), rec)
    return campaign


def _work(shard, campaign) -> None:
    if shard.unit is not None:
        u = shard.unit
        campaign.fuzz(
            [shard.framework], u.check, u.strategy(), u.max_examples, u.seed, u.max_shrinks, u.simplest
        )
    else:
        cases = [Case.from_dict(c, source=f"<curated {c.get('id')}>") for c in shard.cases]
        campaign.run_cases(cases, phase="curated")


def execute(shard, settings: dict, done=None):
    """Run ``shard``; yield exactly ``shard.max_records + 2`` items (module docstring)."""

    slots = shard.max_records
    hello = {"node": _node(), "host": socket.gethostname(), "pid": os.getpid(), "records": []}
    yield {**hello, "kind": "hello"}
    scratch = Path(tempfile.mkdtemp(prefix=f"shard{shard.index}-", dir=_root()))
    out: queue.Queue = queue.Queue()
    campaign = _campaign(shard, settings, scratch, out, done)
    worker = campaign.workers[shard.framework]
    seen = max(len(worker.processes) - 1, 0)  # the process this node's pool kept, and those after it
    try:
        try:
            if not worker.alive():
                worker.start()
        except (RuntimeError, WorkerGone) as exc:
            _POOL.pop((shard.framework, shard.spec, settings["device"], settings["precision"]), None)
            raise NodeUnfit(f"{shard.framework} could not start on {hello['host']}: {exc}") from None
        restarts = worker.restarts
        failure: list = []

        def run():
            try:
                _work(shard, campaign)
            except BaseException as exc:  # noqa: BLE001 - handed to the generator, raised there
                failure.append(exc)
            finally:
                out.put(None)

        thread = threading.Thread(target=run, name=f"shard-{shard.index}", daemon=True)
        start = time.monotonic()
        thread.start()
        records, batch, sent, finished = [], [], 0, False
        last = time.monotonic()
        while not finished:
            try:
                item = out.get(timeout=FLUSH_SECONDS)
            except queue.Empty:
                item = ()
            if item is None:
                finished = True
            elif item:
                records.append(item)
                batch.append(item)
            if batch and sent < slots and (finished or time.monotonic() - last >= FLUSH_SECONDS):
                yield {**hello, "kind": "batch", "records": batch}
                sent, batch, last = sent + 1, [], time.monotonic()
        thread.join()
        if failure:
            raise failure[0]
        for _ in range(sent, slots):  # the fixed item count (module docstring)
            yield {**hello, "kind": "pad"}
        yield {
            **hello,
            "kind": "final",
            "records": records,
            "info": _info(worker) if worker.info else None,
            "restarts": max(worker.restarts - restarts, 0),
            "processes": [{**p, "host": hello["host"]} for p in worker.processes[seen:]],
            "seconds": time.monotonic() - start,
        }
    finally:
        campaign.outdir.release()
        shutil.rmtree(scratch, ignore_errors=True)
