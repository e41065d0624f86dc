"""TensorFlow aborts (SIGABRT) in the max-pool gradient's forward-mode derivative under
tf.vectorized_map over an empty batch: "Check failed: dtype() == expected_dtype (19 vs. 3) int32
expected, got half" in float16, where the exact result is an empty tensor. The plain gradient under
tf.vectorized_map aborts in float32 and bfloat16 only (tf-onednn-max-pool-gradient-vectorized-empty-batch-aborts);
forward over reverse aborts in float16 too. Each call runs in a child process, since the abort kills it."""

import os
import subprocess
import sys

CHILD = r"""
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "1"
import tensorflow as tf
dtype, rank = getattr(tf, sys.argv[1]), int(sys.argv[2])
pool = tf.nn.max_pool2d if rank == 2 else tf.nn.max_pool3d
shape = [0] + [1] * rank + [1]  # channels last: an empty batch, one channel, a 1x1 window
def jvp_of_grad(x, g, tx, tg):
    with tf.autodiff.ForwardAccumulator((x, g), (tx, tg)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = pool(x, 1, 1, "VALID")
        gx = tape.gradient(y, x, output_gradients=g)
    return acc.jvp(gx)
z = tf.zeros([1] + shape, dtype)
out = tf.vectorized_map(lambda e: jvp_of_grad(*e), (z, z, z, z))
print("shape", tuple(out.shape))
"""


def run(dtype, rank, env=None):
    p = subprocess.run([sys.executable, "-c", CHILD, dtype, str(rank)], capture_output=True, text=True,
                       env={**os.environ, **(env or {})})  # fmt: skip
    fatal = [line for line in p.stderr.splitlines() if "Check failed" in line]
    what = fatal[0].split("] ", 1)[-1] if fatal else p.stdout.strip() or "raised: " + p.stderr.strip().splitlines()[-1][:80]
    flag = " TF_ENABLE_ONEDNN_OPTS=0" if env else ""
    print(f"tf max_pool{rank}d forward over reverse vmap {dtype}{flag} empty batch: exit {p.returncode}: {what}")


for rank in (2, 3):
    for dtype in ("float16", "float32", "bfloat16", "float64"):
        run(dtype, rank)
run("float16", 2, {"TF_ENABLE_ONEDNN_OPTS": "0"})
