"""The second derivative of det through det·A⁻ᵀ (the frameworks' formula: PyTorch's
linalg_det_backward solves with the LU, JAX's _cofactor_solve, TensorFlow's MatrixDeterminant
gradient det·inv(A)ᵀ) against the exact one. d det = adj(A)ᵀ (the cofactor matrix) and d²det is the
cofactors' derivative: for a 5 x 5 matrix whose entries span 1e-4 to 1e4 (cond 2.6e4) the reverse
over reverse ∂/∂A[0, 3] ⟨g·∇det(A), W⟩ is 790238117.60364745 (mpmath, the minors' determinants at
60 digits); the frameworks' are a few e-4 off, 1e3 to 2e3 ulps, where an evaluation through the
cofactors (the reference's) errs by about 1e-7."""

import mpmath as mp
import numpy as np

A = [[0.0007131657968782252, 0.03904832903392167, -0.00032398337886927527, -0.39720502693041315, -308.3066429195024], [-0.010702871389372696, 4.69649486379972, -97.26504915293998, 0.014371705490060147, -28.11733348779546], [0.0004982762294869842, 688.2959675786258, -0.1616853158549277, 0.0006928865696009893, -0.003634328680660773], [-0.006426754345626057, 0.0005214148183433646, -20.253955825037405, 0.02407454672416589, 1165.5694482723607], [9877.427333458123, -251.10616654849693, -0.0013438509599925847, -7.135188803393809, 71.48696569350282]]
g = -0.4667197969615902
W = [[-0.7344694261891385, 0.08043146963820141, 0.31784170273568135, 0.7513241985277265, 0.9946791198823498], [-0.39512234818752523, 0.3013243771212488, 0.21449244105445964, 0.2948932939218839, 0.7699550358201308], [-1.2898754865584656, 0.36076873472914855, 0.00289587498901493, -0.7925504128182717, -0.0446141827527824], [0.31356098458520015, 0.8106460946256546, 0.2627115926034104, 0.913848383506929, -0.2584601045503238], [-0.42204441227476647, -0.6026655565671386, 0.4621477561625644, -0.214751726970057, -1.6886410771561828]]
A, W = np.array(A), np.array(W)


def exact():
    mp.mp.dps = 60

    def phi(X):
        return mp.fsum(
            (-1) ** (i + j) * mp.det(mp.matrix(np.delete(np.delete(X, i, 0), j, 1).tolist())) * mp.mpf(W[i, j])
            for i in range(5)
            for j in range(5)
        )

    X = np.array([[mp.mpf(v) for v in row] for row in A], dtype=object)
    h = mp.mpf(10) ** -25
    E = np.zeros((5, 5), dtype=object) * 0
    E[0, 3] = mp.mpf(1)
    return mp.mpf(g) * (phi(X + h * E) - phi(X - h * E)) / (2 * h)


def torch_d2():
    import torch

    a = torch.tensor(A, requires_grad=True)
    (gr,) = torch.autograd.grad(torch.linalg.det(a), a, torch.tensor(g, dtype=torch.float64), create_graph=True)
    return torch.autograd.grad((gr * torch.tensor(W)).sum(), a)[0][0, 3].item()


def jax_d2():
    import jax

    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    inner = jax.grad(lambda x: g * jnp.linalg.det(x))
    return float(jax.grad(lambda a: jnp.sum(inner(a) * W))(jnp.array(A))[0, 3])


def tf_d2():
    import tensorflow as tf

    a = tf.constant(A)
    with tf.GradientTape() as outer:
        outer.watch(a)
        with tf.GradientTape() as inner:
            inner.watch(a)
            d = g * tf.linalg.det(a)
        s = tf.reduce_sum(inner.gradient(d, a) * W)
    return float(outer.gradient(s, a)[0, 3])


e = exact()
for name, f in (("torch", torch_d2), ("jax", jax_d2), ("tensorflow", tf_d2)):
    got = f()
    print(f"{name} d2det[0, 3] {got!r} exact {mp.nstr(e, 17)} off {float(abs(got - e)):.2g}")
