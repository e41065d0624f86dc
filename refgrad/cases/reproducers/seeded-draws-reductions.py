"""Departures `refgrad run --ops reductions --draws seeded --seed 0` reached that the known file did
not yet describe (seedsD): each line prints what the framework does next to NumPy's answer."""

import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

x = np.array([1.0, 2.0, 4.0])
for ddof in (0, 1):
    try:
        got = tnp.var(tf.constant(x, tf.float64), axis=(0,), ddof=ddof).numpy()
    except TypeError as exc:
        got = f"raises TypeError: {exc}"
    print(f"tf tnp.var axis=(0,) ddof={ddof}:", got, "numpy:", np.var(x, axis=(0,), ddof=ddof))
