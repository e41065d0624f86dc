"""TensorFlow's float32 gradient of tf.math.igamma in x at a positive subnormal x reads log(x) as
-103.97208 = log(2^-150) (tf-log-of-subnormal-float32 inside its IgammaGrad formula exp((a - 1)
log x - x - lgamma(a))): at a = 0.394, x = 9.73e-39 it is 1.0244238e+27 for every subnormal x, where
x^(a-1) e^-x / Gamma(a) = 4.81e22. Prints TensorFlow's gradient next to the float64 formula's."""

import math

import numpy as np
import tensorflow as tf

a = np.float32(0.3940095901)
x = np.float32(9.73107476e-39)
xt = tf.constant([x])
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = tf.math.igamma(tf.constant([a]), xt)
got = tape.gradient(y, xt).numpy()[0]
exact = math.exp((float(a) - 1) * math.log(float(x)) - float(x) - math.lgamma(float(a)))
print(f"tf.math.igamma x-gradient at a={a}, x={x}: {got:.8g}; float64 formula: {exact:.6g}")
