"""The reductions and normalizations with a closed form against the mathematics (issue 38).

logsumexp, softmax, log_softmax, prod, the vector norms (p = 1, 2, inf, 3, 1.5), var and std
(correction 0 and 1), cumsum, cumprod, sum and mean map a float64 vector x to a vector or a
scalar y. Their values, Jacobians J[j][k] = dy_j/dx_k and Hessians H[j][k][l] are written in
closed form and evaluated by mpmath at 2400 bits, where every sum of float64 terms (and product
of a few) is exact whatever their exponents; 1 - s_k of a softmax is the sum of the other s_i.

The reference's float64 answers are compared entry by entry, each entry read with unit
cotangents and tangents (so that no sum over a cotangent hides or adds cancellation):

* ``value``: every y_j;
* ``vjp`` (row j of J: ``autograd.grad(y[j], x)``) and ``jvp`` (column k: ``func.jvp`` with the
  tangent e_k); ``d1`` is the worse of the two;
* ``vjp_vjp`` (grad of the gradient's entry k), ``jvp_jvp`` (jvp of jvp, tangents e_k then e_l),
  ``vjp_jvp`` (the vjp with e_j of the jvp with e_k: reverse over forward) and ``jvp_vjp`` (the
  jvp with e_l of the vjp with e_j: forward over reverse), the four second-order checks of
  conformance.case.CHECKS; ``d2`` is the worst of the four.

On a short vector every j, k, l is read; on a long one (the grids' vectors of 200 and 1000) the
first, middle and last indices of each (every value is read).

Where the mathematics has no derivative (a norm at the zero vector, |x_k| at x_k = 0 in the
1-norm, a tie for the largest |x_k| in the inf-norm, |x|^(p - 2) at 0 for p < 2) the exact
function answers ``None``: the reference keeps PyTorch's convention there, and the entry is
compared with stock PyTorch's answer (torch, float64) instead, reported apart as ``conv``.

The error is in ulps of the exact value in the mixed sense of tests/autograd/exact_table.py
(below 2^-1000 in units of 2^-1052; an exact value past the float64 range must be the infinity of
its sign). ``python -m tests.autograd.exact_reductions [NAME ...]`` prints the table of
docs/accuracy.md; tests/autograd/test_reduction_accuracy.py asserts the ceilings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import mpmath
import numpy as np

import reference as T
from tests.autograd.exact_table import _fmt, ulps

m = mpmath
PREC = 2400  # bits: a sum of float64 terms from 2^1024 down to 2^-1074 is exact
LN2 = math.log(2.0)


@dataclasses.dataclass
class Entry:
    """A reduction or normalization of a 1-D float64 vector.

    ``call(lib, x)``: the op in ``lib`` (the reference or torch, same spelling). ``exact(xs)``
    (xs: list of mpf at :data:`PREC`) returns an object with ``value(j)``, ``d1(j, k)`` and
    ``d2(j, k, l)``, each an mpf, or None where the derivative does not exist."""

    name: str
    call: Callable
    exact: Callable
    grid: list


# ---- the exact functions --------------------------------------------------------------------------------


def _fsum(it):
    return m.fsum(it)


class _Linear:
    """y = A x for a 0/1 (or 1/n) matrix A: sum, mean, cumsum."""

    def __init__(self, xs, kind):
        self.xs, self.kind, self.n = xs, kind, len(xs)
        if kind == "cumsum":
            acc, self.prefix = m.mpf(0), []
            for v in xs:
                acc += v
                self.prefix.append(acc)
        else:
            self.total = _fsum(xs)

    def value(self, j):
        if self.kind == "cumsum":
            return self.prefix[j]
        return self.total / self.n if self.kind == "mean" else self.total

    def d1(self, j, k):
        if self.kind == "cumsum":
            return m.mpf(1 if k <= j else 0)
        return m.mpf(1) / self.n if self.kind == "mean" else m.mpf(1)

    def d2(self, j, k, l):
        return m.mpf(0)


class _Softmax:
    """logsumexp L, s = softmax, log_softmax x - L; D(a, b) = δ_ab - s_b (1 - s_a as the sum of
    the other s_i)."""

    def __init__(self, xs, kind):
        self.xs, self.kind = xs, kind
        self.L = m.log(_fsum(m.exp(v) for v in xs))
        self.s = [m.exp(v - self.L) for v in xs]
        total = _fsum(self.s)
        self.comp = [total - si for si in self.s]  # exact at PREC unless s_i is within 2^-2400 of 1

    def D(self, a, b):
        return self.comp[a] if a == b else -self.s[b]

    def value(self, j):
        if self.kind == "logsumexp":
            return self.L
        return self.s[j] if self.kind == "softmax" else self.xs[j] - self.L

    def d1(self, j, k):
        if self.kind == "logsumexp":
            return self.s[k]
        return self.s[j] * self.D(j, k) if self.kind == "softmax" else self.D(j, k)

    def d2(self, j, k, l):
        if self.kind == "logsumexp":
            return self.s[k] * self.D(k, l)
        if self.kind == "log_softmax":
            return -self.s[k] * self.D(k, l)
        s = self.s
        return s[j] * self.D(j, l) * self.D(j, k) - s[j] * s[k] * self.D(k, l)


def _prod_except(xs, upto, skip):
    out = m.mpf(1)
    for i in range(upto + 1):
        if i not in skip:
            out *= xs[i]
    return out


class _Prod:
    """prod (one output, the whole vector) or cumprod (y_j over i <= j)."""

    def __init__(self, xs, cumulative):
        self.xs, self.cum, self.n = xs, cumulative, len(xs)
        self.prefix, acc = [], m.mpf(1)
        for v in xs:
            acc *= v
            self.prefix.append(acc)

    def _last(self, j):
        return j if self.cum else self.n - 1

    def value(self, j):
        return self.prefix[self._last(j)]

    def d1(self, j, k):
        j = self._last(j)
        if k > j:
            return m.mpf(0)
        if self.xs[k] != 0:
            return self.prefix[j] / self.xs[k]
        return _prod_except(self.xs, j, {k})

    def d2(self, j, k, l):
        j = self._last(j)
        if k == l or k > j or l > j:
            return m.mpf(0)
        if self.xs[k] != 0 and self.xs[l] != 0:
            return self.prefix[j] / (self.xs[k] * self.xs[l])
        return _prod_except(self.xs, j, {k, l})


class _Norm:
    """The vector p-norm; None where it has no derivative (see the module docstring)."""

    def __init__(self, xs, p):
        self.xs, self.p = xs, p
        a = [abs(v) for v in xs]
        self.a = a
        if p == 1:
            self.N = _fsum(a)
        elif p == math.inf:
            self.N = max(a)
            self.ties = sum(1 for v in a if v == self.N)
        else:
            self.N = _fsum(v**p for v in a) ** (m.mpf(1) / p)

    def value(self, j):
        return self.N

    def d1(self, j, k):
        x, p, N = self.xs[k], self.p, self.N
        if p == 1:
            return None if x == 0 else m.sign(x)
        if p == math.inf:
            if self.a[k] != N:
                return m.mpf(0)
            return None if self.ties > 1 or N == 0 else m.sign(x)
        if N == 0:
            return None
        return m.sign(x) * (self.a[k] / N) ** (p - 1)

    def d2(self, j, k, l):
        p, N = self.p, self.N
        if p in (1, math.inf):
            return None if self.d1(j, k) is None or self.d1(j, l) is None else m.mpf(0)
        if N == 0 or (p < 2 and (self.xs[k] == 0 or self.xs[l] == 0)):
            return None
        uk = m.sign(self.xs[k]) * (self.a[k] / N) ** (p - 1)
        ul = m.sign(self.xs[l]) * (self.a[l] / N) ** (p - 1)
        diag = (p - 1) * (self.a[k] / N) ** (p - 2) / N if k == l else 0
        return diag - (p - 1) * uk * ul / N


class _Var:
    """var (std: ``root``) with ``correction``; μ the mean, c_k = x_k - μ."""

    def __init__(self, xs, correction, root):
        n = len(xs)
        self.n, self.dof, self.root = n, n - correction, root
        mu = _fsum(xs) / n
        self.c = [v - mu for v in xs]
        self.V = _fsum(v * v for v in self.c) / self.dof
        self.S = m.sqrt(self.V)

    def value(self, j):
        return self.S if self.root else self.V

    def d1(self, j, k):
        if self.root:
            return None if self.S == 0 else self.c[k] / (self.dof * self.S)
        return 2 * self.c[k] / self.dof

    def d2(self, j, k, l):
        delta = (1 if k == l else 0) - m.mpf(1) / self.n
        if not self.root:
            return 2 * delta / self.dof
        if self.S == 0:
            return None
        return delta / (self.dof * self.S) - self.c[k] * self.c[l] / (self.dof**2 * self.S**3)


# ---- grids ----------------------------------------------------------------------------------------------

_RNG = np.random.default_rng(20261129)
LONG = 1000


def _v(*xs):
    return np.array(xs, dtype=np.float64)


def _cancelling_sum(n=6):
    """Terms of mixed sign and magnitude whose float64 sum in any order loses most digits."""
    return [
        _v(1e16, 1.0, -1e16),
        _v(1.0, 1e100, 1.0, -1e100),
        _v(0.1, 0.2, -0.3),
        _v(1e300, -1e300, 5e-324, 3.0),
        _v(*(_RNG.standard_normal(n) * 1e10), 1.0, *(-_RNG.standard_normal(n) * 1e10)),
    ]


_LOG_HALF = math.log(0.5)
_SHIFTED = _v(-1.0, math.log1p(-math.exp(-1.0)))  # e^a + e^b = 1: logsumexp cancels to ~0

_SOFTMAX_GRID = [
    _v(1.0, 2.0, 3.0),
    _v(0.0, 0.0, 0.0, 0.0),
    _v(0.0, -40.0),  # s_0 rounds to 1: 1 - s_0 = 4.2e-18
    _v(0.0, -20.0, -40.0),
    _v(3.5, -745.0, 2.0),
    _v(700.0, -700.0, 699.5),
    _v(1e308, 1e308),  # x - max = 0: no overflow
    _v(1e308, -1e308, 1e307),
    _v(-1e308, -1e308, -1e-300),
    _v(5e-324, -5e-324, 0.0),
    _v(_LOG_HALF, _LOG_HALF),  # logsumexp ~ 0: log(2) + max cancels
    _SHIFTED,
    _v(*([-math.log(7.0)] * 7)),
    _RNG.standard_normal(LONG) * 3,
    np.full(LONG, -math.log(LONG)),  # logsumexp ~ 0 over a long vector
]

_PROD_GRID = [
    _v(2.0, 3.0, 4.0),
    _v(0.0, 2.0, 3.0),  # one zero: the gradient is the product of the others
    _v(2.0, 0.0, 0.0, 5.0),  # two zeros
    _v(-0.0, 0.5, -3.0),
    _v(1e200, 1e200, 1e-200),  # the running product overflows, the product does not
    _v(1e-200, 1e-200, 1e200, 3.0),  # and underflows
    _v(1e300, 1e10),  # the product overflows: inf
    _v(1e-300, 1e-30),  # and underflows past the subnormals
    _v(-1.5, 2.5, -0.75, 1.25, 0.1),
    1.0 + _RNG.standard_normal(LONG) * 1e-3,
]

_NORM_GRID = [
    _v(3.0, 4.0),
    _v(0.0, 0.0, 0.0),  # the norm at 0: PyTorch's convention (gradient 0)
    _v(0.0, -2.0, 1.0),
    _v(1e200, 1e200, -1e200),  # the squares overflow
    _v(1e-200, -1e-200, 3e-200),  # the squares underflow
    _v(5e-324, 1e-320),
    _v(1e308, 1e308),  # the 2-norm overflows: inf
    _v(-2.0, 2.0, 1.0),  # a tie for the largest |x|
    _v(1.0, 1e-20, -1e-10),
    _v(0.1, -0.2, 0.3, -0.4, 0.5),
    _RNG.standard_normal(LONG),
]

_VAR_GRID = [
    _v(1.0, 2.0, 3.0, 4.0),
    _v(5.0, 5.0, 5.0),  # zero variance: std's derivative at the kink (PyTorch: 0)
    _v(1e8 + 1.0, 1e8 + 2.0, 1e8 + 3.0),  # a large mean, small spread
    _v(1e15, 1e15 + 2.0, 1e15 + 4.0, 1e15 + 6.0),
    _v(1e200, -1e200, 3e200),  # the squares overflow
    _v(1e-200, 3e-200, -2e-200),  # the squares underflow
    _v(0.1, 0.2, 0.3),
    _v(1.0, 1.0 + 2.0**-52, 1.0),
    _v(-3.0, 7.0),
    1e6 + _RNG.standard_normal(LONG),
]

_SUM_GRID = _cancelling_sum() + [
    _v(1.0, 2.0, 3.0),
    _v(1e308, 1e308, -1e308),  # the running sum overflows, the sum does not
    _v(1e308, 1e308),  # the sum overflows: inf
    _v(5e-324, 5e-324, -1e-323),
    _RNG.standard_normal(LONG),
    np.concatenate([[1e16], np.ones(LONG - 2), [-1e16]]),  # ones lost against 1e16
]

_CUMSUM_GRID = [v for v in _SUM_GRID if len(v) <= LONG] + [_v(1e16, 1.0, -1e16, 1.0)]
_CUMPROD_GRID = _PROD_GRID[:-1] + [1.0 + _RNG.standard_normal(200) * 1e-3]


def _norm_call(p):
    return lambda L, x: L.linalg.vector_norm(x, ord=p)


def _var_call(fn, correction):
    return lambda L, x: getattr(L, fn)(x, correction=correction)


def entries():
    out = {}

    def add(name, call, exact, grid):
        out[name] = Entry(name, call, exact, grid)

    add("sum", lambda L, x: L.sum(x), lambda xs: _Linear(xs, "sum"), _SUM_GRID)
    add("mean", lambda L, x: L.mean(x), lambda xs: _Linear(xs, "mean"), _SUM_GRID)
    add("cumsum", lambda L, x: L.cumsum(x, 0), lambda xs: _Linear(xs, "cumsum"), _CUMSUM_GRID)
    for kind in ("logsumexp", "softmax", "log_softmax"):
        call = (lambda k: lambda L, x: getattr(L, k)(x, 0))(kind)
        add(kind, call, (lambda k: lambda xs: _Softmax(xs, k))(kind), _SOFTMAX_GRID)
    add("prod", lambda L, x: L.prod(x), lambda xs: _Prod(xs, False), _PROD_GRID)
    add("cumprod", lambda L, x: L.cumprod(x, 0), lambda xs: _Prod(xs, True), _CUMPROD_GRID)
    for p in (1, 2, math.inf, 3, 1.5):
        add(f"norm_{p}", _norm_call(p), (lambda q: lambda xs: _Norm(xs, q))(p), _NORM_GRID)
    for fn in ("var", "std"):
        for c in (0, 1):
            add(f"{fn}_c{c}", _var_call(fn, c), (lambda f, cc: lambda xs: _Var(xs, cc, f == "std"))(fn, c), _VAR_GRID)
    return out


ENTRIES = entries()

#: what this module does not measure, and why (docs/accuracy.md carries the list)
NOT_MEASURED = {
    "amax, amin, max, min, median, kthvalue, sort, topk, cummax, cummin": "selections: exact values, derivatives 0 or 1 routed by a tie convention",
    "nansum, nanmean": "sum and mean with the nans masked: the same kernels",
    "var_mean, std_mean": "var and std and the mean, the same kernels",
    "logcumsumexp": "tests/autograd/test_scan_accuracy.py (the second order at zero cotangents)",
    "norm for complex input, dims other than one, batched (vmap) forms": "the 1-D real kernels are measured",
}


# ---- the reference's (and torch's) answers ------------------------------------------------------------


def _indices(size):
    if size <= 8:
        return list(range(size))
    return sorted({0, size // 2, size - 1})


def answers(lib, call, x_np, outs, ins, second=True):
    """{check: {index: float}}: value (j,), vjp/jvp (j, k), the second-order checks (j, k, l),
    read with unit cotangents e_j and tangents e_k, e_l (``outs``: the j read, ``ins``: the k, l)."""
    res = {c: {} for c in ("value", "vjp", "jvp", "vjp_vjp", "jvp_jvp", "vjp_jvp", "jvp_vjp")}
    n = len(x_np)
    xd = lib.tensor(x_np, dtype=lib.float64)
    x = xd.clone().requires_grad_(True)

    def f(v):
        return call(lib, v).reshape(-1)

    def unit(i, size):
        e = np.zeros(size)
        e[i] = 1.0
        return lib.tensor(e, dtype=lib.float64)

    def arr(t):
        t = t.detach()
        try:
            return t.numpy().astype(np.float64).reshape(-1)
        except RuntimeError:  # torch's ZeroTensor (a gradient known to be 0)
            return t.numpy(force=True).astype(np.float64).reshape(-1)

    y = f(x)
    size = y.shape[0]
    for j, v in enumerate(arr(y)):
        res["value"][(j,)] = float(v)
    for j in outs(size):
        (g,) = lib.autograd.grad(y[j], x, create_graph=True, retain_graph=True)
        for k, v in enumerate(arr(g)):
            res["vjp"][(j, k)] = float(v)
        if not second:
            continue
        for k in ins(n):
            if g.requires_grad:
                (h,) = lib.autograd.grad(g[k], x, retain_graph=True, allow_unused=True)
                row = np.zeros(n) if h is None else arr(h)
            else:
                row = np.zeros(n)
            for l, v in enumerate(row):
                res["vjp_vjp"][(j, k, l)] = float(v)
        ej = unit(j, size)

        def grad_row(v, ej=ej):
            return lib.func.vjp(f, v)[1](ej)[0]

        for l in ins(n):
            for k, v in enumerate(arr(lib.func.jvp(grad_row, (xd,), (unit(l, n),))[1])):
                res["jvp_vjp"][(j, k, l)] = float(v)
    for k in ins(n):
        ek = unit(k, n)
        for j, v in enumerate(arr(lib.func.jvp(f, (xd,), (ek,))[1])):
            res["jvp"][(j, k)] = float(v)
        if not second:
            continue

        def column(v, ek=ek):
            return lib.func.jvp(f, (v,), (ek,))[1]

        for l in ins(n):
            for j, v in enumerate(arr(lib.func.jvp(column, (xd,), (unit(l, n),))[1])):
                res["jvp_jvp"][(j, k, l)] = float(v)
        _, pull = lib.func.vjp(column, xd)
        for j in outs(size):
            for l, v in enumerate(arr(pull(unit(j, size))[0])):
                res["vjp_jvp"][(j, k, l)] = float(v)
    return res


def _torch_answers(call, x_np, outs, ins):
    import torch

    return answers(torch, call, x_np, outs, ins)


ORDER_OF = {"value": "value", "vjp": "d1", "jvp": "d1", "vjp_vjp": "d2", "jvp_jvp": "d2", "vjp_jvp": "d2", "jvp_vjp": "d2"}


def measure(entry, lib=T):
    """{order: (worst ulps, check, vector label, index)} for order in value, d1, d2 and conv
    (the entries without a derivative, against stock PyTorch); ``lib`` torch measures PyTorch."""
    worst = {}

    def note(order, err, check, label, idx):
        if order not in worst or err > worst[order][0] or math.isnan(err):
            worst[order] = (err, check, label, idx)

    for x_np in entry.grid:
        n = len(x_np)
        label = _label(x_np)
        got = answers(lib, entry.call, x_np, _indices, _indices)
        with m.workprec(PREC):
            ex = entry.exact([m.mpf(float(v)) for v in x_np])
        # the sums above are exact at PREC; the products of the derivatives and the ulps of a long
        # vector's many entries need far fewer bits (no cancellation is left in them on these grids)
        with m.workprec(PREC if n <= 8 else 256):
            conv = None
            for check, vals in got.items():
                order = ORDER_OF[check]
                read = set(_indices(len(got["value"])))
                for idx, g in vals.items():
                    if order != "value" and idx[0] not in read:  # a long vector: the outputs read
                        continue
                    if order == "value":
                        e = ex.value(idx[0])
                    elif order == "d1":
                        e = ex.d1(*idx)
                    else:
                        j, a, b = idx
                        e = ex.d2(j, a, b)
                    if e is None:
                        if conv is None:
                            conv = _torch_answers(entry.call, x_np, _indices, _indices)
                        err = _close(g, conv[check][idx])
                        note("conv", err, check, label, idx)
                        continue
                    note(order, ulps(g, e), check, label, idx)
    return worst


def _close(got, want):
    """ulps of ``want`` (a float64, PyTorch's convention) in the same mixed sense."""
    if math.isnan(want) or math.isinf(want):
        return 0.0 if (math.isnan(got) and math.isnan(want)) or got == want else math.inf
    with m.workprec(PREC):
        return ulps(got, m.mpf(want))


def _label(x):
    if len(x) > 8:
        return f"[{len(x)} elements, {x[0]:.3g}, ...]"
    return "[" + ", ".join(repr(float(v)) for v in x) + "]"


def table(names=None, echo=False):
    """Markdown rows: primitive, value, d1, d2 (and conv) worst ulps, each with its check and vector."""
    rows = ["| primitive | value | d1 | d2 | conventions (vs PyTorch) |", "|---|---|---|---|---|"]
    for name in names or ENTRIES:
        w = measure(ENTRIES[name])
        cells = []
        for order in ("value", "d1", "d2", "conv"):
            if order not in w:
                cells.append("—")
                continue
            err, check, label, idx = w[order]
            at = "" if check == "value" else f"{check} {idx} "
            cells.append(f"{_fmt(err)} ({at}at {label})")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
        if echo:
            print(rows[-1], flush=True)
    return "\n".join(rows)


if __name__ == "__main__":
    import sys
    import warnings

    warnings.simplefilter("ignore")
    table(sys.argv[1:] or None, echo=True)
