"""The Ray executor (issue #17): the same results as the local executor, on a real local Ray cluster.

A head node and a worker node on loopback (``ray.cluster_utils.Cluster``, in a temporary directory),
one small campaign on two frameworks: plain JAX and :class:`JaxPlanted` (a planted vjp bug that
Hypothesis shrinks, and an abort on curated cases named ``abort-*``: a ``crash`` verdict). Checked
against the local executor's run of the same campaign: the set of (case, content hash, framework,
check, dtype, verdict, phase) is equal, no result is recorded twice, and the shrunk cases saved to
``--found-dir`` are the same files. Faults: a Ray worker process running a shard is SIGKILLed
mid-run (Ray retries the shard); a driver on a local Ray instance is SIGTERMed (exit 130), a resumed
driver on the cluster is SIGKILLed, and a second ``--resume`` completes the campaign.
Bad input: an unreachable ``--ray-address`` and Ray not importable both exit 2 in seconds.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.adapters.jax_adapter import JaxAdapter

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PLANTED = "test_ray:JaxPlanted"


class JaxPlanted(JaxAdapter):
    """JAX with a planted bug (``grad_input`` of vjp 1.5 times too large on inputs of 6 elements or more)
    and an abort on the forward check of ``abort-*`` cases."""

    name = "jax-planted"

    def run_record(self, case, check, a):
        if case.id.startswith("abort") and check == "forward":
            os.abort()  # as a failed C++ assertion would: the worker dies, the case is a crash
        out = super().run_record(case, check, a)
        if check == "vjp" and sum(math.prod(s) for s in case.shapes.values()) >= 6:
            out = {k: v * 1.5 if k == "grad_input" else v for k, v in out.items()}
        return out


# -- no cluster needed --------------------------------------------------------------------------------
def test_shard_resources_cuda_asks_one_gpu_cpu_none():
    pytest.importorskip("ray")
    import ray

    from conformance.executors.ray import MAX_RETRIES, shard_options
    from conformance.executors.shard import NodeUnfit

    cpu, cuda = shard_options("cpu"), shard_options("cuda")
    assert cpu["num_gpus"] == 0 and cpu["num_cpus"] == 1
    assert cuda["num_gpus"] == 1 and cuda["num_cpus"] == 1
    for opts in (cpu, cuda):
        assert opts["max_retries"] == MAX_RETRIES > 0 and NodeUnfit in opts["retry_exceptions"]

    def gen():
        yield 1

    for opts in (cpu, cuda):  # Ray validates them on a generator task (no cluster needed)
        ray.remote(gen).options(**opts)


def test_shards_are_deterministic_and_one_per_framework_and_unit():
    from conformance.executors.plan import fuzz_units, make_shards
    from conformance.strategies import draw_examples, record_cases

    units = fuzz_units(["mul", "add"], ["mul", "add"], ["forward", "vjp"], ["float64"], 5, 3)
    assert [u.label for u in units] == ["mul:forward", "mul:vjp", "add:forward", "add:vjp"]
    curated = draw_examples(record_cases("mul", ["float64"], ("forward", "vjp")), 40, seed=1)
    fws = {"jax": "a:B", "torch": "c:D"}
    one, two = make_shards(fws, curated, units, chunk=16), make_shards(fws, curated, units, chunk=16)
    assert one == two
    assert [s.index for s in one] == list(range(len(one)))
    for fw in fws:
        mine = [s for s in one if s.framework == fw]
        assert [s.unit for s in mine if s.unit] == units
        chunks = [s for s in mine if not s.unit]
        assert sum(len(s.cases) for s in chunks) == 40 and all(s.max_records <= 16 for s in chunks)
    assert len({s.id for s in one}) == len(one)


def test_a_shard_yields_a_fixed_count_and_its_last_item_holds_every_result(tmp_path, monkeypatch):
    """The retry contract (conformance.executors.shard): hello, max_records batches or pads, a final item
    with every result; so an attempt's final item lies past anything an earlier attempt streamed."""
    pytest.importorskip("jax")
    from conformance.executors import shard as shard_mod
    from conformance.executors.plan import FuzzUnit, Shard

    monkeypatch.setenv("REFGRAD_SHARD_DIR", str(tmp_path))
    shard = Shard(
        0,
        "jax",
        "conformance.adapters.jax_adapter:JaxAdapter",
        unit=FuzzUnit("record", "forward", ("float64",), 3, 7, "mul"),
    )
    settings = {"device": "cpu", "precision": "highest", "timeout": 60.0, "memory_budget": None}
    try:
        items = list(shard_mod.execute(shard, settings))
    finally:
        for worker in [*shard_mod._POOL.values(), *shard_mod._REFERENCE.values()]:
            worker.close()
        shard_mod._POOL.clear()
        shard_mod._REFERENCE.clear()
    assert len(items) == shard.max_records + 2
    assert [i["kind"] for i in items[:1] + items[-1:]] == ["hello", "final"]
    assert {i["kind"] for i in items[1:-1]} <= {"batch", "pad"}
    streamed = [rec for i in items[1:-1] for rec, _ in i["records"]]
    final = items[-1]["records"]
    assert streamed == [rec for rec, _ in final] and len(final) == 3
    assert {rec["verdict"] for rec, _ in final} == {"pass"} and items[-1]["info"]["version"]
    [process] = items[-1]["processes"]  # the worker process that ran it, for the driver's manifest
    assert process["host"] == items[0]["host"] and process["version"] == items[-1]["info"]["version"]
    assert not list(tmp_path.glob("*/shard0-*"))  # the shard's scratch directory is removed
    assert "ray" not in sys.modules or not sys.modules["ray"].is_initialized()  # outside Ray: no Ray started


def _cli(*args):
    from conformance import cli

    return cli.main([str(a) for a in args])


def test_ray_not_importable_says_what_to_install(monkeypatch, tmp_path, capsys):
    pytest.importorskip("jax")
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code = _cli(
        "run", "--frameworks", "jax", "--ops", "mul", "--checks", "forward", "--max-examples", 1,
        "--executor", "ray", "--out", tmp_path / "out", "--found-dir", tmp_path / "found", "--quiet",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "pip install refgrad[ray]" in err
    assert not (tmp_path / "out" / "results.jsonl").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind", ["refused", "no such host"])
def test_unreachable_ray_address_fails_fast_naming_it(kind, tmp_path, capsys):
    pytest.importorskip("ray")
    pytest.importorskip("jax")
    address = {
        "refused": f"127.0.0.1:{_free_port()}",
        "no such host": "no-such-host.invalid:6379",
    }[kind]
    start = time.monotonic()
    code = _cli(
        "run", "--frameworks", "jax", "--ops", "mul", "--checks", "forward", "--max-examples", 1,
        "--executor", "ray", "--ray-address", address, "--out", tmp_path / "out",
        "--found-dir", tmp_path / "found", "--quiet",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert time.monotonic() - start < 15
    assert f"--ray-address {address}" in err or f"--ray-address {address!r}" in err
    cause = {
        "refused": "connection refused",
        "no such host": "cannot resolve host",
    }
    assert cause[kind] in err
    assert not (tmp_path / "out" / "results.jsonl").exists()


RUN_RAY = ["run", "--frameworks", "jax", "--ops", "mul", "--checks", "forward", "--max-examples", 1,
           "--executor", "ray"]  # fmt: skip


@pytest.mark.parametrize(
    "address, says",
    [
        ("headnode", "is not an address"),
        ("127.0.0.1:99999", "port 99999 is out of range"),
        ("10.0.0.1:0", "port 0 is out of range"),
        ("ray://:6379", "is not an address"),
        ("10.0.0.1:6379:1", "is not an address"),
    ],
)
def test_a_malformed_ray_address_is_refused_when_parsed(address, says, tmp_path, capsys):
    """127.0.0.1:99999 would reach the resolver, which wraps the port to another one (34463)."""
    with pytest.raises(SystemExit) as exit_:
        _cli(*RUN_RAY, "--ray-address", address, "--out", tmp_path / "out", "--found-dir", tmp_path / "f")
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument --ray-address: {address!r}" in err and says in err
    assert "port from 1 to 65535" in err and not (tmp_path / "out").exists()


def test_ray_address_auto_without_a_cluster_says_no_cluster_was_found(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ray")
    pytest.importorskip("jax")
    from ray._private.services import canonicalize_bootstrap_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    try:
        if canonicalize_bootstrap_address("auto", None):
            pytest.skip("a Ray cluster is running on this machine: 'auto' finds it")
    except ConnectionError:
        pass  # none: what this test needs
    code = _cli(*RUN_RAY, "--ray-address", "auto", "--out", tmp_path / "out", "--found-dir", tmp_path / "f")
    err = capsys.readouterr().err
    assert code == 2, err  # an executor that cannot be used is a usage error, not OUTPUT_LOST (5)
    assert "--ray-address auto: no running Ray cluster was found on this machine" in err
    assert "an output" not in err and not (tmp_path / "out" / "results.jsonl").exists()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_stop_processes_stops_every_process_of_the_instance_and_nothing_else(tmp_path):
    """The cleanup logic alone, on a fake instance: a process naming the instance's directory that
    ignores SIGTERM, an orphan naming it (reparented away from the driver), a new child retitled
    ray::IDLE as Ray's workers are; an older Ray-named child and a new unrelated one survive."""
    from conformance.executors import ray as ray_exec

    temp_dir = tempfile.mkdtemp(prefix="refgrad-ray-", dir="/tmp")
    stubborn_code = "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
    older = subprocess.Popen(["bash", "-c", "exec -a ray::older-run sleep 120"])
    before = ray_exec.descendants(os.getpid())
    pidfile = tmp_path / "orphan.pid"
    stubborn = subprocess.Popen([sys.executable, "-c", stubborn_code, temp_dir])
    subprocess.run(  # the orphan: its parent (this shell) exits at once
        ["bash", "-c", f"{sys.executable} -c 'import time; time.sleep(120)' {temp_dir} </dev/null >/dev/null 2>&1 "
         f"& echo $! > {pidfile}"],
        check=True,
    )  # fmt: skip
    worker = subprocess.Popen(["bash", "-c", "exec -a ray::IDLE sleep 120"])
    bystander = subprocess.Popen(["sleep", "120"])
    orphan = int(pidfile.read_text())
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # until each has exec'd its final command line
            found = ray_exec.ray_processes(temp_dir, before)
            if {stubborn.pid, orphan, worker.pid} <= found:
                break
            time.sleep(0.05)
        stopped = ray_exec.stop_processes(temp_dir, before, grace=1.0)
        assert {stubborn.pid, orphan, worker.pid} <= stopped
        assert older.pid not in stopped and bystander.pid not in stopped
        for pid in (stubborn.pid, orphan, worker.pid):
            assert not _alive(pid), pid
        assert older.poll() is None and bystander.poll() is None
    finally:
        for proc in (older, stubborn, worker, bystander):
            proc.kill()
            proc.wait()
        if _alive(orphan):
            os.kill(orphan, signal.SIGKILL)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _marked(token: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment holds ``token``."""
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if token.encode() not in f.read():
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if _alive(int(name)):
            found[int(name)] = cmd
    return found


def _default_sigint():
    """A pytest-xdist worker ignores SIGINT, and an ignored signal stays ignored across exec: a
    driver started from it would never see the Ctrl-C the test sends (Python keeps an inherited
    SIG_IGN, as nohup relies on). A terminal starts commands with SIGINT at its default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize(
    "sig, phase, target",
    [
        (signal.SIGINT, "start", "group"),
        (signal.SIGTERM, "start", "driver"),
        (signal.SIGINT, "run", "group"),
        (signal.SIGTERM, "run", "driver"),
        # Ray's own processes die of a group SIGTERM, and ray.init then waits 30 s for them in C
        pytest.param(signal.SIGTERM, "start", "group", marks=pytest.mark.slow),
        pytest.param(signal.SIGINT, "agents", "group", marks=pytest.mark.slow),
        pytest.param(signal.SIGTERM, "agents", "group", marks=pytest.mark.slow),
    ],
)
def test_an_interrupted_local_ray_run_leaves_no_ray_process(sig, phase, target, tmp_path):
    """SIGINT/SIGTERM while the local Ray instance starts (its first processes up; or its agents up,
    ray.init not yet returned) or while shards run, sent to the driver alone (kill PID) or to its
    process group (Ctrl-C in a terminal): exit 130 and no process of the run's Ray instance remains."""
    pytest.importorskip("ray")
    pytest.importorskip("jax")
    token = f"refgrad-interrupt-{uuid.uuid4().hex}"
    env = {**os.environ, "REFGRAD_RAY_INTERRUPT_TEST": token, "PYTHONPATH": str(ROOT)}
    env.pop("RAY_ADDRESS", None)
    argv = [sys.executable, "-m", "conformance", *map(str, RUN_RAY), "--ray-workers", "1", "--quiet",
            "--out", tmp_path / "out", "--found-dir", tmp_path / "found"]  # fmt: skip
    driver = subprocess.Popen(  # as a terminal starts a command: SIGINT at its default disposition
        argv,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_default_sigint,
    )
    leftover = {}
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and driver.poll() is None:
            others = {p: c for p, c in _marked(token).items() if p != driver.pid}
            if phase == "start" and any("gcs_server" in c or "raylet" in c for c in others.values()):
                break
            if phase == "agents" and any("agent" in c for c in others.values()):
                break
            if phase == "run" and any("ray::_probe" in c or "ray::_run_shard" in c for c in others.values()):
                break
            time.sleep(0.02)
        assert driver.poll() is None, "the run ended before the phase to interrupt"
        if target == "group":  # as a terminal's Ctrl-C
            os.killpg(driver.pid, sig)
        else:
            driver.send_signal(sig)
        _, err = driver.communicate(timeout=90)
        assert driver.returncode == 130, err.decode(errors="replace")[-3000:]
        deadline = time.monotonic() + 5  # processes already signalled may take a moment to exit
        while (leftover := _marked(token)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not leftover, f"Ray processes of the interrupted run remain: {leftover}"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for pid in _marked(token):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def test_ray_flags_need_the_ray_executor(tmp_path, capsys):
    pytest.importorskip("jax")
    with pytest.raises(SystemExit) as exit_:
        _cli(
            "run", "--frameworks", "jax", "--ops", "mul", "--max-examples", 1, "--ray-address", "auto",
            "--out", tmp_path / "out", "--found-dir", tmp_path / "found",
        )  # fmt: skip
    assert exit_.value.code == 2
    assert "--ray-address: needs --executor ray" in capsys.readouterr().err


# -- a real cluster -----------------------------------------------------------------------------------
TOKEN = f"refgrad-ray-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def ray_env():
    """A short temporary directory for Ray (socket paths are length-limited) and a marker on its processes."""
    pytest.importorskip("ray")
    pytest.importorskip("jax")
    tmp = Path(tempfile.mkdtemp(prefix="rgray", dir="/tmp"))
    saved = {
        k: os.environ.get(k) for k in ("RAY_TMPDIR", "REFGRAD_RAY_TEST", "PYTHONPATH", "REFGRAD_SHARD_DIR")
    }
    os.environ["REFGRAD_SHARD_DIR"] = str(tmp / "shards")  # the nodes' worker logs and shard directories
    os.environ["RAY_TMPDIR"] = str(tmp)  # Ray keeps its sessions in RAY_TMPDIR/ray
    os.environ["REFGRAD_RAY_TEST"] = TOKEN  # inherited by every Ray process: how the test finds its own
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(HERE)] + ([saved["PYTHONPATH"]] if saved["PYTHONPATH"] else [])
    )
    yield tmp
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(ray_env):
    """A head node and one worker node on loopback, one CPU each; shut down at the end."""
    from ray.cluster_utils import Cluster

    c = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "temp_dir": str(ray_env / "ray")},
    )
    try:
        c.add_node(num_cpus=1)
        yield c
    finally:
        c.shutdown()


@pytest.fixture(scope="module")
def curated(ray_env):
    """Curated cases: three mul cases, one of them named abort-* (JaxPlanted aborts on it)."""
    from conformance.case import save_case
    from conformance.strategies import draw_examples, record_cases

    d = ray_env / "cases"
    cases = draw_examples(record_cases("mul", ["float64"], ("forward", "vjp")), 3, seed=11)
    for i, case in enumerate(cases):
        save_case(replace(case, name=f"{'abort' if i == 0 else 'mul'}-curated-{i}"), d)
    return d


def _args(out: Path, cases: Path, *extra):
    return [
        sys.executable, "-m", "conformance", "run", "--frameworks", "jax", "--adapter", PLANTED,
        "--ops", "mul", "--checks", "forward,vjp", "--dtypes", "float64", "--max-examples", 4,
        "--seed", 7, "--cases", cases, "--out", out, "--found-dir", out.parent / f"{out.name}-found",
        "--timeout", 60, "--quiet", *extra,
    ]  # fmt: skip


def _run(out, cases, *extra, timeout=400):
    proc = subprocess.run(
        [str(a) for a in _args(out, cases, *extra)], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    return proc


def _results(out: Path) -> list[dict]:
    from conformance.runner import read_results

    return read_results(out / "results.jsonl")


def _outcomes(out: Path) -> set:
    from conformance.runner import result_key

    records = _results(out)
    keys = [result_key(r) for r in records]
    assert len(keys) == len(set(keys)), "a result was recorded twice"
    return {
        (
            r["case_id"],
            r.get("case_hash"),
            r["framework"],
            r["check"],
            r.get("dtype"),
            r["verdict"],
            r["phase"],
        )
        for r in records
    }


def _found(out: Path) -> dict:
    d = out.parent / f"{out.name}-found"
    return {p.name: json.loads(p.read_text()) for p in sorted(d.glob("*.json"))}


@pytest.fixture(scope="module")
def local_run(ray_env, curated):
    out = ray_env / "local"
    proc = _run(out, curated)
    assert proc.returncode == 1, proc.stderr  # the planted bug and the abort are departures
    outcomes = _outcomes(out)
    verdicts = {o[5] for o in outcomes}
    assert {"pass", "fail", "crash"} <= verdicts, verdicts
    assert any(o[6] == "shrunk" for o in outcomes) and _found(out)
    return out


def _lines(out: Path) -> int:
    p = out / "results.jsonl"
    return len(p.read_bytes().splitlines()) if p.exists() else 0


def _shard_processes() -> list[int]:
    """Ray worker processes of this test's cluster now running a shard (their title is ray::_run_shard)."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            title = (d / "cmdline").read_bytes().split(b"\0")[0].strip()
            if not title.startswith(b"ray::_run_shard"):
                continue
            if f"REFGRAD_RAY_TEST={TOKEN}".encode() in (d / "environ").read_bytes().split(b"\0"):
                pids.append(int(d.name))
        except OSError:
            continue
    return pids


def test_cluster_run_with_a_worker_killed_equals_the_local_run(cluster, curated, local_run, ray_env):
    out = ray_env / "cluster"
    proc = subprocess.Popen(
        [str(a) for a in _args(out, curated, "--executor", "ray", "--ray-address", cluster.address)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and killed is None:
        if _lines(out) >= 3:
            pids = _shard_processes()
            if pids:
                killed = pids[0]
                os.kill(killed, signal.SIGKILL)  # a Ray worker process mid-shard: Ray retries its shard
        time.sleep(0.05)
    stdout, stderr = proc.communicate(timeout=400)
    assert killed is not None, "no shard was running to kill"
    assert proc.returncode == 1, stderr
    assert _outcomes(out) == _outcomes(local_run)
    assert _found(out) == _found(local_run)  # each shrunk case saved once, the same file
    report = json.loads((out / "report.json").read_text())
    assert set(report["frameworks"]) == {"jax", "jax-planted"}


def _gpus_seen():
    import ray

    return ray.get_gpu_ids()


def test_cuda_shards_wait_for_a_gpu_cpu_shards_take_none(cluster):
    """The cluster has no GPU: a task with the CUDA shard's options stays pending, a CPU one runs GPU-less."""
    import ray

    from conformance.executors.ray import shard_options

    ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
    try:
        task = ray.remote(_gpus_seen)
        cuda = task.options(
            **{k: v for k, v in shard_options("cuda").items() if k != "retry_exceptions"}
        ).remote()
        cpu = task.options(
            **{k: v for k, v in shard_options("cpu").items() if k != "retry_exceptions"}
        ).remote()
        assert ray.get(cpu, timeout=120) == []
        ready, _ = ray.wait([cuda], timeout=2)
        assert not ready  # infeasible here: it waits for a node with a free GPU
        ray.cancel(cuda, force=True)
    finally:
        ray.shutdown()


def _start_and_stop(out, curated, sig, after: int, *extra, group=False):
    """Start a run, send ``sig`` once ``results.jsonl`` has ``after`` more lines: (exit code, stderr)."""
    start = _lines(out)
    proc = subprocess.Popen(
        [str(a) for a in _args(out, curated, "--executor", "ray", *extra)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and _lines(out) < start + after:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be stopped"
    (os.killpg if group else os.kill)(proc.pid, sig)
    _, err = proc.communicate(timeout=120)
    crash = [p.read_text()[-2000:] for p in out.glob("crash-*.log")]
    return proc.returncode, err.decode(errors="replace")[-3000:] + "".join(crash)


def test_driver_stopped_then_resume_equals_the_local_run(cluster, curated, local_run, ray_env):
    out = ray_env / "resumed"
    # SIGTERM a run on a local Ray instance: exit 130, the instance shut down
    code, err = _start_and_stop(out, curated, signal.SIGTERM, 3, "--ray-workers", 2)
    assert code == 130, err
    assert "interrupted: results so far are in results.jsonl" in err
    # SIGKILL the driver of a resumed run on the cluster: what it received is on disk
    code, err = _start_and_stop(out, curated, signal.SIGKILL, 2, "--ray-address", cluster.address, "--resume")
    assert code == -9, err
    before = len(_results(out))
    assert before >= 5
    # resumed on the cluster: every recorded result is skipped, the rest run
    done = _run(out, curated, "--executor", "ray", "--ray-address", cluster.address, "--resume")
    assert done.returncode == 1, done.stderr
    assert f"resumed: {before} results were recorded before" in done.stdout
    assert _outcomes(out) == _outcomes(local_run)
