"""PyTorch's float16 CPU convolution segfaults in oneDNN's native-float16 kernel (brg_conv_fwd on the
AVX512_CORE_FP16 ISA) for some dilated, padded shapes: F.conv2d of a 1x1 float16 input with a 1x1
kernel, stride (2, 3), padding (2, 2), dilation (1, 2) kills the process (SIGSEGV) where the exact
result is a 3x2 output of zeros (every window of the last dim lies in the padding; torch 2.13.0+cpu, a Sapphire-Rapids-class
x86 CPU with avx512_fp16).

Each call runs in a child process, since the fault kills it. The same call passes with the oneDNN
ISA capped below AVX512_CORE_FP16 (ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16: float16 then converts
through float32), with torch.backends.mkldnn off, in bfloat16 and float32, and with dilation 1."""

import os
import subprocess
import sys

CHILD = r"""
import sys
import torch
dtype = getattr(torch, sys.argv[1])
torch.backends.mkldnn.enabled = sys.argv[3] == "on"
dilation = (1, int(sys.argv[2]))
x = torch.ones(1, 1, 1, 1, dtype=dtype)
w = torch.ones(1, 1, 1, 1, dtype=dtype)
y = torch.nn.functional.conv2d(x, w, stride=(2, 3), padding=(2, 2), dilation=dilation)
print("shape", tuple(y.shape), "sum", float(y.sum()))
"""


def has_avx512_fp16() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512_fp16" in line for line in f)
    except OSError:
        return False


def run(dtype, dilation=2, mkldnn="on", env=None):
    p = subprocess.run(
        [sys.executable, "-c", CHILD, dtype, str(dilation), mkldnn],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    what = p.stdout.strip() or (p.stderr.strip().splitlines() or ["killed"])[-1][:80]
    extra = "".join(f" {k}={v}" for k, v in (env or {}).items()) + ("" if mkldnn == "on" else " mkldnn off")
    print(f"torch conv2d {dtype} dilation (1, {dilation}){extra}: exit {p.returncode}: {what}")


print("avx512_fp16:", has_avx512_fp16())
run("float16")
run("float16", env={"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16"})
run("float16", mkldnn="off")
run("float16", dilation=1)
run("bfloat16")
run("float32")
