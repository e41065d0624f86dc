"""Complex departures found by `refgrad run --ops log,sgn,abs,atanh,asinh,rsqrt,sqrt,tan --domains whole
--dtypes complex64,complex128 --known builtin` (seeds 0 and 1, cplx27), each against mpmath."""
import mpmath as mp
import numpy as np

mp.mp.prec = 200


def sgn_exact(z):
    w = mp.mpc(z.real, z.imag)
    return complex(w / abs(w))


# TensorFlow: tf.math.sign of a complex z is z / (|z| + 0i), a complex division through |z|^2, which
# underflows where |z| < sqrt(smallest normal) (1.5e-154 complex128, 1.1e-19 complex64): 0 there,
# where sgn z has modulus 1 (the forward of tf-complex-abs-gradient-zero-where-the-squared-modulus-underflows).
import tensorflow as tf  # noqa: E402

for dtype, zs in ((np.complex128, (1e-150 + 1e-150j, 1e-200 + 1e-200j)), (np.complex64, (1e-18j, -2.6670989e-38j))):
    x = np.array(zs, dtype=dtype)
    got = tf.math.sign(tf.constant(x)).numpy()
    exact = [sgn_exact(complex(v)) for v in x]
    print(f"tensorflow {np.dtype(dtype).name} sign at z = {x.tolist()}: {got.tolist()} exact {exact}")

x = np.array([2e19 + 2e19j, 1.383928677700259e19 - 9.34053379688733e18j], dtype=np.complex64)
got = tf.math.sign(tf.constant(x)).numpy()
print(f"tensorflow complex64 sign at z = {x.tolist()}: {got.tolist()} exact {[sgn_exact(complex(v)) for v in x]}")

# JAX: jnp.sign of a complex z whose parts are subnormal returns z itself (XLA reads |z| as 0 under
# denormals-are-zero and selects x where |z| == 0), where sgn z has modulus 1.
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

for dtype, z in ((np.complex128, -1.144904523873445e-308 - 5.83882835565855e-310j), (np.complex64, 1e-39 + 1e-40j)):
    x = np.array([z], dtype=dtype)
    got = complex(np.asarray(jnp.sign(jnp.asarray(x)))[0])
    print(f"jax {np.dtype(dtype).name} sign at z = {complex(x[0])}: {got} exact {sgn_exact(complex(x[0]))}")

# PyTorch: complex128 sgn of a tensor of fewer than 8 elements divides z by the complex number |z| + 0i
# (c10::complex division), which overflows at a subnormal |z|: nan - inf i where sgn z = -i; a tensor
# of 8 or more (the vectorised kernel) is right.
import torch  # noqa: E402

z = -2.556158693107864e-309j
for n in (1, 4, 8):
    got = complex(torch.sgn(torch.tensor(np.full(n, z))).numpy()[0])
    print(f"torch complex128 sgn({z}) in a tensor of {n}: {got} exact {sgn_exact(z)}")

# ... and its JVP of abs, Re(conj(sgn z) t), is nan there in the scalar kernel (fewer than 8 elements,
# or the remainder past the last full vector): tangent -0.899 at z = -4.36e-309.
z, t = -4.364236868130597e-309 + 0j, -0.8991419774986954 + 0j
for n in (1, 8, 31):
    _, got = torch.func.jvp(torch.abs, (torch.tensor(np.full(n, z)),), (torch.tensor(np.full(n, t)),))
    print(f"torch complex128 abs JVP at z = {z.real}, t = {t.real} in a tensor of {n}: last {float(got[-1])} exact {-t.real}")

# TensorFlow: complex abs's derivatives at a tiny modulus are 0. Its JVP (ForwardAccumulator, the gradient
# div_no_nan(complex(g, 0) * z, complex(|z|, 0)) transposed) forms t-times-z first, a subnormal product that
# flush-to-zero makes 0 (z = 2.955e-308 complex128, t = 0.129 + 0.287i: 0 where Re(conj(sgn z) t) = 0.129);
# its gradient at a purely imaginary z just off the cut (values 'ties': -0 + 4.17e-38i complex64) is 0
# where g sgn z = i, as where |z|^2 underflows (tf-complex-abs-gradient-zero-where-the-squared-modulus-underflows).
for dtype, z, t in (
    (np.complex128, 2.955412318878728e-308 + 0j, 0.12875839769755448 + 0.2867648044256179j),
    (np.complex64, complex(1.8176190532714022e-38, 7.9711391779729678e-39), -0.1371740847826004 - 0.04219109192490578j),
):
    x = tf.constant(np.array([z], dtype=dtype))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.array([t], dtype=dtype))) as acc:
        y = tf.math.abs(x)
    exact = (np.conj(sgn_exact(z)) * t).real
    print(f"tensorflow {np.dtype(dtype).name} abs JVP at z = {z}, t = {t}: {acc.jvp(y).numpy().tolist()} exact [{exact:.6g}]")
x = tf.constant(np.array([complex(-0.0, 4.174819010359097e-38)], dtype=np.complex64))
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.abs(x)
print(f"tensorflow complex64 abs gradient at z = -0+4.17e-38j, g = 1: {tape.gradient(y, x).numpy().tolist()} exact [1j]")

# PyTorch and TensorFlow: complex atanh's gradient g / conj(1 - z^2) is nan where z^2 overflows
# (|z| > 1.34e154 complex128), where it is about -g / conj(z^2), 0 to the dtype (PyTorch: c10::complex
# division by the infinite 1 - z^2; TensorFlow: its reciprocal); JAX gives 0.
z, g = complex(-0.0, -1.8870741815529474e154), complex(-0.0, -1.3288927581460592)
exact = complex(mp.mpc(g.real, g.imag) / mp.conj(1 - mp.mpc(z.real, z.imag) ** 2))
x = torch.tensor([z], requires_grad=True)
(got,) = torch.autograd.grad(torch.atanh(x), x, torch.tensor([g]))
print(f"torch complex128 atanh gradient at z = {z}, g = {g}: {complex(got[0])} exact {exact:.6g}")
xt = tf.constant(np.array([z]))
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = tf.math.atanh(xt)
got = tape.gradient(y, xt, tf.constant(np.array([g]))).numpy()[0]
print(f"tensorflow complex128 atanh gradient at z = {z}, g = {g}: {complex(got)} exact {exact:.6g}")
xt = tf.constant(np.full(4, z))  # a full vector packet
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = tf.math.atanh(xt)
got = tape.gradient(y, xt, tf.constant(np.full(4, g))).numpy()[0]
print(f"tensorflow complex128 atanh gradient at z = {z}, g = {g} in a vector of 4: {complex(got)} exact {exact:.6g}")

# TensorFlow: complex log's JVP t / z at an infinite z is nan where it is 0 (1/z -> 0 on the extended
# plane) in the elements of a full vector packet: ForwardAccumulator of tf.math.log at -inf + 1.018i
# (complex64), t = 1.4665 - 0.4952i, alone 0, in a vector of 4 nan.
z, t = complex(-np.inf, 1.018328070640564), 1.4665257930755615 - 0.4951900839805603j
for n in (1, 4):
    x = tf.constant(np.full(n, z, dtype=np.complex64))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.full(n, t, dtype=np.complex64))) as acc:
        y = tf.math.log(x)
    print(f"tensorflow complex64 log JVP at z = {z}, t = {t} in a vector of {n}: {complex(acc.jvp(y).numpy()[0])} exact 0j")

# TensorFlow: complex64 log of a full vector packet overflows |z|^2 at 1.11 - 3.4028e38i (the 'special'
# draws' largest number; tf-complex64-log-overflows-the-squared-modulus-in-full-packets at values 'special').
z = complex(1.1099220514297485, -3.4028234663852886e38)
got = tf.math.log(tf.constant(np.full(4, z, dtype=np.complex64))).numpy()[0]
print(f"tensorflow complex64 log({z}) in a vector of 4: {got} exact {complex(mp.log(mp.mpc(z.real, z.imag))):.10g}")

# PyTorch: complex64 log's gradient g / conj(z) at a subnormal z overflows in c10::complex<float>'s
# division: -inf - inf i where -5.335e37 - 10.05i (z = 2.149e-39, g = -0.11466 - 2.16e-38i).
z, g = complex(2.149245723553581e-39, -0.0), complex(-0.11466414481401443, -2.159769334890814e-38)
x = torch.tensor([z], dtype=torch.complex64, requires_grad=True)
(got,) = torch.autograd.grad(torch.log(x), x, torch.tensor([g], dtype=torch.complex64))
exact = complex(mp.mpc(g.real, g.imag) / mp.conj(mp.mpc(z.real, z.imag)))
print(f"torch complex64 log gradient at z = {z}, g = {g}: {complex(got[0])} exact {exact:.6g}")

# TensorFlow: complex64 sign's second derivative at a modulus near 1.7e19 (forward over reverse, c the
# cotangent, t the tangent) is off where complex128 is right: consistent with an intermediate near
# 1/|z|^2 = 3.6e-39, below float32's smallest normal, flushed to zero.
def sgn_second(z, c, t):
    Z, C, T = (mp.mpc(v.real, v.imag) for v in (z, c, t))

    def vjp(e):
        w = Z + e * T
        s = w / abs(w)
        return (C - s * s * mp.conj(C)) / (2 * abs(w))

    return complex(mp.diff(vjp, 0))


z, c, t = 1.383928677700259e19 - 9.34053379688733e18j, -0.8879114389419556 + 0.010758661665022373j, -3032385024 + 0j
for dtype in (np.complex64, np.complex128):
    x = tf.constant(np.array([z], dtype=dtype))
    with tf.autodiff.ForwardAccumulator(x, tf.constant(np.array([t], dtype=dtype))) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.math.sign(x)
        g = tape.gradient(y, x, output_gradients=tf.constant(np.array([c], dtype=dtype)))
    got = complex(acc.jvp(g).numpy()[0])
    print(f"tensorflow {np.dtype(dtype).name} sign forward over reverse at z = {z:.4g}: {got:.6g} exact {sgn_second(z, c, t):.6g}")

# JAX: complex64 log's second derivative -1/z^2 is formed before the tangents scale it, and at |z| near
# 1.1e19 it is below float32's smallest normal and flushed (jax-complex-log2-log10-second-derivatives-
# flush-at-huge-modulus, for log itself): forward over forward is -0 where t1 t2 (-1/z^2).
z, t1, t2 = np.complex64(-1.1040118189173244e19j), np.complex64(2.09e9 + 0.66j), np.complex64(-0.794)
got = complex(jax.jvp(lambda x: jax.jvp(jnp.log, (x,), (jnp.asarray(t1),))[1], (jnp.asarray(z),), (jnp.asarray(t2),))[1])
zm = mp.mpc(float(z.real), float(z.imag))
exact = complex(-mp.mpc(float(t1.real), float(t1.imag)) * float(t2.real) / zm**2)
print(f"jax complex64 log f'' t1 t2 at {complex(z)}: {got} exact {exact:.6g}")
