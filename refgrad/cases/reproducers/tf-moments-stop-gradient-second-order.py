"""tf.nn.moments stops the gradient through the mean inside the variance: right at first order,
but the Hessian of the variance loses its -2/N^2 term. For N = 3 the variance's Hessian is
(2/N)(I - 11^T/N); its row sums are 0. TensorFlow's are 2/N."""
import tensorflow as tf

x = tf.Variable([0.0, 1.0, 3.0], dtype=tf.float64)
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        variance = tf.nn.moments(x, axes=[0])[1]
    grad_sum = tf.reduce_sum(inner.gradient(variance, x))
hessian_row_sums = outer.gradient(grad_sum, x)
print("hessian row sums", hessian_row_sums.numpy().tolist(), "(the mathematics: [0.0, 0.0, 0.0])")
