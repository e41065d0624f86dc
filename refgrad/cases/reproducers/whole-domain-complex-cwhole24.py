"""Complex departures found by `refgrad run --ops abs,expm1,log10,log1p,rsqrt,sgn,div,addcdiv --domains whole
--dtypes complex64,complex128 --draws seeded --seed 1` (cwhole24), each against mpmath."""
import mpmath as mp
import numpy as np

mp.mp.prec = 200

# TensorFlow: the gradient of complex abs, grad * z / (|z| + 0i), divides by a complex number through
# |z|^2, which underflows for |z| < sqrt(smallest normal) (1.5e-154 complex128, 1.1e-19 complex64):
# the gradient is 0 there, where it is z/|z| (modulus 1).
import tensorflow as tf  # noqa: E402

for dtype, zs in ((np.complex128, (1e-153, 1e-154, 1e-300)), (np.complex64, (1e-18, 1e-19, 1e-30))):
    x = tf.constant(np.array(zs, dtype=dtype))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.abs(x)
    g = tape.gradient(y, x).numpy()
    print(f"tensorflow {np.dtype(dtype).name} abs gradient at z = {zs}: {g.real.tolist()} exact [1.0, 1.0, 1.0]")

# ... and forward over reverse loses the term (tangent of the cotangent) * z/|z| with it.
x, c = tf.constant(np.array([1e-30 + 0j], dtype=np.complex64)), tf.constant(np.ones(1, np.float32))
with tf.autodiff.ForwardAccumulator((x, c), (tf.zeros_like(x), tf.ones_like(c))) as acc:
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.math.abs(x)
    g = tape.gradient(y, x, output_gradients=c)
print(f"tensorflow complex64 abs forward over reverse at z = 1e-30, tangent of the cotangent 1: {acc.jvp(g).numpy().real.tolist()} exact [1.0]")

# TensorFlow: complex64 log10 (tnp.log10: log z / log 10) of a full vector packet (4 elements) computes
# |z|^2 in float32, which underflows at 3e-20 + 4e-20i; a vector of 3 (the scalar remainder) is right.
import tensorflow.experimental.numpy as tnp  # noqa: E402

z = 3e-20 + 4e-20j
exact = float(mp.log10(abs(mp.mpc(z.real, z.imag))))
for n in (3, 4):
    got = tnp.log10(tf.constant(np.full(n, z, dtype=np.complex64))).numpy()[0]
    print(f"tensorflow complex64 log10({z}) in a vector of {n}: real part {got.real} exact {exact:.6f}")

# JAX: complex log1p's real part is log1p(x (2 + x) + y^2) / 2, which at x = -1 is log1p(-1 + y^2):
# -inf where y^2 underflows (|y| < 1.1e-19 complex64, 1.5e-154 complex128), where it is log|y|.
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

for dtype, y in ((np.complex64, 2.8022791141579253e-38), (np.complex128, 1e-160)):
    z = dtype(complex(-1.0, y))
    got = complex(jnp.log1p(jnp.asarray(z)))
    exact = complex(mp.log1p(mp.mpc(float(z.real), float(z.imag))))
    print(f"jax {np.dtype(dtype).name} log1p(-1+{float(z.imag):.4g}j) = {got} exact {exact:.6f}")

# Forward over reverse of complex abs (the exact value: c (t - sgn(z)^2 conj(t)) / (2|z|), c the cotangent,
# t the tangent of z). JAX: nan where |z|^2 underflows (|z| < 1.1e-19 complex64, 1.5e-154 complex128).
for dtype, part, zs in ((np.complex64, np.float32, (1e-18j, 1e-30j)), (np.complex128, np.float64, (1e-150j, 1e-200j))):
    for z in zs:
        f = lambda x: jax.vjp(jnp.abs, x)[1](jnp.ones(1, part))[0]  # noqa: E731
        _, got = jax.jvp(f, (jnp.asarray(np.array([z], dtype)),), (jnp.asarray(np.array([0.5 + 0.25j], dtype)),))
        print(f"jax {np.dtype(dtype).name} abs forward over reverse at z = {z}, c = 1, t = 0.5+0.25j: {complex(got[0]):.6g} exact {0.5 / abs(z):.6g}")

# PyTorch: at a subnormal z its abs double backward divides by |z| (1/|z| overflows): a zero cotangent
# gives nan where the exact value is 0.
import torch  # noqa: E402

x = torch.tensor([complex(-1.401298464324817e-45, 0.0)], dtype=torch.complex64)
t = torch.tensor([-1.4067315787306973e-38 + 2.260219593617935e-38j], dtype=torch.complex64)
for c in (0.0, -0.0):
    _, got = torch.func.jvp(lambda x: torch.func.vjp(torch.abs, x)[1](torch.tensor([c]))[0], (x,), (t,))
    print(f"torch complex64 abs forward over reverse at z = -1.4e-45, c = {c}: {complex(got[0])} exact 0")

# PyTorch: rsqrt's backward is -0.5 g conj(y)^3 (y = rsqrt(z)); forward over reverse multiplies y^3 by
# dy = -0.5 y^3 t, a partial product y^5 t that underflows at |z| ~ 1e154 (|y^5| ~ 1e-385) before the
# cotangent c = -5e78 scales it back into range: 0 where c conj((3/4) z^(-5/2) t) = 3.5e-307+7.5e-307i.
z, c, t = complex(-1e154, -0.0), complex(-5e78, 0), complex(-2, -0.9382754780247821)
x = torch.tensor([z], dtype=torch.complex128)
_, got = torch.func.jvp(
    lambda x: torch.func.vjp(torch.rsqrt, x)[1](torch.tensor([c], dtype=torch.complex128))[0],
    (x,),
    (torch.tensor([t], dtype=torch.complex128),),
)
zm = mp.mpc(z.real, z.imag)
exact = mp.mpc(c.real, c.imag) * mp.conj(mp.mpf(3) / 4 * zm ** (-mp.mpf(5) / 2) * mp.mpc(t.real, t.imag))
print(f"torch complex128 rsqrt forward over reverse at z = -1e154, c = -5e78: {complex(got[0])} exact {complex(exact):.6g}")

# JAX: complex128 log1p's real part, log1p(x (2 + x) + y^2) / 2, cancels for -2 < x < 0 where
# x (2 + x) < 0 (|1 + z| < 1 and |1 + z|^2 - 1 is formed from terms larger than it).
for z in (-1.0845445399033262 + 0.7607691507151648j, -1.7775948701867164 + 6.705498286144854e-308j):
    got = complex(jnp.log1p(jnp.asarray(np.complex128(z)))).real
    exact = mp.log1p(mp.mpc(z.real, z.imag)).real
    ulp = np.spacing(abs(float(exact)))
    print(f"jax complex128 log1p({z}) real part {got!r} exact {float(exact)!r}: {abs(got - float(exact)) / ulp:.0f} ulps")
