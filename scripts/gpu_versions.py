"""The GPU check's two reports (scripts/gpu_check.sh): what the machine is, and what the campaigns found.

    python scripts/gpu_versions.py                       # device, driver, CUDA, cuDNN, versions, TF32
    python scripts/gpu_versions.py --summary A.tar.gz B.tar.gz   # verdicts and worst ratios per precision

Every probe is guarded: a framework that is missing or fails to start is printed as such, never
guessed, so the same script runs (and is rehearsed in CI) on a machine without a GPU.
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
import tarfile
from collections import Counter


def _probe(label: str, fn) -> None:
    try:
        print(f"{label}: {fn()}")
    except Exception as exc:  # a probe reports what failed; it never stops the others
        print(f"{label}: unavailable ({type(exc).__name__}: {exc})")


def cuda_available() -> bool:
    """True when PyTorch sees a CUDA device (the campaigns' torch side needs it)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _nvidia_smi() -> str:
    if shutil.which("nvidia-smi") is None:
        return "nvidia-smi not on PATH"
    query = "--query-gpu=name,driver_version,memory.total,compute_cap"
    out = subprocess.run(["nvidia-smi", query, "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or out.stderr.strip()


def _torch() -> str:
    import torch

    parts = [f"torch {torch.__version__}", f"CUDA {torch.version.cuda}"]
    if torch.cuda.is_available():
        parts += [f"device {torch.cuda.get_device_name(0)}", f"capability {torch.cuda.get_device_capability(0)}"]
        parts.append(f"cuDNN {torch.backends.cudnn.version()}")
    else:
        parts.append("no CUDA device")
    return ", ".join(parts)


def _torch_tf32() -> str:
    import torch

    return (
        f"default: torch.backends.cuda.matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32}, "
        f"torch.backends.cudnn.allow_tf32={torch.backends.cudnn.allow_tf32}, "
        f"float32_matmul_precision={torch.get_float32_matmul_precision()!r}; "
        "--precision highest sets both allow_tf32 flags False"
    )


def _jax() -> str:
    import jax

    return f"jax {jax.__version__}, backend {jax.default_backend()}, devices {jax.devices()}"


def _jax_tf32() -> str:
    import jax

    return (
        f"default: jax_default_matmul_precision={jax.config.jax_default_matmul_precision!r} "
        "(None: TF32 on Ampere and later); --precision highest sets it to 'highest'"
    )


def _cupy() -> str:
    import cupy

    runtime = cupy.cuda.runtime.runtimeGetVersion()
    return f"cupy {cupy.__version__}, CUDA runtime {runtime}, devices {cupy.cuda.runtime.getDeviceCount()}"


def _tensorflow() -> str:
    import tensorflow as tf

    return f"tensorflow {tf.__version__}, GPUs {tf.config.list_physical_devices('GPU')}"


def versions() -> None:
    print(f"python: {sys.version.split()[0]} on {platform.platform()}")
    _probe("nvidia-smi (name, driver, memory, compute capability)", _nvidia_smi)
    _probe("torch", _torch)
    _probe("torch TF32", _torch_tf32)
    _probe("jax", _jax)
    _probe("jax TF32", _jax_tf32)
    _probe("cupy", _cupy)
    _probe("tensorflow", _tensorflow)
    import numpy

    print(f"numpy: {numpy.__version__}")


def _parts(archive: str) -> dict[str, dict[str, str]]:
    """The campaign parts of an archive (``<precision>/<part>/``): part name -> file name -> text."""
    wanted = ("results.jsonl", "report.json")
    parts: dict[str, dict[str, str]] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            bits = member.name.split("/")
            if len(bits) == 3 and bits[2] in wanted and member.isfile():
                parts.setdefault(f"{bits[0]}/{bits[1]}", {})[bits[2]] = tar.extractfile(member).read().decode("utf-8")
    return dict(sorted(parts.items()))


def _results(text: str):
    """The raw result records of a results.jsonl, skipping torn lines."""
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "verdict" in rec:
            yield rec


def _report(text: str | None) -> dict | None:
    """A part's report.json (verdicts after the known file), or None where none was written."""
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def summary(archives: list[str]) -> None:
    for archive in archives:
        try:
            parts = _parts(archive)
        except (OSError, tarfile.TarError) as exc:
            print(f"{archive}: unreadable ({exc})")
            continue
        if not parts:
            print(f"== {archive}: no campaign part recorded a result")
        for name, files in parts.items():
            _summarise_part(name, files)


def _summarise_part(name: str, files: dict[str, str]) -> None:
    records = list(_results(files.get("results.jsonl", "")))
    report = _report(files.get("report.json"))
    print(f"== {name}: {len(records)} results")
    if report is None:
        print("  no report.json: the verdicts below are the raw ones, before the known file")
        rows = [(r.get("framework"), r["verdict"]) for r in records]
    else:
        print(f"  outcome: {report['outcome']['code']} ({report['outcome']['message']})")
        for fw, info in sorted(report.get("frameworks", {}).items()):
            print(f"  {fw} {info.get('version')}: {json.dumps(info.get('settings', {}), sort_keys=True)}")
        table = report["results"]
        col = {c: k for k, c in enumerate(table["columns"])}
        rows = [(row[col["framework"]], row[col["verdict"]]) for row in table["rows"]]
    print("  verdicts per framework (after the known file where a report was written):")
    for (fw, verdict), n in sorted(Counter(rows).items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        print(f"    {fw:<12} {verdict:<16} {n}")
    if report is not None:
        lines = report.get("departure_lines", [])
        print(f"  every result that is not a pass or unsupported ({len(lines)} lines):")
        for d in lines:
            print(
                f"    {d.get('framework', '?'):<6} {d.get('op', '?'):<22} {d.get('check', '?'):<12} "
                f"{d.get('dtype', '?'):<9} {d.get('kind', d.get('verdict', '?')):<60} x{d.get('count', 1)} "
                f"{d.get('case_id', '')}: {str(d.get('summary', ''))[:160]}"
            )
    worst: dict[tuple, tuple[float, str]] = {}
    for r in records:
        w = r.get("worst")
        if not isinstance(w, dict) or not w.get("limit"):
            continue
        ratio = w["ratio"] / w["limit"]  # the worst element's error over its own bound
        key = (r.get("framework"), r.get("check"), r.get("dtype"))
        if key not in worst or ratio > worst[key][0]:
            worst[key] = (ratio, str(r.get("case_id", "?")))
    print("  worst element, its error over its bound, per framework, check and dtype (> 1 departs):")
    for (fw, check, dtype), (ratio, case) in sorted(worst.items(), key=lambda kv: tuple(map(str, kv[0]))):
        print(f"    {fw:<12} {check:<12} {dtype:<9} {ratio:10.3g}  {case}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--summary"]:
        summary(sys.argv[2:])
    else:
        versions()
