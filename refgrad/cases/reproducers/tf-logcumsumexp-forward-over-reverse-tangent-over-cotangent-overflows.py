"""logcumsumexp's gradient grad_k = sum_{j >= k} g_j exp(x_k - r_j) is linear in the cotangent g, so its
tangent along a tangent t of g is sum_{j >= k} t_j exp(x_k - r_j), finite whenever t is. TensorFlow's
gradient evaluates it in log space, exp(lcse(log|g| - r) + x), so forward mode carries the tangent
t_j / g_j of log|g_j|: where that quotient overflows (a tiny cotangent element under an ordinary
tangent, or an ordinary one under a huge tangent) it is inf, and the weight exp(log|g_j| - ...) that
would cancel it comes after: the result is inf. At a zero cotangent element (+0 or -0) its
tf.where(g > 0, log g, dtype.min) selects the constant, so forward mode drops t_j's term (a scan of
any length). JAX differentiates its scan and gets the exact value."""

import numpy as np

X = [0.0, 1.0, -0.5]
r = np.log(np.cumsum(np.exp(X)))


def exact(T):
    return [float(sum(T[j] * np.exp(X[k] - r[j]) for j in range(k, 3))) for k in range(3)]


# g_0 tiny: t_0 / g_0 = 1e10 / 1e-300 overflows float64 (x's tangent is 0)
G, T = [1e-300, 1.0, 0.5], [1e10, 0.0, 0.0]
print("exact tangent of grad:", exact(T))

try:
    import tensorflow as tf

    def forward_over_reverse(g_, t_):
        x, g = tf.constant(X, tf.float64), tf.constant(g_, tf.float64)
        with tf.autodiff.ForwardAccumulator(g, tf.constant(t_, tf.float64)) as acc:
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.math.cumulative_logsumexp(x, 0)
            gx = tape.gradient(y, x, output_gradients=g)
        return acc.jvp(gx).numpy().tolist()

    print(f"tensorflow {tf.__version__} forward over reverse:", forward_over_reverse(G, T))
    for g0, t0 in (([0.0, 1.0, 0.5], [1.0, 1.0, 1.0]), ([1.0, 1.0, -0.0], [0.0, 0.0, 1.0])):
        got = [round(v, 6) for v in forward_over_reverse(g0, t0)]
        print(f"tensorflow forward over reverse at g = {g0}, t = {t0}: {got} exact {[round(v, 6) for v in exact(t0)]}")
except ImportError:
    print("tensorflow not installed")

try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    vjp = lambda g: jax.vjp(lambda z: jax.lax.cumlogsumexp(z, axis=0), jnp.array(X))[1](g)[0]
    print("jax forward over reverse:", [float(v) for v in jax.jvp(vjp, (jnp.array(G),), (jnp.array(T),))[1]])
except ImportError:
    print("jax not installed")
