"""What `refgrad run --ops <family> --draws seeded --seed 3 --known builtin` (seedsN) reached that no
earlier entry described; each line prints the framework's number beside the exact one.

tf.signal.rfft(x, fft_length=[1]) of a signal of m > 1 points (the forward crops it to its first
point, whose DFT is itself): its gradient adds an array of length 1 to one of length m, which
broadcasts where the lengths 4 and 6 of tf-rfft-gradient-of-a-cropping-fft-length raise, so the
gradient is a wrong number instead of an error. The exact gradient for a cotangent g is
[Re g, 0, ..., 0] (torch.fft.rfft(x, n=1) and jnp.fft.rfft(x, n=1) give it)."""

import numpy as np
import tensorflow as tf
import torch

x = np.array([0.3, -1.2, 0.7, 2.0, -0.4])
for g in (1.0 + 0.0j, 0.5 - 0.25j):
    xv = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xv)
        y = tf.signal.rfft(xv, fft_length=[1])
    tf_grad = tape.gradient(y, xv, output_gradients=tf.constant([g])).numpy()
    xt = torch.tensor(x, requires_grad=True)
    (exact,) = torch.autograd.grad(torch.fft.rfft(xt, n=1), xt, torch.tensor([g]))
    print(f"tf rfft fft_length 1 of 5 points, cotangent {g}: gradient {tf_grad} exact {exact.numpy()}")
