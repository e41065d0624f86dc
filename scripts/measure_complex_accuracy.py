"""Measure complex elementary functions against mpmath: the figures behind the complex declarations of
reference/errors/complex.py.

For each op named on the command line (default: all of reference.errors.complex_grid.MPMATH), in
complex64 and complex128, prints for each implementation (the reference's own kernel, PyTorch, JAX,
TensorFlow) the worst error of each part normwise, ``|Δre| / (2u·|y|)`` and ``|Δim| / (2u·|y|)``
(``c`` of the declaration ``|fl(y) - y| <= 2·c·u·|y|``: ulps of the part dtype relative to the
modulus), with its argument, on reference.errors.complex_grid's points of the plane (moduli from the
smallest to the largest, the axes and the branch points approached from both sides, both signs of
zero). Points with a zero part on the op's branch cut are reported on their own line (the side the
zero's sign names is a convention with known entries, not accuracy); the poles are left out.

Run from the repository root: ``python scripts/measure_complex_accuracy.py asinh atanh`` (about 20
seconds an op after the frameworks' imports)."""

from __future__ import annotations

import argparse

import numpy as np

import reference as T
from reference.errors.complex_grid import at_pole, exact, grid, on_cut, part_errors

#: op -> (torch name, jax.numpy name or None, tf.math name)
NAMES = {
    "asinh": ("asinh", "arcsinh", "asinh"),
    "acosh": ("acosh", "arccosh", "acosh"),
    "atanh": ("atanh", "arctanh", "atanh"),
    "asin": ("asin", "arcsin", "asin"),
    "acos": ("acos", "arccos", "acos"),
    "atan": ("atan", "arctan", "atan"),
    "expm1": ("expm1", "expm1", "expm1"),
    "log1p": ("log1p", "log1p", "log1p"),
    "sinh": ("sinh", "sinh", "sinh"),
    "cosh": ("cosh", "cosh", "cosh"),
    "sqrt": ("sqrt", "sqrt", "sqrt"),
    "rsqrt": ("rsqrt", None, "rsqrt"),
    "reciprocal": ("reciprocal", "reciprocal", "reciprocal"),
    "sigmoid": ("sigmoid", None, "sigmoid"),
}


def implementations(name):
    """(label, function of a complex array) for each implementation of ``name``."""
    import jax
    import jax.numpy as jnp
    import tensorflow as tf
    import torch

    jax.config.update("jax_enable_x64", True)
    t, j, f = NAMES[name]
    out = [("reference", lambda z: getattr(T, name)(T.tensor(z)).numpy())]
    out.append(("torch", lambda z: getattr(torch, t)(torch.from_numpy(z)).numpy()))
    if j is not None:
        out.append(("jax", lambda z: np.asarray(getattr(jnp, j)(jnp.asarray(z)))))
    out.append(("tensorflow", lambda z: getattr(tf.math, f)(tf.constant(z)).numpy()))
    return out


def worst(errors, z, keep):
    """Per part: the largest error over the points ``keep`` selects, with its argument."""
    cols = []
    for r in errors:
        r = np.where(keep, r, 0.0)
        i = int(np.argmax(r))
        cols.append((float(r[i]), complex(z[i])))
    return cols


def measure(name, dtype):
    z = grid(dtype)
    want = exact(name, z)
    cut, pole = on_cut(name, z), at_pole(name, z)
    rows = []
    for label, fn in implementations(name):
        with np.errstate(all="ignore"):
            errors = part_errors(np.asarray(fn(z)), want, dtype)
        rows.append((label, worst(errors, z, ~cut & ~pole), worst(errors, z, cut)))
    return len(z), rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ops", nargs="*", default=sorted(NAMES), help=f"of {', '.join(sorted(NAMES))}")
    args = parser.parse_args(argv)
    for name in args.ops:
        if name not in NAMES:
            parser.error(f"ops: {name!r} is not one of {', '.join(sorted(NAMES))}")
    for name in args.ops:
        for dtype in (np.complex64, np.complex128):
            n, rows = measure(name, dtype)
            print(f"{name} {np.dtype(dtype).name} ({n} points), worst |Δpart|/(2u|y|):")
            for label, off, on in rows:
                for where, ((re, zre), (im, zim)) in (("", off), (" on a cut, signed zero", on)):
                    if where and max(re, im) == 0:
                        continue
                    print(f"  {label:<11}{where} re {re:8.3g} at {zre:.9g}   im {im:8.3g} at {zim:.9g}")


if __name__ == "__main__":
    main()
