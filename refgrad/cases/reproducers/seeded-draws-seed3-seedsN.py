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


# TensorFlow's forward over reverse of max pooling in a window holding a NaN (seedsN, nn at seed 3):
# the tangent of the gradient goes to the NaN when the NaN comes first in the window and to the
# largest number when it comes later (the campaign's tf.vectorized_map also sent it past a NaN that
# came first, in a 3 x 2 window padded with -inf). torch.func sends it to the NaN (PyTorch's
# max_pool2d selects the NaN), every time.
def pool_forward_over_reverse_tf(window, vectorized):
    x = tf.constant(np.array(window).reshape(1, len(window), 1, 1))  # NHWC: one column
    ones = tf.ones((1, 1, 1, 1), tf.float64)

    def one(x):
        with tf.autodiff.ForwardAccumulator((x, ones), (tf.zeros_like(x), ones)) as acc:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.nn.max_pool2d(x, (len(window), 1), 1, "VALID")
            g = tape.gradient(y, x, output_gradients=ones)
        return acc.jvp(g)

    return (tf.vectorized_map(one, x[None])[0] if vectorized else one(x)).numpy().ravel()


def pool_forward_over_reverse_torch(window):
    x = torch.tensor(window).reshape(1, 1, len(window), 1)
    ones = torch.ones(1, 1, 1, 1, dtype=torch.float64)

    def grad(x, c):
        return torch.func.vjp(lambda v: torch.nn.functional.max_pool2d(v, (len(window), 1)), x)[1](c)[0]

    return torch.func.jvp(grad, (x, ones), (torch.zeros_like(x), ones))[1].numpy().ravel()


for window in ([float("nan"), 0.97265625], [0.185546875, float("nan")]):
    print(
        f"tf max_pool2d forward over reverse, window {window}: eager {pool_forward_over_reverse_tf(window, False)}"
        f" vectorized_map {pool_forward_over_reverse_tf(window, True)} torch.func {pool_forward_over_reverse_torch(window)}"
    )


# tf-vectorized-map-max-pool-padding-reads-zero in the forward over reverse (seedsN, nn at seed 3):
# under tf.vectorized_map over more than one sample the -inf padding reads 0 and takes a negative
# window's value and tangent; eager mode (and torch.func) sends the tangent to the window's maximum.
def padded_pool_forward_over_reverse_tf(x):  # x: NHWC rows, one window of 3 (a pad each side)
    ones = tf.ones((1, 1, 1, 1), tf.float64)
    with tf.autodiff.ForwardAccumulator((x, ones), (tf.zeros_like(x), ones)) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            padded = tf.pad(x, [[0, 0], [0, 0], [1, 1], [0, 0]], constant_values=-np.inf)
            y = tf.nn.max_pool2d(padded, (1, 3), (1, 3), "VALID")
        g = tape.gradient(y, x, output_gradients=ones)
    return acc.jvp(g)


rows = tf.constant(np.array([[0.5, 0.2], [-0.30321872, -0.3783896], [-1.0, 2.0]]).reshape(3, 1, 1, 2, 1))
print(
    f"tf max_pool2d padded with -inf, forward over reverse at {rows[1].numpy().ravel().tolist()}: eager"
    f" {padded_pool_forward_over_reverse_tf(rows[1]).numpy().ravel()}"
    f" vectorized_map over 3 rows {tf.vectorized_map(padded_pool_forward_over_reverse_tf, rows)[1].numpy().ravel()}"
)


# tf-forward-accumulator-nan-multiplying-infinity-by-a-constant in addr and baddbmm (seedsN, products
# at seed 3): beta * input + alpha * (mat1 outer mat2), the records' TensorFlow spelling, at an
# infinite input element: its tangent, beta * t_input + alpha * (t_mat1 mat2 + mat1 t_mat2), is finite.
def addr_jvp_tf(s, a, b, ts, ta, tb):
    with tf.autodiff.ForwardAccumulator((s, a, b), (ts, ta, tb)) as acc:
        y = 0.5 * s + 2.0 * tf.tensordot(a, b, 0)
    return acc.jvp(y).numpy().ravel()


addr_args = [np.array(v) for v in ([[np.inf, -1.0]], [1.0], [2.0, -3.0], [[1.0, 1.0]], [0.5], [0.25, 1.0])]
exact = torch.func.jvp(
    lambda s, a, b: torch.addr(s, a, b, beta=0.5, alpha=2.0),
    tuple(torch.tensor(v) for v in addr_args[:3]),
    tuple(torch.tensor(v) for v in addr_args[3:]),
)[1]
print(
    f"tf addr (beta 0.5, alpha 2) jvp at input [[inf, -1]]: {addr_jvp_tf(*(tf.constant(v) for v in addr_args))}"
    f" torch.func {exact.numpy().ravel()}"
)


# cumprod's reverse over forward in float16 at a small input (seedsN, scans at seed 3): PyTorch's and
# TensorFlow's formulas divide by the input twice, and 1 / x^2 overflows float16 where the result
# does not (the float64 value of the same program beside them).
x = [0.0009074211120605469, 0.87109375, 1.1171875, -1.38671875]
t = [0.06170654296875, 1.0, 1.0, -1.0]
c = [-6.300210952758789e-05, 0.513671875, -0.00019276142120361328, 0.000164031982421875]


def cumprod_reverse_over_forward_torch(dtype):
    X, T, C = (torch.tensor(v, dtype=dtype) for v in (x, t, c))
    jvp = lambda X, T: torch.func.jvp(lambda u: torch.cumprod(u, 0), (X,), (T,))[1]  # noqa: E731
    return torch.func.vjp(jvp, X, T)[1](C)[0].double().numpy()


def cumprod_reverse_over_forward_tf(dtype):
    X, T, C = (tf.constant(v, dtype) for v in (x, t, c))
    with tf.GradientTape() as tape:
        tape.watch(X)
        with tf.autodiff.ForwardAccumulator(X, T) as acc:
            y = tf.math.cumprod(X, 0)
        j = acc.jvp(y)
    return tf.cast(tape.gradient(j, X, output_gradients=C), tf.float64).numpy()


print(
    f"cumprod reverse over forward in x0 = {x[0]} (float16): torch {cumprod_reverse_over_forward_torch(torch.float16)[0]}"
    f" tf {cumprod_reverse_over_forward_tf(tf.float16)[0]} float64 {cumprod_reverse_over_forward_torch(torch.float64)[0]:.6f}"
)
