"""A run owns its output directory: lock, manifest, results writer, atomic writes.

* :class:`OutputDir` takes an exclusive ``flock`` on ``DIR/.lock`` (the file holds the holder's pid
  and host, for the refusal message); the kernel drops it when the holder dies, so a killed run
  never leaves a stale lock. A second run into the same directory is refused.
* A directory that already holds results needs ``resume`` (the manifest must match: seed,
  frameworks, checks, dtypes, ops, device, precision, then the framework versions) or
  ``overwrite``, which moves the old results, report, reproducers and manifest into
  ``DIR/previous/<UTC time>/`` (nothing is deleted).
* :class:`ResultsWriter` appends one line per result and flushes it, fsyncs every
  ``FSYNC_EVERY`` lines and at close, and raises :class:`OutputLost` when a write fails (ENOSPC,
  EIO, EFBIG) or when ``results.jsonl`` or the directory disappeared or was replaced under it.
* :func:`atomic_write` writes a temporary file beside the target, fsyncs it, then renames it.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path

MANIFEST = "manifest.json"
RESULTS = "results.jsonl"
LOCK = ".lock"
# what belongs to a campaign: moved aside together by --overwrite
OWNED = (RESULTS, "report.json", "index.html", "reproducers", MANIFEST, "logs", "found")
# manifest keys that must match for --resume (framework versions are checked once workers start)
RESUME_KEYS = ("kind", "seed", "frameworks", "checks", "dtypes", "ops", "device", "precision", "cases")
FSYNC_EVERY = 64


class OutputError(Exception):
    """The output directory cannot be used (usage error: nothing was run)."""


class OutputLost(Exception):
    """Results could not be kept mid-run (the directory vanished, a write failed)."""


def check_writable(path, flag: str, is_dir: bool = True) -> Path:
    """Create ``path`` (a directory) or its parent and prove a file can be written there."""
    path = Path(path)
    target = path if is_dir else path.parent
    if is_dir and path.exists() and not path.is_dir():
        raise OutputError(f"{flag}: {str(path)!r} exists and is not a directory")
    if not is_dir and path.is_dir():
        raise OutputError(f"{flag}: {str(path)!r} is a directory, a file path is needed")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"{flag}: {str(target)!r}: a path component is a file, not a directory") from None
    except OSError as exc:
        raise OutputError(f"{flag}: cannot create {str(target)!r}: {exc.strerror or exc}") from None
    probe = target / f".refgrad-write-probe-{os.getpid()}"
    try:
        with open(probe, "w") as f:
            f.write("probe")
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"{flag}: {str(target)!r} is not writable: {exc.strerror or exc}") from None
    return path


# a directory holding one of these is a run's output directory (or a report's)
RUN_MARKERS = (MANIFEST, RESULTS, "report.json", LOCK)
# what a run (or ``report``) writes, rewrites or moves inside its directory: no other output may go there
# (``found/`` is not among them: ``--found-dir OUT/found`` keeps a run's shrunk cases beside it)
RUN_WRITES = (RESULTS, "report.json", "index.html", MANIFEST, LOCK, "reproducers", "logs", "previous")


def _resolved(path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser())).resolve()


def same_path(a, b) -> bool:
    """Whether ``a`` and ``b`` name the same file or directory (however spelled, links and hard links)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return _resolved(a) == _resolved(b)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def owned_by_run(path, out_dirs=()) -> str | None:
    """What ``path`` is if a run owns it (a file or folder that ``run``/``report`` writes in an output
    directory: one of ``out_dirs``, or any directory that holds a run's results), else None."""
    path = _resolved(path)
    outs = [_resolved(d) for d in out_dirs]
    for d in [*outs, *path.parents]:
        if d not in path.parents:
            continue
        first = path.relative_to(d).parts[0]
        if first in RUN_WRITES and (d in outs or any((d / m).exists() for m in RUN_MARKERS)):
            return f"{first!r} of the run directory {str(d)!r}, which refgrad writes itself"
    return None


def _check_not_input(path, flag: str, inputs) -> None:
    """``inputs``: (path, what) pairs this command reads; a directory input covers everything in it."""
    target = _resolved(path)
    for item, what in inputs:
        if item is None:
            continue
        if same_path(path, item) or (Path(item).is_dir() and _inside(target, _resolved(item))):
            raise OutputError(
                f"{flag}: {str(path)!r} is {what} ({str(item)!r}), which this command reads: "
                "an output may not overwrite or write into an input"
            )


def check_output_file(path, flag: str, *, inputs=(), out_dirs=()) -> Path:
    """A file this command will write (atomically): refused, before any work, when it names a
    directory, an input of the command (``inputs``: (path, what) pairs), a file a run owns, or a
    place that cannot be written. Creates the missing parent directories."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{flag}: {str(path)!r} is a directory; a file path is needed")
    _check_not_input(path, flag, inputs)
    owner = owned_by_run(path, out_dirs)
    if owner:
        raise OutputError(f"{flag}: {str(path)!r} is {owner}; choose another path")
    check_writable(path, f"{flag} {str(path)!r}", is_dir=False)  # names the value and its directory
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"{flag}: {str(path)!r} exists and is not writable")
    return path


def check_output_dir(path, flag: str, *, inputs=(), out_dirs=()) -> Path:
    """A directory this command writes into: refused, before any work, when it is a file, an input of
    the command or inside one, inside what a run owns (e.g. another run's ``reproducers/``), or not
    writable. Creates it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputError(f"{flag}: {str(path)!r} exists and is not a directory")
    _check_not_input(path, flag, inputs)
    owner = owned_by_run(path, out_dirs)
    if owner:
        raise OutputError(f"{flag}: {str(path)!r} is in {owner}; choose another directory")
    return check_writable(path, flag)


def atomic_write(path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` so that a reader sees the old file or the new one, never a torn one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        with open(tmp, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _holder(lock_path: Path) -> str:
    try:
        info = json.loads(lock_path.read_text() or "{}")
        return f"pid {info.get('pid')} on host {info.get('host')} (since {info.get('since')})"
    except (OSError, ValueError):
        return "another process"


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


class OutputDir:
    """Exclusive use of a run's output directory; see the module docstring."""

    def __init__(self, path, *, resume: bool = False, overwrite: bool = False, manifest: dict | None = None):
        if resume and overwrite:
            raise OutputError("--resume and --overwrite exclude each other")
        self.path = check_writable(path, "--out")
        self.flag = "--out"
        self.lock_path = self.path / LOCK
        self._lock_fd = None
        self.moved_to = None
        self._acquire()
        try:
            self._prepare(resume, overwrite, manifest)
        except BaseException:
            self.release()
            raise

    @classmethod
    def lock_only(cls, path, flag: str = "--out") -> OutputDir:
        """Hold the directory's lock without touching its contents (``report`` regenerating in place;
        the pytest plugin's ``--refgrad-report``, named by ``flag`` in its messages)."""
        self = cls.__new__(cls)
        self.path, self.flag = check_writable(path, flag), flag
        self.lock_path, self._lock_fd, self.moved_to = self.path / LOCK, None, None
        self._acquire()
        return self

    # -- the lock ---------------------------------------------------------------------------------
    def _acquire(self) -> None:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise OutputError(
                    f"{self.flag}: {str(self.path)!r} is in use by another run ({_holder(self.lock_path)}); "
                    f"wait for it or choose another {self.flag}"
                ) from None
            raise
        os.ftruncate(fd, 0)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": _stamp()}
        os.write(fd, json.dumps(info).encode())
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            try:
                os.ftruncate(self._lock_fd, 0)
            except OSError:
                pass
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None

    # -- earlier results ----------------------------------------------------------------------------
    def _has_results(self) -> bool:
        results = self.path / RESULTS
        return (results.exists() and results.stat().st_size > 0) or (self.path / "report.json").exists()

    def _prepare(self, resume: bool, overwrite: bool, manifest: dict | None) -> None:
        if not self._has_results():
            self._write_manifest(manifest)
            return
        if overwrite:
            self.moved_to = self._move_aside()
            self._write_manifest(manifest)
            return
        if not resume:
            raise OutputError(
                f"--out: {str(self.path)!r} already holds the results of an earlier run; pass --resume "
                "to continue it, or --overwrite to move them aside (to previous/) and start afresh"
            )
        old = self.read_manifest()
        if old is None:
            raise OutputError(
                f"--resume: {str(self.path)!r} holds results but no readable {MANIFEST}: they are not a "
                "campaign this refgrad can continue; pass --overwrite to move them aside"
            )
        if manifest is not None:
            diffs = manifest_differences(old, manifest, RESUME_KEYS)
            if diffs:
                raise OutputError(
                    "--resume: this run differs from the recorded campaign in "
                    + "; ".join(diffs)
                    + " (run with the same flags, or --overwrite to start afresh)"
                )

    def keep_earlier(self) -> Path | None:
        """Before results are written afresh into a held directory: move any earlier run's results,
        report, reproducers and manifest to ``previous/<UTC time>/``; return where (None: none)."""
        if self._has_results():
            self.moved_to = self._move_aside()
        return self.moved_to

    def _move_aside(self) -> Path:
        dest = self.path / "previous" / _stamp()
        n = 0
        while dest.exists():
            n += 1
            dest = self.path / "previous" / f"{_stamp()}-{n}"
        dest.mkdir(parents=True)
        for name in OWNED:
            src = self.path / name
            if src.exists():
                os.replace(src, dest / name)
        return dest

    # -- the manifest -------------------------------------------------------------------------------
    def read_manifest(self) -> dict | None:
        return read_manifest(self.path)

    def _write_manifest(self, manifest: dict | None) -> None:
        if manifest is not None:
            atomic_write(self.path / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))

    def check_versions(self, versions: dict) -> None:
        """On resume: the framework versions must be those recorded; then they are recorded."""
        old = self.read_manifest() or {}
        recorded = old.get("versions")
        if recorded:
            diffs = manifest_differences({"versions": recorded}, {"versions": versions}, ("versions",))
            if diffs:
                raise OutputError(
                    "--resume: " + "; ".join(diffs) + " (a resumed campaign must not mix versions)"
                )
        old["versions"] = versions
        self._write_manifest(old)

    def record_workers(self, info: dict) -> None:
        """The started workers' versions and settings (device, TF32, oneDNN, CPU capability), kept in
        the manifest as soon as they are known: a report rebuilt from an interrupted run (``report
        DIR``) judges with them, and known entries that name a setting still apply there. Each
        framework's ``processes`` (every worker process started, restarts included: pid, start
        time, version, settings, how it ended) are added to those recorded before, so that a
        resumed run's manifest still describes the processes behind its earlier results."""
        old = self.read_manifest()
        if old is None:
            return
        before = old.get("workers") if isinstance(old.get("workers"), dict) else {}
        workers = {}
        for name, now in info.items():
            earlier = before.get(name) if isinstance(before.get(name), dict) else {}
            processes = merge_processes(earlier.get("processes") or [], now.get("processes") or [])
            workers[name] = {**now, "processes": processes} if processes else now
        old["workers"] = workers
        self._write_manifest(old)


def merge_processes(earlier: list, later: list) -> list:
    """Two lists of worker processes (:attr:`conformance.runner.Worker.processes`) as one: a process
    in both (the same host, pid and start) is the later list's entry, in its first place."""

    def key(process):
        return (process.get("host"), process.get("pid"), process.get("started"))

    merged = {key(p): p for p in earlier if isinstance(p, dict)}
    merged.update((key(p), p) for p in later if isinstance(p, dict))
    return list(merged.values())


def read_manifest(directory) -> dict | None:
    """A run directory's manifest.json (None when missing or unreadable)."""
    try:
        data = json.loads((Path(directory) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("kind") else None


def manifest_differences(old: dict, new: dict, keys) -> list[str]:
    out = []
    for key in keys:
        if old.get(key) != new.get(key):
            out.append(f"{key}: recorded {old.get(key)!r}, now {new.get(key)!r}")
    return out


class ResultsWriter:
    """Appends result lines to ``results.jsonl``: flushed per line, fsynced at checkpoints."""

    def __init__(self, path):
        self.path = Path(path)
        self.dir = self.path.parent
        try:
            self._file = open(self.path, "a", encoding="utf-8")
            self._ino = os.fstat(self._file.fileno()).st_ino
            self._dir_ino = os.stat(self.dir).st_ino
        except OSError as exc:
            raise OutputLost(f"cannot open {self.path} for appending: {exc.strerror or exc}") from None
        self.lines = 0

    def _check_in_place(self) -> None:
        try:
            st = os.stat(self.path)
            dst = os.stat(self.dir)
        except OSError:
            raise OutputLost(f"{self.path} disappeared during the run (was the directory deleted?)") from None
        if st.st_ino != self._ino or dst.st_ino != self._dir_ino:
            raise OutputLost(f"{self.path} was replaced by another file during the run")

    def _write(self, text: str) -> None:  # the one place bytes are written (fault tests patch it)
        self._file.write(text)
        self._file.flush()

    def write(self, record: dict) -> None:
        line = json.dumps(record, allow_nan=True) + "\n"
        self._check_in_place()
        try:
            self._write(line)
            self.lines += 1
            if self.lines % FSYNC_EVERY == 0:
                os.fsync(self._file.fileno())
        except OSError as exc:
            raise OutputLost(
                f"writing {self.path} failed: {exc.strerror or exc} (errno {exc.errno}); "
                "the results recorded before are intact"
            ) from None

    def sync(self) -> None:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as exc:
            raise OutputLost(f"syncing {self.path} failed: {exc.strerror or exc}") from None

    def close(self) -> None:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except (OSError, ValueError):
            pass
        try:
            self._file.close()
        except OSError:
            pass
