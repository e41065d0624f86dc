"""tf.linalg.solve(A, B, adjoint=True) factors A^H instead of solving with A's own LU factors.

Solving A^H x = b is one problem, but the accuracy of the answer depends on which matrix partial
pivoting factors: LAPACK's getrs with trans='C' (PyTorch's torch.linalg.lu_solve(adjoint=True),
JAX's jax.scipy.linalg.lu_solve(trans=2), SciPy's lu_solve(trans=2)) reuses A's factors, whose
|L||U| is about |A| here; factoring A^H picks the 1.18 row for the -0.24 pivot and turns the 0.046
entry into U_22 ~ 630, so its backward error |L'||U'| is 1e4 times larger in that entry. The
exact solution is mpmath's at 60 digits."""

import mpmath
import numpy as np
import scipy.linalg
import tensorflow as tf

mpmath.mp.dps = 60
A = np.array(
    [
        [-0.24149816263556828 - 0.0003780417696512541j, 1.1837713455548762 + 5.448921148976303e-05j],
        [-0.003359097399425296 + 0.045991993558589433j, 3091.152179378596 - 0j],
    ]
)
b = np.array([[-0.0009125858899811031 + 6.814716124081712e-308j], [-55.218278786328725 + 0j]])

AH = mpmath.matrix(A.conj().T.tolist())
exact = complex((AH**-1 * mpmath.matrix(b.tolist()))[0, 0])
tf_x = complex(tf.linalg.solve(tf.constant(A), tf.constant(b), adjoint=True).numpy()[0, 0])
getrs = complex(scipy.linalg.lu_solve(scipy.linalg.lu_factor(A), b, trans=2)[0, 0])
direct = complex(np.linalg.solve(A.conj().T, b)[0, 0])
print(f"exact x[0]:                      {exact.real:.18g}")
print(f"tf.linalg.solve(adjoint=True):   {tf_x.real:.18g} ({abs(tf_x - exact):.2g} off)")
print(f"getrs 'C' with A's factors:      {getrs.real:.18g} ({abs(getrs - exact):.2g} off)")
print(f"np.linalg.solve(A^H) (factors A^H): {direct.real:.18g} ({abs(direct - exact):.2g} off)")
print("tensorflow", tf.__version__)
