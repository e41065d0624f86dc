"""PyTorch's CPU conv2d in float16 faults (SIGSEGV) for some geometries over a tiny input: a 1x1
input and kernel, padding 2, dilation (1, 2), stride 3 along the width; the same call in float32 and
bfloat16, or with padding (0, 2) or (1, 1), or a 3x3 input, returns. Each call runs in a child process,
since the fault kills it."""

import subprocess
import sys

CHILD = r"""
import sys, torch
dtype = getattr(torch, sys.argv[1]); stride, padding, dilation, n = eval(sys.argv[2])
x, w = torch.ones(1, 1, n, n, dtype=dtype), torch.ones(1, 1, 1, 1, dtype=dtype)
print("shape", tuple(torch.nn.functional.conv2d(x, w, None, stride, padding, dilation).shape))
"""


def run(dtype, geometry):
    p = subprocess.run([sys.executable, "-c", CHILD, dtype, repr(geometry)], capture_output=True, text=True)
    print(f"torch conv2d {dtype} stride, padding, dilation, input {geometry}: exit {p.returncode} {p.stdout.strip()}")


import torch  # noqa: E402

print("torch", torch.__version__)
run("float16", ((2, 3), (2, 2), (1, 2), 1))  # the README command's seed-1 case conv-d20d9e30efe7
run("float16", ((1, 3), (2, 2), (1, 2), 1))
run("float32", ((2, 3), (2, 2), (1, 2), 1))
run("bfloat16", ((2, 3), (2, 2), (1, 2), 1))
run("float16", ((2, 3), (1, 1), (1, 2), 1))
run("float16", ((2, 3), (2, 2), (1, 2), 3))
