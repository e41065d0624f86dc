"""Reverse over forward of tf.math.angle under tf.function(jit_compile=True): TensorFlow's angle
gradient is -g / complex(im, re) (a Reciprocal), whose XLA gradient lowering misses the conjugate
(tf-xla-complex-sqrt-rsqrt-reciprocal-gradient-not-conjugated), so the second derivative is wrong at
ordinary values. At z = -1.9647-0.2315j, tangent t = -3.0641+1.1078j, cotangent c = -1.4853 the VJP
of (z, t) -> Im(t / z) (angle's JVP) with respect to z is conj(-t / z^2) c i = 0.6792-1.0334j
(PyTorch, the reference, TensorFlow without XLA); XLA gives 0.1386-1.2288j."""

import numpy as np
import tensorflow as tf

z = tf.constant([complex(-1.9646543338219005, -0.23147529493999905)])
t = tf.constant([complex(-3.0641296633293322, 1.1077873081579603)])
c = tf.constant([-1.4853161205831529], tf.float64)


def reverse_over_forward(z, t, c):
    with tf.GradientTape() as tape:
        tape.watch(z)
        with tf.autodiff.ForwardAccumulator(z, t) as acc:
            y = tf.math.angle(z)
        jvp = acc.jvp(y)
    return tape.gradient(jvp, z, output_gradients=c)


exact = complex(np.conj(-complex(t[0]) / complex(z[0]) ** 2) * complex(c[0]) * 1j)
plain = complex(tf.function(reverse_over_forward)(z, t, c)[0])
xla = complex(tf.function(reverse_over_forward, jit_compile=True)(z, t, c)[0])
print(f"exact {exact:.4f}; tf.function {plain:.4f}; jit_compile=True {xla:.4f}")
