"""TensorFlow's forward mode over a gradient of tf.math.igamma raises, even where a is a constant:
the Igamma gradient computes both partials (IgammaGradA for a, whatever the tape watches), and a
ForwardAccumulator around the GradientTape needs IgammaGradA's own gradient, which is not registered
('No gradient defined for operation ... IgammaGradA'). Reverse over reverse in x alone runs (its
second tape does not reach IgammaGradA). Prints the error of a Hessian-vector product in x."""

import tensorflow as tf

a = tf.constant([2.5], tf.float64)
x = tf.constant([1.5], tf.float64)
try:
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.igamma(a, x)
        g = tape.gradient(y, x)
    print("forward over reverse:", acc.jvp(g).numpy())
except LookupError as e:
    print("forward over reverse raises LookupError:", str(e).split(".")[0])
