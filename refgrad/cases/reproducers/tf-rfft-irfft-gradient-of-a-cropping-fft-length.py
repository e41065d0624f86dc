"""tf.signal.irfft's and tf.signal.rfft's gradients raise when fft_length crops the input's
inner dim (the forwards crop it themselves; the gradients add arrays of the two lengths; padding works):
irfft of a half spectrum of 3 bins with fft_length 2 (2 bins), rfft of 6 points with fft_length 4.
torch.fft.irfft(x, n) / rfft(x, n) and jnp.fft differentiate both."""

import numpy as np
import tensorflow as tf


def gradient(f, x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    try:
        return tape.gradient(y, x, output_gradients=tf.ones_like(y)).numpy()
    except (tf.errors.InvalidArgumentError, ValueError) as exc:
        return f"raises {type(exc).__name__}: {str(exc).splitlines()[0][:100]}"


half = tf.constant(np.arange(1.0, 4.0) + 1j * np.arange(3.0))
print("irfft, 3 bins, fft_length 6:", gradient(lambda x: tf.signal.irfft(x, fft_length=[6]), half))
print("irfft, 3 bins, fft_length 2 (2 bins):", gradient(lambda x: tf.signal.irfft(x, fft_length=[2]), half))
signal = tf.constant(np.arange(1.0, 7.0))
print("rfft, 6 points, fft_length 4:", gradient(lambda x: tf.signal.rfft(x, fft_length=[4]), signal))
print("rfft, 6 points, fft_length 6:", gradient(lambda x: tf.signal.rfft(x, fft_length=[6]), signal))
