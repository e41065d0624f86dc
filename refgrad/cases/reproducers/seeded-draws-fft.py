"""Departures `refgrad run --ops fft --dtypes complex64,complex128 --draws seeded --seed 0` reached that
the known file did not yet describe (seedsG): each line prints TensorFlow's value next to PyTorch's
(the exact value: the transforms are linear, so their tangents do not read the input's values)."""

import numpy as np
import tensorflow as tf
import torch

# tf.autodiff.ForwardAccumulator transposes the VJP, and Mul's gradient includes the constant
# factor's, reduce_sum(g * y): at an infinite output y the transpose carries 0 * inf = nan into the
# tangent of the scaled transform. tf.signal.irfft alone gives the right tangent; times a constant
# (as a `norm` other than TensorFlow's own needs) every element is nan.
x = np.array([np.inf + 0j, 1 + 2j, -0.5 + 1j], np.complex64)
t1 = np.array([1 + 0j, 0.5 - 1j, 2 + 0.25j], np.complex64)
t2 = np.array([0.5 + 0j, 1 - 1j, 1 + 0.25j], np.complex64)
xv = tf.constant(x)
for label, scale in (("tf irfft jvp", None), ("tf irfft * 0.25 jvp", 0.25)):
    with tf.autodiff.ForwardAccumulator(xv, tf.constant(t1)) as acc:
        y = tf.signal.irfft(xv, fft_length=[4])
        y = y if scale is None else y * scale
    print(f"{label} at x = [inf, 1+2j, -0.5+1j]:", acc.jvp(y).numpy())
exact = torch.func.jvp(lambda v: torch.fft.irfft(v, n=4) * 0.25, (torch.tensor(x),), (torch.tensor(t1),))[1]
print("torch.func.jvp of torch.fft.irfft(x, n=4) * 0.25:", exact.numpy())

# tf.signal.fft times a constant likewise (norm 'backward' spelled as a multiplication by 1.0)
with tf.autodiff.ForwardAccumulator(xv, tf.constant(t1)) as acc:
    y = tf.signal.fft(xv) * tf.constant(1.0, tf.complex64)
print("tf fft * 1.0 jvp at x = [inf, 1+2j, -0.5+1j]:", acc.jvp(y).numpy())
print("torch.func.jvp of torch.fft.fft:", torch.func.jvp(torch.fft.fft, (torch.tensor(x),), (torch.tensor(t1),))[1].numpy())

# forward over forward: the second-order tangent of a linear map is 0; TensorFlow gives nan
with tf.autodiff.ForwardAccumulator(xv, tf.constant(t2)) as outer:
    with tf.autodiff.ForwardAccumulator(xv, tf.constant(t1)) as inner:
        y = tf.signal.irfft(xv, fft_length=[4]) * 0.25
    j = inner.jvp(y)
print("tf irfft * 0.25 forward over forward at x = [inf, 1+2j, -0.5+1j]:", outer.jvp(j).numpy(), "exact: 0")
