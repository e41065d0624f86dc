"""TensorFlow aborts (SIGABRT) in the oneDNN float32/bfloat16 max-pool gradient under tf.vectorized_map
over an empty batch: "Check failed: dtype() == expected_dtype (1 vs. 3) int32 expected, got float".

Each call runs in a child process, since the abort kills it. float64 (no oneDNN kernel; max_pool3d
has none at all), float16, the same gradient outside tf.vectorized_map, and TF_ENABLE_ONEDNN_OPTS=0
all run (TensorFlow 2.21.0, x86 with oneDNN on)."""

import os
import subprocess
import sys

CHILD = r"""
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"
import tensorflow as tf
dtype, rank, vmapped = getattr(tf, sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "vmap"
pool = tf.nn.max_pool2d if rank == 2 else tf.nn.max_pool3d
shape = [0] + [1] * rank + [1]  # channels last: an empty batch, one channel, a 1x1 window
def grad(x, g):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = pool(x, 1, 1, "VALID")
    return tape.gradient(y, x, output_gradients=g)
x, g = tf.zeros([1] + shape, dtype), tf.ones([1] + shape, dtype)
out = tf.vectorized_map(lambda e: grad(*e), (x, g)) if vmapped else grad(x[0], g[0])
print("shape", tuple(out.shape))
"""


def run(dtype, rank, how, env=None):
    p = subprocess.run(
        [sys.executable, "-c", CHILD, dtype, str(rank), how],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    fatal = [line for line in p.stderr.splitlines() if "Check failed" in line]
    what = fatal[0].split("] ", 1)[-1] if fatal else p.stdout.strip() or "raised: " + p.stderr.strip().splitlines()[-1][:80]
    flag = " TF_ENABLE_ONEDNN_OPTS=0" if env else ""
    print(f"tf max_pool{rank}d gradient {how} {dtype}{flag} empty batch: exit {p.returncode}: {what}")


for rank in (2, 3):
    for dtype in ("float32", "bfloat16"):
        run(dtype, rank, "vmap")
run("float16", 2, "vmap")
run("float64", 2, "vmap")
run("float32", 2, "plain")
run("float32", 2, "vmap", {"TF_ENABLE_ONEDNN_OPTS": "0"})
