"""The worker subprocess: one framework, many cases, answers over a pipe.

``python -m conformance.worker SPEC DEVICE PRECISION`` loads the adapter ``SPEC``
(``module:Class``), applies the device and precision, and then serves requests read from
stdin. Messages are length-prefixed pickles (:func:`write_frame`, :func:`requests`). The
original stdout carries only replies; anything the framework prints goes to stderr. A request
that kills the process (segfault, abort) is the parent's to record as ``crash``.
"""

from __future__ import annotations

import os
import pickle
import queue
import re
import stat
import struct
import sys
import threading
import time
import traceback

import numpy as np

import reference  # noqa: F401 - the harness's imports at start-up, never inside a case's time limit
import reference.conv  # noqa: F401
from conformance.adapters import load
from conformance.case import Case
from conformance.programs import (
    ProgramError,
    prefix_case,
    reference_bounds,
    reference_outcome,
)
from conformance.unsupported import Unsupported, unsupported_reason

_HEADER = struct.Struct("<Q")
# the worker that runs the reference side of program cases (programs are code: isolated like frameworks)
REFERENCE_SPEC = "@reference"


def write_frame(fd: int, obj) -> None:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    data = _HEADER.pack(len(body)) + body
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, need = [], n
    while need:
        chunk = os.read(fd, need)
        if not chunk:
            return None
        chunks.append(chunk)
        need -= len(chunk)
    return b"".join(chunks)


def _read_body(fd: int) -> bytes | None:
    head = _read_exact(fd, _HEADER.size)
    return None if head is None else _read_exact(fd, _HEADER.unpack(head)[0])


def requests(fd: int = 0):
    """The requests read from ``fd``, in order, until end of input.

    A thread reads the pipe as fast as the parent writes, whatever this process is doing: the
    parent keeps several requests in flight, and a request larger than the pipe's buffer, written
    while this process blocks writing a reply larger than the other pipe's buffer (the parent not
    reading it until its write completes), would otherwise deadlock both processes. Bodies are
    unpickled here, in the serving thread, one at a time as they are served.
    """
    bodies: queue.SimpleQueue = queue.SimpleQueue()

    def pull():
        while True:
            body = _read_body(fd)
            bodies.put(body)
            if body is None:
                return

    threading.Thread(target=pull, name="requests", daemon=True).start()
    while True:
        body = bodies.get()
        if body is None:
            return
        yield pickle.loads(body)


#: where Dynamo's generic advice and the user's stack begin in a torch.compile error, after the
#: error it explains ("... got RuntimeError(\"vmap over torch.allclose isn't supported yet\")")
_DYNAMO_TRAILER = re.compile(r"\n\s*(Hint:|Developer debug context:|For more details about this graph break|from user code:)")


def without_dynamo_trailer(text: str) -> str:
    """A torch.compile error without its trailer (hints, the user's stack: the harness's own code),
    which would otherwise push the error its tracing hit out of the middle of a shortened message."""
    trailer = _DYNAMO_TRAILER.search(text) if "TORCHDYNAMO" in text else None
    return text[: trailer.start()] if trailer else text


def handle(adapter, message: dict) -> dict:
    case = message["case"]  # a Case (the campaign's, pickled: already validated) or its dict
    if not isinstance(case, Case):
        case = Case.from_dict(case, source=message.get("source", "<campaign>"))
    check = message["check"]
    reason = adapter.why_unsupported(case, check)
    if reason:
        return {"status": "unsupported", "reason": reason}
    data = case.arrays()
    data.update(message.get("data") or {})  # arrays the campaign made already (the same values)
    for name in case.arrays_for(check):  # make the data outside the timed region
        data[name]
    # a first compile (a cache miss of a compiling mode) gets the mode's documented allowance
    allowance = float(adapter.compile_allowance) if adapter.will_compile(case, check) else 0.0
    adapter.start_request()
    _announce_start(allowance)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        outputs = adapter.run(case, check, data)
    except Exception as exc:  # the framework rejected the input (compared with the reference)
        if type(exc).__name__ == "Unsupported" and type(exc).__module__ == Unsupported.__module__:
            return {"status": "unsupported", "reason": unsupported_reason(exc)}
        where = {}
        if isinstance(exc, ProgramError):  # a program that raised: its line
            where = {"line": exc.line, "text": exc.text}
            kind, text = exc.type_name, exc.message
        else:
            kind, text = type(exc).__name__, without_dynamo_trailer(str(exc))
        text = text if len(text) < 1500 else f"{text[:500]} ... {text[-1000:]}"
        return {
            "status": "error",
            "type": kind,
            "message": text,
            "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu,
            "allowance": allowance,
            **adapter.timing(),
            **where,
        }
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if check == "error":
        outputs = {}
    judged_to = getattr(outputs, "judged_to", None)  # a program run up to the statement that raises
    return {
        "status": "ok",
        **({"judged_to": judged_to} if judged_to else {}),
        "outputs": {k: _to_numpy(v) for k, v in (outputs or {}).items()},
        "seconds": seconds,
        "cpu_seconds": cpu,  # the framework's CPU time (a busy machine inflates ``seconds``, not this)
        "allowance": allowance,
        **adapter.timing(),
    }


_REPLY_FD = None


def stderr_size() -> int | None:
    """The size of this worker's stderr log as it writes an answer, with its own buffer flushed
    (None where stderr is not a file). The parent quotes a crash's stderr from the previous
    answer's size on: it may read that answer only after this worker has run on, and died, on the
    requests queued after it, when the log's size it would see then already holds the dying
    request's last lines."""
    try:
        sys.stderr.flush()
        status = os.fstat(2)
    except (OSError, ValueError):
        return None
    return status.st_size if stat.S_ISREG(status.st_mode) else None


def _announce_start(allowance: float = 0.0) -> None:
    """Tell the parent the framework's own work starts now: its deadline runs from this instant.

    ``started_at`` is this machine's monotonic clock (one clock for every process on Linux), so
    the parent's deadline does not include pickling, data generation or a worker restart.
    ``allowance``: seconds the parent adds to the limit because this request compiles first (a
    compiling execution mode's cache miss; the compile is the framework's own work, inside the
    timed region).
    """
    if _REPLY_FD is not None:
        write_frame(_REPLY_FD, {"status": "started", "started_at": time.monotonic(), "allowance": allowance})


def reference_side(message: dict) -> dict:
    """The reference's outcome for a program case, computed in this (isolated) process."""
    case = Case.from_dict(message["case"], source=message.get("source", "<campaign>"))
    _announce_start()
    start = time.perf_counter()
    status, value = reference_outcome(case)

    def derived_bounds(case):
        if not message.get("precisions"):  # the derived bound in each framework's arithmetic
            return []
        try:
            return reference_bounds(case, message["precisions"])
        except Exception as exc:  # noqa: BLE001 - the error model's own failure: the harness's, reported
            return f"the reference's error model raised {type(exc).__name__}: {exc}"

    bounds = derived_bounds(case) if status == "ok" else []
    if status == "raises":  # ProgramError does not pickle (its __init__ takes fields): send the fields
        prefix = prefix_case(case, value)  # what a framework without autograd state is judged on
        prefix_status, prefix_value = reference_outcome(prefix) if prefix else (None, None)
        value = {
            "type_name": value.type_name,
            "message": value.message,
            "line": value.line,
            "text": value.text,
            "statement": value.statement,
        }
        if prefix_status == "ok":
            value["prefix"] = {"outputs": prefix_value, "bounds": derived_bounds(prefix)}
    return {
        "status": "ok",
        "outcome": [status, value],
        "bounds": bounds,
        "seconds": time.perf_counter() - start,
    }


def _to_numpy(v):
    if v is not None and "complex" in str(getattr(v, "dtype", "")):  # complex results stay complex128
        if hasattr(v, "resolve_conj"):  # a torch conjugate (or negative) view: its values
            v = v.detach().resolve_conj().resolve_neg().cpu()
        return np.asarray(v, dtype=np.complex128)
    return None if v is None else np.asarray(v, dtype=np.float64)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    global _REPLY_FD
    spec, device, precision = argv
    reply_fd = os.dup(1)
    _REPLY_FD = reply_fd
    os.dup2(2, 1)  # framework chatter on stdout must not corrupt the reply stream
    sys.stdout = sys.stderr
    if spec == REFERENCE_SPEC:
        return _serve_reference(reply_fd)
    try:
        adapter = load(spec)
        settings = adapter.setup(device=device, precision=precision)
        hello = {
            "status": "ok",
            "name": adapter.name,
            # a plain str: torch.__version__ is a str subclass, and unpickling it imports torch
            "version": str(adapter.version()),
            "settings": settings,
            "devices": adapter.devices(),
            "pid": os.getpid(),
        }
    except Exception as exc:
        hello = {
            "status": "error",
            "type": type(exc).__name__,
            "message": str(exc),
            "traceback": traceback.format_exc(),
        }
    if hello["status"] == "ok":  # (the harness's own imports ran at start-up, before the adapter's)
        hello["worker_cpu"] = time.process_time()
    write_frame(reply_fd, hello)
    if hello["status"] != "ok":
        return 1
    for message in requests(0):
        if message.get("cmd") == "exit":
            break
        try:
            reply = handle(adapter, message)
        except SystemExit as exc:  # a program case that calls sys.exit(): the framework side's outcome
            reply = {
                "status": "error",
                "type": "SystemExit",
                "message": f"the program called exit({exc.code!r})",
            }
        except Exception as exc:  # a harness-side problem (bad case): report, keep serving
            reply = {
                "status": "harness_error",
                "type": type(exc).__name__,
                "message": str(exc),
                "traceback": traceback.format_exc(),
            }
        reply["worker_cpu"] = time.process_time()  # this process's CPU so far (the harness's accounting)
        reply["finished_at"] = time.monotonic()  # (the parent may read it late: it judges the limit by this)
        reply["stderr_size"] = stderr_size()
        write_frame(reply_fd, reply)
    return 0


def _serve_reference(reply_fd) -> int:
    write_frame(
        reply_fd,
        {
            "status": "ok",
            "name": "reference",
            "version": "refgrad reference",
            "settings": {"device": "cpu"},
            "devices": ["cpu"],
            "pid": os.getpid(),
        },
    )
    for message in requests(0):
        if message.get("cmd") == "exit":
            break
        try:
            reply = reference_side(message)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt from a program: a verdict
            reply = {
                "status": "harness_error",
                "type": type(exc).__name__,
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(),
            }
        reply["finished_at"] = time.monotonic()
        reply["stderr_size"] = stderr_size()
        write_frame(reply_fd, reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
