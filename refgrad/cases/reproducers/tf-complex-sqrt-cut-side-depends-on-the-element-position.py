"""tf.math.sqrt (and rsqrt) on its branch cut (-4 - 0j) gives the side of the cut by the element's position in
the array, eagerly and under tf.function (the same CPU kernel): -2j (C99's, PyTorch's, the
reference's) in full vector packets, +2j in the scalar remainder. Under tf.function(jit_compile=True)
XLA's lowering gives -2j at every position (its gradients depart for another reason: the entry
tf-xla-complex-sqrt-rsqrt-reciprocal-gradient-not-conjugated)."""
import numpy as np
import tensorflow as tf
import torch

for name, tf_f, torch_f in [("sqrt", tf.math.sqrt, torch.sqrt), ("rsqrt", tf.math.rsqrt, torch.rsqrt)]:
    modes = {"eager": tf_f, "function": tf.function(tf_f), "xla": tf.function(tf_f, jit_compile=True)}
    for dtype in (np.complex64, np.complex128):
        for n in (1, 3, 5):
            z = np.full(n, complex(-4, -0.0), dtype)
            want = torch_f(torch.tensor(z)).numpy().imag
            for mode, f in modes.items():
                got = f(tf.constant(z)).numpy().imag
                print(f"{np.dtype(dtype).name} n={n} {mode}: tf Im {name} {got.tolist()} torch {want.tolist()}; "
                      f"same as torch: {bool(np.array_equal(got, want))}")
