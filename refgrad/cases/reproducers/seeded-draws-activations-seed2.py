"""Departures `refgrad run --ops activations --draws seeded --seed 2` reached that the known file did
not yet describe (seedsJ): each line prints a framework's value next to the exact one (mpmath)."""

import keras
import mpmath
import tensorflow as tf
import torch

mpmath.mp.prec = 100

# PyTorch's in-place elu saves its result, and elu_backward (is_result) forms the derivative from it,
# g * (result + alpha): for x << 0 the result rounds to -alpha and the sum cancels to 0, where the
# exact derivative is alpha e^x (the out-of-place F.elu computes it from x)
x = torch.tensor([-58.59184628477378], dtype=torch.float64, requires_grad=True)
inplace = torch.autograd.grad(torch.nn.functional.elu(x * 1, 0.5, inplace=True).sum(), x)[0]
outofplace = torch.autograd.grad(torch.nn.functional.elu(x, 0.5).sum(), x)[0]
exact = 0.5 * mpmath.exp(mpmath.mpf(-58.59184628477378))
print(
    "torch F.elu(inplace=True)' float64 at -58.59, alpha 0.5:",
    float(inplace[0]),
    "out of place:",
    float(outofplace[0]),
    "exact:",
    mpmath.nstr(exact, 8),
)

# tf.nn.elu's EluGrad (keras.ops.elu's kernel, times alpha where x <= 0) reads the output,
# g * (output + 1): for x << 0 the output rounds to -1 and the sum cancels to 0
x = tf.Variable(tf.constant(-23.387895584106445, tf.float32))
with tf.GradientTape() as tape:
    y = keras.ops.elu(x, 2.0)
g = tape.gradient(y, x)
exact = 2 * mpmath.exp(mpmath.mpf(-23.387895584106445))
print("tf keras.ops.elu' float32 at -23.39, alpha 2:", float(g), "exact:", mpmath.nstr(exact, 8))

# refgrad's TensorFlow spelling of elu, tf.where(x > 0, x, alpha * expm1(minimum(x, 0))), at NaN:
# tf.minimum gives a NaN's gradient to its other operand (0), so none reaches x, in the gradient
# and in the forward over reverse; PyTorch's elu_backward gives g (x <= 0 is false for NaN)
x = tf.Variable(float("nan"), dtype=tf.float64)
tangent = tf.constant(1.0, tf.float64)
with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
    with tf.GradientTape() as tape:
        y = tf.where(x > 0, x, 2.0 * tf.math.expm1(tf.math.minimum(x, 0.0)))
    g = tape.gradient(y, x)
gt = torch.tensor(float("nan"), dtype=torch.float64, requires_grad=True)
print(
    "tf elu spelling' float64 at nan, alpha 2:",
    float(g),
    "forward over reverse:",
    float(acc.jvp(g)) if acc.jvp(g) is not None else None,
    "torch:",
    float(torch.autograd.grad(torch.nn.functional.elu(gt, 2.0), gt)[0]),
)
