"""The expected values of a reproducer script: convolution and its derivatives in plain NumPy.

This module is copied verbatim into every reproducer script (:mod:`conformance.reproducer`),
so it imports nothing but NumPy and never refgrad: a bug report must stand on its own. It is
a direct convolution (one ``einsum`` per kernel tap) written for clarity on small cases, and
its two adjoints; a transposed convolution is the adjoint of the plain one. Every check is
written with the bilinear map ``op(x, w)`` and its adjoints, so the magnitudes ``M`` of the
error bound are the same functions on absolute values, as in refgrad's tolerance model.
"""

import numpy as np


def _same_pads(size, k, s, d, lower):
    """TensorFlow's SAME (odd pad at the end) or SAME_LOWER (at the start) for one dim."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    small, large = total // 2, total - total // 2
    return (large, small) if lower else (small, large)


def _pad(x, pads):
    """Zero-pad (positive) or crop (negative) the spatial dims of x by (lo, hi) pairs."""
    keep = tuple(slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0)) for i, (lo, hi) in enumerate(pads))
    x = x[(slice(None), slice(None)) + keep]
    return np.pad(x, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads])


def _taps(kernel, stride, dilation, out):
    for tap in np.ndindex(*kernel):
        yield (
            tap,
            tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in zip(tap, dilation, out, stride)),
        )


def corr(x, w, pads, stride, dilation, groups):
    """The plain convolution (cross-correlation): x (N, C, *s), w (O, C/groups, *k)."""
    xp = _pad(x, pads)
    n, o, k = x.shape[0], w.shape[0], w.shape[2:]
    out = [(xp.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(len(k))]
    xg = xp.reshape(n, groups, x.shape[1] // groups, *xp.shape[2:])
    wg = w.reshape(groups, o // groups, *w.shape[1:])
    y = np.zeros((n, groups, o // groups, *out))
    for tap, sl in _taps(k, stride, dilation, out):
        y += np.einsum("ngc...,goc->ngo...", xg[(slice(None),) * 3 + sl], wg[(Ellipsis,) + tap])
    return y.reshape(n, o, *out)


def corr_input_adjoint(gy, w, x_shape, pads, stride, dilation, groups):
    """The adjoint of corr in x: the input gradient for output cotangent gy."""
    n, o, k = gy.shape[0], w.shape[0], w.shape[2:]
    padded = [
        x_shape[2 + i] + max(lo, 0) + max(hi, 0) - max(-lo, 0) - max(-hi, 0)
        for i, (lo, hi) in enumerate(pads)
    ]
    gx = np.zeros((n, groups, x_shape[1] // groups, *padded))
    gyg = gy.reshape(n, groups, o // groups, *gy.shape[2:])
    wg = w.reshape(groups, o // groups, *w.shape[1:])
    for tap, sl in _taps(k, stride, dilation, gy.shape[2:]):
        gx[(slice(None),) * 3 + sl] += np.einsum("ngo...,goc->ngc...", gyg, wg[(Ellipsis,) + tap])
    return _pad(gx.reshape(n, x_shape[1], *padded), [(-lo, -hi) for lo, hi in pads])


def corr_weight_adjoint(gy, x, w_shape, pads, stride, dilation, groups):
    """The adjoint of corr in w: the weight gradient for output cotangent gy."""
    xp = _pad(x, pads)
    n, o, k = x.shape[0], w_shape[0], w_shape[2:]
    xg = xp.reshape(n, groups, x.shape[1] // groups, *xp.shape[2:])
    gyg = gy.reshape(n, groups, o // groups, *gy.shape[2:])
    gw = np.zeros((groups, o // groups, w_shape[1], *k))
    for tap, sl in _taps(k, stride, dilation, gy.shape[2:]):
        xs = xg[(slice(None),) * 3 + sl]
        spatial = int(np.prod(gy.shape[2:]))
        gw[(Ellipsis,) + tap] = np.einsum(
            "ngop,ngcp->goc", gyg.reshape(*gyg.shape[:3], spatial), xs.reshape(*xs.shape[:3], spatial)
        )
    return gw.reshape(w_shape)


class Conv:
    """The case's convolution as a bilinear map op(x, w) with its adjoints op_x_T and op_w_T."""

    def __init__(self, params, x_shape, w_shape):
        p = params
        self.p, self.x_shape, self.w_shape = p, tuple(x_shape), tuple(w_shape)
        self.s, self.d, self.g = p.stride, p.dilation, p.groups
        k, size = w_shape[2:], x_shape[2:]
        if not p.transposed:
            if isinstance(p.padding, str):
                self.pads = [
                    (0, 0) if p.padding == "valid" else _same_pads(n, kk, s, d, p.padding == "same_lower")
                    for n, kk, s, d in zip(size, k, p.stride, p.dilation)
                ]
            else:
                self.pads = [(e, e) if isinstance(e, int) else tuple(e) for e in p.padding]
            return
        # transposed: the adjoint (in its input) of a plain convolution whose input is the output
        full = [(n - 1) * s + (kk - 1) * d + 1 for n, kk, s, d in zip(size, k, p.stride, p.dilation)]
        if isinstance(p.padding, str):
            if p.padding == "valid":
                out, los = full, [0] * len(k)
            else:
                out = [n * s for n, s in zip(size, p.stride)]
                los = [
                    _same_pads(y, kk, s, d, p.padding == "same_lower")[0]
                    for y, kk, s, d in zip(out, k, p.stride, p.dilation)
                ]
        else:
            pairs = [(e, e) if isinstance(e, int) else tuple(e) for e in p.padding]
            out = [f - lo - hi + op for f, (lo, hi), op in zip(full, pairs, p.output_padding)]
            los = [lo for lo, _ in pairs]
        self.pads = [(lo, f - lo - y) for f, lo, y in zip(full, los, out)]
        self.out_size = out

    def op(self, x, w):
        if not self.p.transposed:
            return corr(x, w, self.pads, self.s, self.d, self.g)
        z_shape = (x.shape[0], w.shape[1] * self.g, *self.out_size)
        return corr_input_adjoint(x, w, z_shape, self.pads, self.s, self.d, self.g)

    def op_x_T(self, gy, w, x_shape):
        if not self.p.transposed:
            return corr_input_adjoint(gy, w, x_shape, self.pads, self.s, self.d, self.g)
        return corr(gy, w, self.pads, self.s, self.d, self.g)

    def op_w_T(self, gy, x, w_shape):
        if not self.p.transposed:
            return corr_weight_adjoint(gy, x, w_shape, self.pads, self.s, self.d, self.g)
        return corr_weight_adjoint(x, gy, w_shape, self.pads, self.s, self.d, self.g)


def _add_bias(y, b):
    return y if b is None else y + b.reshape((1, -1) + (1,) * (y.ndim - 2))


def _grads(c, g, x, w, bias):
    out = {"grad_input": c.op_x_T(g, w, x.shape), "grad_weight": c.op_w_T(g, x, w.shape)}
    if bias:
        out["grad_bias"] = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
    return out


def _sample(case, a, i):
    x = a["batched_input"][i] if "input" in case.vmap_over else a["input"]
    w = a["batched_weight"][i] if "weight" in case.vmap_over else a["weight"]
    return x, w


def check_values(case, check, a):
    """The check's results (named as the harness names them) from arrays a, in float64."""
    c = Conv(case.params, case.shapes["input"], case.shapes["weight"])
    bias = case.params.bias
    if check == "forward":
        return {"output": _add_bias(c.op(a["input"], a["weight"]), a["bias"])}
    if check == "vjp":
        return _grads(c, a["grad_output"], a["input"], a["weight"], bias)
    if check == "jvp":
        t = c.op(a["tangent_input"], a["weight"]) + c.op(a["input"], a["tangent_weight"])
        return {"tangent_output": _add_bias(t, a["tangent_bias"])}
    if check == "vjp_vjp":
        g, x, w = a["grad_output"], a["input"], a["weight"]
        ggo = _add_bias(c.op(a["gg_input"], w) + c.op(x, a["gg_weight"]), a["gg_bias"])
        return {
            "g_grad_output": ggo,
            "g_input": c.op_x_T(g, a["gg_weight"], x.shape),
            "g_weight": c.op_w_T(g, a["gg_input"], w.shape),
        }
    if check == "vmap":
        outs = [_add_bias(c.op(*_sample(case, a, i)), a["bias"]) for i in range(case.vmap_size)]
        return {"output": np.stack(outs)}
    if check == "vmap_vjp":
        per = [
            _grads(c, a["batched_grad_output"][i], *_sample(case, a, i), bias) for i in range(case.vmap_size)
        ]
        return {name: np.stack([p[name] for p in per]) for name in per[0]}
    raise ValueError(f"check={check!r}: no expected values for this check")


class _Absolute(dict):
    def __init__(self, a):
        super().__init__()
        self.a = a

    def __missing__(self, name):
        v = self.a[name]
        return None if v is None else np.abs(v)


def judge(case, check, a, observed, u, K):
    """(failed, lines): every element against |obs - exp| <= K*u*M + u*|exp|, M = op on |inputs|."""
    expected = check_values(case, check, a)
    magnitude = check_values(case, check, _Absolute(a))
    worst, failed, lines = None, False, []
    for name, exp in expected.items():
        obs = observed.get(name)
        if obs is None:
            return True, [f"{name}: the framework returned nothing"]
        obs = np.asarray(obs, dtype=np.float64)
        if obs.shape != exp.shape:
            return True, [f"{name} has shape {list(obs.shape)} but the expected shape is {list(exp.shape)}"]
        if obs.size == 0:
            continue
        m = magnitude[name]
        # non-finite values: NaN against NaN and same-sign infinities agree; one side only departs
        agree = (np.isnan(obs) & np.isnan(exp)) | (
            np.isinf(obs) & np.isinf(exp) & (np.sign(obs) == np.sign(exp))
        )
        one_sided = (~np.isfinite(obs) | ~np.isfinite(exp)) & ~agree
        if one_sided.any():
            i = np.unravel_index(int(np.argmax(one_sided)), obs.shape)
            index = ",".join(str(int(j)) for j in i)
            return True, [
                f"non-finite on one side: {name}[{index}]={obs[i]!r} but expected {exp[i]!r} "
                f"({int(one_sided.sum())} element(s))"
            ]
        obs, exp, m = (np.where(agree, 0.0, v) for v in (obs, exp, np.asarray(m)))
        err = np.abs(obs - exp)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(m > 0, err / (u * np.where(m > 0, m, 1.0)), np.where(err > 0, np.inf, 0.0))
            limit = K[name] + np.where(m > 0, np.abs(exp) / np.where(m > 0, m, 1.0), 0.0)
            excess = np.where(np.isinf(ratio), np.inf, ratio / limit)
        bad = int((ratio > limit).sum())
        failed = failed or bad > 0
        i = np.unravel_index(int(np.argmax(excess)), obs.shape)
        lines.append(f"{name}: {bad} of {obs.size} elements outside the bound")
        if worst is None or excess[i] > worst[0]:
            worst = (excess[i], name, i, obs[i], exp[i], ratio[i], limit[i])
    if worst:
        _, name, i, o, e, r, lim = worst
        rel = ">" if r > lim else "<="
        index = ",".join(str(int(j)) for j in i)
        lines.append(
            f"worst: {name}[{index}]={o:.9g} but expected {e:.9g} (ratio {r:.3g} {rel} bound {lim:.3g})"
        )
    return failed, lines
