"""Complex departures found by `refgrad run --ops exp,log,sqrt,sin,cos,tan,tanh,sinh,cosh --domains whole
--dtypes complex64,complex128 --draws seeded --seed 1` (classify23b), each against mpmath."""
import mpmath as mp
import numpy as np
import tensorflow as tf

mp.mp.prec = 200

# TensorFlow (its own kernels; XLA is right): complex sqrt of a number with a nonzero imaginary part
# and a modulus below twice the smallest normal number is 0 (one element) or +-inf i (a full vector
# packet), so its derivative 1/(2 sqrt z) is inf + nan i or nan where it is finite.
for dtype, z in ((np.complex128, complex(-0.0, 3e-308)), (np.complex64, complex(-0.0, 2e-38))):
    root = mp.sqrt(mp.mpc(z.real, z.imag))
    for n in (1, 4):
        x = tf.constant(np.full(n, z, dtype=dtype))
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            y = tf.math.sqrt(x)
        print(
            f"tensorflow {np.dtype(dtype).name} sqrt({z}) in a vector of {n} = {y.numpy()[0]} exact {complex(root):.6g};"
            f" jvp along 1 {acc.jvp(y).numpy()[0]} exact {complex(1 / (2 * root)):.6g}"
        )
