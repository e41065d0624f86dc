"""Complex departures at the points of the plane the reach sweep draws (cpoints25: `refgrad run --ops
<the 21 records with complex points> --dtypes complex64,complex128 --known builtin`), each against
mpmath: sigmoid next to its poles i(2k + 1)pi (every framework), tanh next to its poles i(k + 1/2)pi
(JAX), TensorFlow's acosh gradient at the branch point -1."""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import mpmath  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402

mpmath.mp.prec = 200


def exact(f, z):
    return complex(f(mpmath.mpc(z.real, z.imag)))


def sigmoid_exact(w):
    return 1 / (1 + mpmath.exp(-w))


# sigmoid = 1/(1 + e^-z): next to a pole i(2k + 1)pi, 1 + e^-z cancels (the relative error of e^-z,
# about u, over |1 + e^-z|, about |z - i pi|), in all three frameworks; exact: mpmath
for dtype, z in ((np.complex64, complex(2.996056309712003e-06, 3.1415927410125732)),
                 (np.complex128, complex(1.7857886709804195e-13, -3.141592653589793))):  # fmt: skip
    z = dtype(z)
    t = complex(torch.sigmoid(torch.tensor(z)).item())
    j = complex(jax.nn.sigmoid(jnp.asarray(z)))
    f = complex(tf.math.sigmoid(tf.constant(z)).numpy())
    e = exact(sigmoid_exact, complex(z))
    print(f"S: sigmoid {np.dtype(dtype).name} at {complex(z)!r}: real part torch {t.real:.7g} jax {j.real:.7g} "
          f"tensorflow {f.real:.7g} exact {e.real:.7g}")  # fmt: skip

# tanh next to its pole i pi/2: JAX's complex tanh cancels (PyTorch's and TensorFlow's do not)
for dtype, z in ((np.complex64, complex(1.4980281548560015e-06, 1.5707963705062866)),
                 (np.complex128, complex(8.928943354902097e-14, -1.5707963267948966))):  # fmt: skip
    z = dtype(z)
    j = complex(jnp.tanh(jnp.asarray(z)))
    t = complex(torch.tanh(torch.tensor(z)).item())
    f = complex(tf.math.tanh(tf.constant(z)).numpy())
    e = exact(mpmath.tanh, complex(z))
    print(f"T: tanh {np.dtype(dtype).name} at {complex(z)!r}: real part jax {j.real:.7g} torch {t.real:.7g} "
          f"tensorflow {f.real:.7g} exact {e.real:.7g}")  # fmt: skip

# acosh at its branch point -1: d acosh/dz = 1/sqrt(z^2 - 1) is a pole there (PyTorch: nan, the
# reference's value at a pole); TensorFlow's gradient 1/sinh(acosh(z)) is 1/sinh(i float32(pi)), finite
x = tf.constant(np.complex64(-1))
with tf.GradientTape() as tape:
    tape.watch(x)
    y = tf.math.acosh(x)
g = complex(tape.gradient(y, x).numpy())
tt = torch.tensor(-1 + 0j, dtype=torch.complex64, requires_grad=True)
(tg,) = torch.autograd.grad(torch.acosh(tt), tt, grad_outputs=torch.tensor(1 + 0j, dtype=torch.complex64))
print(f"A: acosh gradient at z = -1 complex64: tensorflow {g!r} torch {complex(tg)!r} exact a pole (1/sqrt(z^2 - 1))")
