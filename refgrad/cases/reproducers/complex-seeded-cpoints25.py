"""Complex departures of the records' own draws found by `refgrad run --ops <the 21 records with
complex points> --dtypes complex64,complex128 --known builtin --draws seeded --seed 1` (cpoints25):
second derivatives at a huge modulus (values 'large'), where an intermediate (1/z^2, or
(1 + z^2)^(3/2)) leaves the dtype's normal range and the result is 0 where the exact value, scaled
by the tangents, is a normal number. Exact: mpmath, t1 t2 f''(z)."""
import os
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np, mpmath, torch, tensorflow as tf
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
mpmath.mp.prec = 100
c64 = np.complex64


def jax2(f, z, t1, t2):
    g = lambda x: jax.jvp(f, (x,), (jnp.asarray(t1),))[1]
    return complex(jax.jvp(g, (jnp.asarray(z),), (jnp.asarray(t2),))[1])


def tf2(f, z, t1, t2):
    x = tf.constant(z)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(t2)) as outer:
        with tf.autodiff.ForwardAccumulator(x, tf.constant(t1)) as inner:
            y = f(x)
        d = inner.jvp(y)
    return complex(outer.jvp(d).numpy())


def torch2(f, z, t1, t2):
    from torch.func import jvp
    x = torch.tensor(z)
    return complex(jvp(lambda a: jvp(f, (a,), (torch.tensor(t1),))[1], (x,), (torch.tensor(t2),))[1])


def ex(d2, z, t1, t2):
    w = mpmath.mpc(complex(z).real, complex(z).imag)
    return complex(d2(w) * mpmath.mpc(complex(t1).real, complex(t1).imag) * mpmath.mpc(complex(t2).real, complex(t2).imag))


z, t1, t2 = c64(-1.1040118189173244e19j), c64(2094027136 + 0.659325122833252j), c64(-0.7944443225860596 - 4.4400071777208613e-38j)
print(f"log2 f'' t1 t2 complex64 at {complex(z)!r}: jax {jax2(jnp.log2, z, t1, t2)!r} tensorflow {tf2(lambda x: tf.math.log(x) / tf.cast(np.log(2), x.dtype), z, t1, t2)!r} torch {torch2(torch.log2, z, t1, t2)!r} exact {ex(lambda w: -1 / (w * w * mpmath.log(2)), z, t1, t2)!r}")
print(f"log10 f'' t1 t2 complex64 at {complex(z)!r}: jax {jax2(jnp.log10, z, t1, t2)!r} exact {ex(lambda w: -1 / (w * w * mpmath.log(10)), z, t1, t2)!r}")
z, t1, t2 = c64(1.319276239499821e18 - 2.544292556613196e19j), c64(1.2122868299484253 - 32877778j), c64(-53685776 + 4.107216168544675e-38j)
# angle = Im log z: its second derivative is real, Im(-t1 t2 / z^2) for a real-valued function of z (the tangents complex)
print(f"angle jvp_jvp complex64 at {complex(z)!r}: tensorflow {tf2(tf.math.angle, z, t1, t2)!r} exact {ex(lambda w: 1 / (w * w), z, t1, t2).imag * -1:.6g}")
z, t1, t2 = c64(-6.959501784519803e18 + 4.35995667953877e18j), c64(1232336384 + 0.7904427647590637j), c64(-1.1392546892166138j)
print(f"asinh f'' t1 t2 complex64 at {complex(z)!r}: torch {torch2(torch.asinh, z, t1, t2)!r} jax {jax2(jnp.arcsinh, z, t1, t2)!r} tensorflow {tf2(tf.math.asinh, z, t1, t2)!r} exact {ex(lambda w: -w / (1 + w * w) ** mpmath.mpf(1.5), z, t1, t2)!r}")

# TensorFlow's vectorised complex128 log (and tnp.log10) at the largest finite number: |z|^2 overflows
# in a full vector packet (3 or more elements), while one element alone is right
import tensorflow.experimental.numpy as tnp  # noqa: E402

big = np.finfo(np.float64).max
for n in (1, 3):
    print(f"tensorflow complex128 log10 of {n} x {big!r}: {complex(tnp.log10(tf.constant(np.full(n, big + 0j))).numpy()[0])!r} "
          f"exact {float(mpmath.log10(big)):.10g}")  # fmt: skip

# the argument of a complex number with subnormal parts: JAX and TensorFlow answer pi/2
z = np.array([complex(1e-309, 1.2e-309)])
print(f"angle complex128 at {z[0]!r}: jax {float(jnp.angle(jnp.asarray(z))[0]):.6g} tensorflow {float(tf.math.angle(tf.constant(z)).numpy()[0]):.6g} "
      f"torch {float(torch.angle(torch.tensor(z))[0]):.6g} exact {float(mpmath.atan2(1.2e-309, 1e-309)):.6g}")  # fmt: skip

# JAX's derivative of angle divides by |z|^2, which underflows float32 at |z| = 3.4e-38 (the 'ties'
# draws' imaginary parts of the smallest normal magnitude just off the cut): the JVP is nan where
# Im(t/z) = 1.41e37
z, t = np.complex64(complex(-0.0, 3.388768764327184e-38)), np.complex64(-0.4791712462902069)
_, jv = jax.jvp(jnp.angle, (jnp.asarray(z),), (jnp.asarray(t),))
print(f"angle jvp complex64 at {complex(z)!r} along {complex(t)!r}: jax {float(jv)!r} exact {(complex(t) / complex(z)).imag:.6g}")

# --- cplxseed28: the seeded complex campaigns (--seed 0 and --seed 1, the 24 complex unary records) ---
# JAX's log1p second derivative differentiates t/(1 + z): (1 + z)^2 overflows float64 past
# |1 + z| = 1.34e154, and -t1 t2/(1 + z)^2 is 0 where the exact value is a normal number
z, t1, t2 = -2.892805638553048e154 + 0j, -0.5468394833943432 - 1.858144917934048e77j, -0.3104728940131453 - 3.0576110133258164e-308j
print(f"log1p f'' t1 t2 complex128 at {z!r}: jax {jax2(jnp.log1p, z, t1, t2)!r} exact {ex(lambda w: -1 / ((1 + w) * (1 + w)), z, t1, t2)!r}")


def torch_vjp_vjp(f, z, g, gg, n=9):
    """The derivative in the cotangent of the VJP of f at z (cotangent g), along gg: reverse over reverse."""
    x = torch.full((n,), z, dtype=torch.complex128 if isinstance(z, complex) else torch.complex64, requires_grad=True)
    c = torch.full((n,), g, dtype=x.dtype, requires_grad=True)
    (gx,) = torch.autograd.grad(f(x), x, c, create_graph=True)
    return complex(torch.autograd.grad(gx, c, torch.full((n,), gg, dtype=x.dtype))[0][0])


# PyTorch's complex second derivatives of sgn and sqrt at a subnormal modulus are nan where the exact
# value overflows (the infinity of that sign is the correctly rounded value)
z, g, gg = complex(-5.329104659019614e-309, -0.0), complex(-1.0000673683060093, 7.970098642927365e-308), 2.394922105824598j
print(f"torch sgn reverse over reverse complex128 at {z!r}, g = {g!r}, gg = {gg!r}: {torch_vjp_vjp(torch.sgn, z, g, gg)!r} "
      f"exact (gg - sgn^2 conj(gg))/(2|z|) = {complex(mpmath.mpc(gg) * 2 / (2 * mpmath.mpf(abs(z))))}")  # fmt: skip
z, t1, t2 = complex(-0.0, 1.4671569769294583e-308), complex(-0.8479818464535521, -2.0549602869312364), complex(-0.0, -1.27448901469617e77)
print(f"torch sqrt f'' t1 t2 complex128 at {z!r}: {torch2(torch.sqrt, z, t1, t2)!r} exact {ex(lambda w: -1 / (4 * w * mpmath.sqrt(w)), z, t1, t2)!r}")

# PyTorch's complex64 log10 backward g / (conj(z) log 10) divides in c10::complex<float>, which overflows
# at a subnormal z although the quotient is a float32 number
z, g, gg = np.complex64(6.718175162589254e-40 - 0j), np.complex64(0.8429169058799744j), np.complex64(-0.24444670975208282j)
print(f"torch log10 reverse over reverse complex64 at {complex(z)!r}, g = {complex(g)!r}, gg = {complex(gg)!r}: "
      f"{torch_vjp_vjp(torch.log10, z, g, gg)!r} exact {complex(gg) / (complex(z).conjugate() * np.log(10))!r}")  # fmt: skip

# TensorFlow's complex64 log2 (tnp.log2: log z / log 2) of a full vector packet (4 elements) computes |z|^2
# in float32, which underflows at -0 + 2.88e-38i
import tensorflow.experimental.numpy as tnp  # noqa: E402

z = np.complex64(complex(-0.0, 2.8787830038177387e-38))
for n in (3, 4):
    got = complex(tnp.log2(tf.constant(np.full(n, z))).numpy()[0])
    print(f"tensorflow complex64 log2({complex(z)!r}) in a vector of {n}: {got!r} exact {complex(mpmath.log(mpmath.mpc(0, float(z.imag)), 2))!r}")

# TensorFlow's complex64 sigmoid 1/(1 + e^-z) 0.11 from the pole 169 pi i (a 'wide' draw): 1 + e^-z cancels
z = np.complex64(complex(0.00058105873, 530.8198))
w = mpmath.mpc(float(z.real), float(z.imag))
print(f"sigmoid complex64 at {complex(z)!r}: tensorflow {complex(tf.math.sigmoid(tf.constant(np.full(4, z))).numpy()[0])!r} "
      f"torch {complex(torch.sigmoid(torch.tensor(np.full(4, z)))[0])!r} jax {complex(jax.nn.sigmoid(jnp.asarray(np.full(4, z)))[0])!r} "
      f"exact {complex(1 / (1 + mpmath.exp(-w)))!r} |z - 169 pi i| = {float(abs(w - 169j * mpmath.pi)):.3g}")  # fmt: skip

# --- cplx29: the seeded complex campaign of log10,log2,log,div,reciprocal,sqrt,sgn,log1p (--seed 0) ---
# TensorFlow's complex division of a full vector packet (4 complex64, 2 complex128 here) by an infinity
# is nan + nan i, where finite / infinite = 0 (C99 Annex G, PyTorch, NumPy, the reference); the scalar
# remainder and one element alone are right
for dt, n in ((np.complex64, 4), (np.complex128, 2)):
    q = tf.math.divide(tf.constant(np.full(n, 0.314 + 0j, dt)), tf.constant(np.full(n, complex(-np.inf, -1.42), dt))).numpy()
    one = tf.math.divide(tf.constant(0.314 + 0j, dt), tf.constant(complex(-np.inf, -1.42), dt)).numpy()
    print(f"tensorflow {np.dtype(dt).name} (0.314+0j) / (-inf-1.42j) in a vector of {n}: {complex(q[0])!r}, alone: {complex(one)!r}")

# TensorFlow's vectorised complex128 log (tnp.log2: log z / log 2) underflows |z|^2 at the 'ties' draws'
# -0 + 5.4e-308i (the smallest normal just off the cut) in a full packet
z = complex(-0.0, 5.449200581e-308)
for n in (1, 2):
    got = complex(tnp.log2(tf.constant(np.full(n, z))).numpy()[0])
    print(f"tensorflow complex128 log2({z!r}) in a vector of {n}: {got!r} exact {complex(mpmath.log(mpmath.mpc(0, z.imag), 2))!r}")

# TensorFlow's reverse over forward of reciprocal at the smallest float64 normal, a 0-d tensor: 0 where
# the exact 2 t c / x^3 = 4.055e308 overflows (+inf); a vector of 1 gives +inf
x0, t0, c0 = 2.2250738585072014e-308, -2.7991289021207307e-308, -7.979889020052017e-308
for shape in ((), (1,)):
    x, t, c = (tf.constant(np.full(shape, v)) for v in (x0, t0, c0))
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tf.autodiff.ForwardAccumulator(x, t) as acc:
            y = tnp.reciprocal(x)
        ty = acc.jvp(y)
    g = float(np.ravel(tape.gradient(ty, x, output_gradients=c).numpy())[0])
    print(f"tensorflow reciprocal reverse over forward float64 shape {list(shape)} at x = 2^-1022, t = {t0!r}, c = {c0!r}: {g!r} "
          f"exact {mpmath.nstr(2 * mpmath.mpf(t0) * mpmath.mpf(c0) / mpmath.mpf(x0) ** 3, 4)} (past float64: +inf)")  # fmt: skip

# JAX's complex reciprocal second derivatives at an infinity with a zero other part (inf + 0i, -inf - 0i):
# nan where 2 t c / z^3 -> 0; at -inf + 1i, and in float64, 0
def jax_rof(f, z, t, c):
    """Reverse over forward: the VJP (cotangent c) of the JVP of f along t."""
    return complex(jax.vjp(lambda x: jax.jvp(f, (x,), (jnp.asarray(t),))[1], jnp.asarray(z))[1](jnp.asarray(c))[0])


for z in (complex(-np.inf, -0.0), complex(np.inf, 0.0), complex(-np.inf, 1.0)):
    print(f"jax reciprocal reverse over forward complex128 at {z!r}, t = -0.5, c = -2-1.67j: {jax_rof(jnp.reciprocal, z, -0.5 + 0j, -2 - 1.67j)!r} exact 0")

# JAX's float64 log second derivative goes through 1/u^2, which overflows for |u| < 2^-512: the forward
# over reverse tc/u - c t1/u^2 at u = 4.579e-308 is -inf where it is -7.4975e307
u, c, t1, tc = 4.5790526061505299e-308, -1.4202929020537394, -7.8445440152253450e-308, -1.0
got = float(jax.jvp(lambda x, g: jax.vjp(jnp.log, x)[1](g)[0], (jnp.asarray(u), jnp.asarray(c)), (jnp.asarray(t1), jnp.asarray(tc)))[1])
exact = mpmath.mpf(tc) / u - mpmath.mpf(c) * t1 / mpmath.mpf(u) ** 2
print(f"jax log forward over reverse float64 at u = {u!r}, c = {c!r}, t1 = {t1!r}, tc = {tc!r}: {got!r} exact {float(exact):.6g}")

# JAX's complex log2 and log10 second derivatives go through 1/z^2 as log's do: at z = 1.82e-38i
# (complex64, |z|^2 underflows) a zero tangent meets it, and the forward over reverse is nan
z, c, t1, tc = np.complex64(1.8188177239777857e-38j), np.complex64(1 + 2.532489776611328j), np.complex64(-0j), np.complex64(-1.0391544562164187e-38 + 2.0849984310418312e-38j)
for name, f, base in (("log2", jnp.log2, 2), ("log10", jnp.log10, 10)):
    got = complex(jax.jvp(lambda x, g: jax.vjp(f, x)[1](g)[0], (jnp.asarray(z), jnp.asarray(c)), (jnp.asarray(t1), jnp.asarray(tc)))[1])
    w = mpmath.mpc(0, float(z.imag))
    exact = complex(mpmath.mpc(complex(tc)) / (w * mpmath.log(base)))  # JAX's VJP ct f'(z), along tc: tc/(z ln b) (t1 = 0)
    print(f"jax {name} forward over reverse complex64 at {complex(z)!r} with a zero tangent: {got!r} exact {exact!r}")

# PyTorch's complex sigmoid 1/(1 + exp(-z)) far left of the imaginary axis: exp(-z) overflows both parts,
# and 1 / (inf + inf i) is nan where sigmoid(z) ~ e^z is 0 (complex128 past Re z = -709; an infinite
# real part alike)
for z in (complex(-800, 1.0), complex(-np.inf, 1.23)):
    print(f"torch complex128 sigmoid({z!r}): {complex(torch.sigmoid(torch.tensor([z], dtype=torch.complex128))[0])!r} "
          f"exact {mpmath.nstr(1 / (1 + mpmath.exp(-mpmath.mpc(z.real, z.imag))), 4) if np.isfinite(z.real) else 'the limit 0'}")  # fmt: skip

# A QR pivot whose real part is -0.0: JAX (and NumPy) reflect it as a negative number, PyTorch (MKL's
# LAPACK) and TensorFlow as +0.0, so R[0, 0] and Q's first column have the other sign
for a in (np.array([[-0.0, 1.0], [2.0, 3.0]]), np.array([[complex(-0.0, 0.9508), 0.4291 - 1.5736j], [-0.617, -0.2786 - 1.0922j]])):
    print(f"qr R[0, 0] at the pivot {a[0, 0]!r}: jax {complex(jnp.linalg.qr(jnp.asarray(a))[1][0, 0])!r} "
          f"torch {complex(torch.linalg.qr(torch.tensor(a))[1][0, 0])!r} tensorflow {complex(tf.linalg.qr(tf.constant(a))[1].numpy()[0, 0])!r}")  # fmt: skip

# TensorFlow's complex cumprod gradient is reverse_cumsum(g y) / x, the holomorphic derivative without the
# conjugate its (and PyTorch's) convention takes: sum_k g_k conj(y_k / x_i)
x, g = np.array([1 + 2j, 0.5 - 1j, -1 + 0.3j]), np.array([1 + 0j, 0.5j, -1 + 1j])
xt = tf.constant(x)
with tf.GradientTape() as tape:
    tape.watch(xt)
    y = tf.math.cumprod(xt)
got = tape.gradient(y, xt, output_gradients=tf.constant(g)).numpy()
ys = np.cumprod(x)
exact = [sum(g[k] * np.conj(ys[k] / x[i]) for k in range(i, 3)) for i in range(3)]
print(f"tensorflow cumprod VJP complex128 at {x.tolist()!r}, g = {g.tolist()!r}: {got.tolist()!r} "
      f"exact {[complex(e) for e in exact]!r}")  # fmt: skip
