"""JAX's reverse over forward of jnp.linalg.svd of a complex 2 x 2 matrix is less accurate than the
op allows: the record's program [|U|^2 S, S, U V^H] of the matrix below (singular values 70.10 and
0.916), with the tangent t and cotangent c below, has d/dA[1, 0] of Re<c, JVP(A)(t)> equal to
-0.0029792299383507108+0.0020070086320941511j (mpmath, 70 digits: nested central differences of
mpmath's svd_c); the reference gives -0.0029792299383506757, PyTorch passes the case."""

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402 (after the configuration)

a = jnp.array([[-1.7325676485074362j, 0.88360039018004943j], [-69.136159973510772, 11.473094171693193j]])
t = jnp.array([[-0.16168272702607761j, 0.83913960466516169j], [-0.63132207847015476, 0.0]])
c = jnp.array(
    [-0.064493534064267194, -0.87479147873629337 + 0.21306985765857930j,  # |U|^2 S
     -1.4561663195091856 + 1.0021048327216646j, 0.0,
     -1.2286137329625852, 1.0,  # S
     -3.0j, 0.42465653864542557 + 0.32236483015146827j,  # U V^H
     0.38548961196785730j, -0.71942305718684008 + 1.1452516838982409j]
)


def program(x):
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    s = s.astype(u.dtype)
    return jnp.concatenate([(u * jnp.conj(u) * s[None, :]).ravel(), s, (u @ vh).ravel()])


# PyTorch's convention (the reference's): its VJP for cotangent c is conj(JAX's VJP for conj(c))
g_a, _ = jax.vjp(lambda x, tx: jax.jvp(program, (x,), (tx,))[1], a, t)[1](jnp.conj(c))
g_a = jnp.conj(g_a)
print(f"jax svd complex128 reverse over forward d/dA[1, 0]: {complex(g_a[1, 0]):.16g},"
      f" exact (-0.002979229938350711+0.002007008632094151j)")
