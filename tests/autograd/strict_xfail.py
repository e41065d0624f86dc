"""Primitives whose samples still fail on the strict device: the code path not yet converted
from NumPy to the data's namespace (file:line and the call), as the strict run reports it.

Strict xfails (tests/autograd/test_strict_namespace.py): only the namespace errors (TypeError,
BackendError, the device-mismatch RuntimeError) count as the expected failure; a wrong value
still fails, and a primitive that starts passing must be removed from the list. Regenerate after
converting a family (the reasons are the innermost reference frames of the failure).
"""

# forward, VJP, JVP (test_strict_matches_numpy)
STRICT_XFAIL = {
    "aminmax": "reference/ops/api.py:289 `return apply(R.div, (input, other), {}, cast=None if input.dtype == ot`; called from reference/ops/api.py:714 `return (g / sum(m, dim, keepdim=True)) * m` (RuntimeError: a CPU tensor made in a rule meets the data in div)",
    "batch_norm_backward": "reference/ops/api.py:173 `return apply(rule, (a, b), params, check=check)`; called from reference/ops/api.py:275 `return _binary(R.mul, input, other)` (RuntimeError: a CPU tensor made in a rule meets the data in mul)",
    "binary_cross_entropy": 'reference/ops/functions/losses.py:401 `loss = apply(_RULES["binary_cross_entropy"], (input, target, weight))` (RuntimeError: a CPU tensor made in a rule meets the data in binary_cross_entropy)',
    "constant_pad_nd": "reference/ops/rules/pooling.py:37 `out = out + outside.astype(out.dtype) * namespace_of(out).asarray(valu`; called from reference/ops/rules/pooling.py:103 `return apply(RULES[name], (input,), params)` (TypeError: Unsupported type <class 'numpy.ndarray'>)",
    "constant_pad_nd_backward": "reference/ops/rules/pooling.py:37 `out = out + outside.astype(out.dtype) * namespace_of(out).asarray(valu`; called from reference/ops/rules/pooling.py:103 `return apply(RULES[name], (input,), params)` (TypeError: Unsupported type <class 'numpy.ndarray'>)",
    "fft_c2r": "reference/ops/api.py:175 `return apply(rule, (_operand(a, dt), _operand(b, dt)), params, cast=dt`; called from reference/ops/api.py:275 `return _binary(R.mul, input, other)` (RuntimeError: a CPU tensor made in a rule meets the data in mul)",
    "linalg_eig": "reference/ops/rules/linalg_eig.py:231 `im = np.abs(np.asarray(diag_VhgV._data).imag)`; called from reference/ops/rules/linalg_eig.py:252 `_gauge_check(d)` (TypeError: Implicit conversion to a NumPy array is not allowed. Please )",
    "masked_scatter": 'reference/ops/functions/indexing.py:295 `return apply(RULES["masked_scatter"], (input, mask, source), {})` (RuntimeError: a CPU tensor made in a rule meets the data in masked_scatter)',
    "masked_select": 'reference/ops/functions/indexing.py:276 `return apply(RULES["masked_select"], (input, mask), {})` (RuntimeError: a CPU tensor made in a rule meets the data in masked_select)',
    "nll_loss": 'reference/ops/rules/losses.py:86 `return apply(_RULES["nll_loss"], (input, target, weight), params)`; called from reference/ops/functions/losses.py:312 `return nll_loss_prim(input, target, w, reduction, ignore_index)` (RuntimeError: a CPU tensor made in a rule meets the data in nll_loss)',
    "nll_loss_backward": 'reference/ops/rules/losses.py:86 `return apply(_RULES["nll_loss"], (input, target, weight), params)`; called from reference/ops/functions/losses.py:312 `return nll_loss_prim(input, target, w, reduction, ignore_index)` (RuntimeError: a CPU tensor made in a rule meets the data in nll_loss)',
    "split": 'reference/ops/api.py:1429 `return apply(R.cat, tensors, {"dim": d}, cast=None if all(t.dtype == d`; called from reference/ops/rules/shape.py:165 `vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),` (RuntimeError: a CPU tensor made in a rule meets the data in cat)',
    "split_with_sizes": 'reference/ops/api.py:1429 `return apply(R.cat, tensors, {"dim": d}, cast=None if all(t.dtype == d`; called from reference/ops/rules/shape.py:175 `vjp=lambda c, gs: (A.cat(gs, c.params["dim"]),),` (RuntimeError: a CPU tensor made in a rule meets the data in cat)',
    "std_mean": "reference/ops/api.py:289 `return apply(R.div, (input, other), {}, cast=None if input.dtype == ot`; called from reference/ops/rules/reductions.py:418 `return _var_back(A.masked_fill(g / (std * 2), std == 0, 0.0), c)` (RuntimeError: a CPU tensor made in a rule meets the data in div)",
    "unbind": 'reference/ops/api.py:1439 `return apply(R.stack, tensors, {"dim": d}, cast=None if all(t.dtype ==`; called from reference/ops/rules/shape.py:155 `vjp=lambda c, gs: (A.stack(gs, c.params["dim"]),),` (RuntimeError: a CPU tensor made in a rule meets the data in stack)',
    "var_mean": "reference/ops/api.py:173 `return apply(rule, (a, b), params, check=check)`; called from reference/ops/api.py:275 `return _binary(R.mul, input, other)` (RuntimeError: a CPU tensor made in a rule meets the data in mul)",
}

# vmap (test_strict_vmap_matches_numpy)
STRICT_XFAIL_VMAP = {
    "binary_cross_entropy": "reference/ops/rules/losses.py:283 `return apply(b.rule, args, params, cast=b.cast), 0`; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (RuntimeError: a CPU tensor made in a rule meets the data in binary_cross_entropy)",
    "constant_pad_nd": "reference/ops/rules/pooling.py:37 `out = out + outside.astype(out.dtype) * namespace_of(out).asarray(valu`; called from reference/ops/rules/indexing.py:49 `out = apply(b.rule, (b.expanded(0),), params)` (TypeError: Unsupported type <class 'numpy.ndarray'>)",
    "constant_pad_nd_backward": "reference/ops/rules/pooling.py:37 `out = out + outside.astype(out.dtype) * namespace_of(out).asarray(valu`; called from reference/ops/rules/indexing.py:49 `out = apply(b.rule, (b.expanded(0),), params)` (TypeError: Unsupported type <class 'numpy.ndarray'>)",
    "convolution": "reference/ops/batch_rules.py:59 `return _make(out.astype(np.result_type(x_arr, w_arr), copy=False)), 0`; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (TypeError: numpy.result_type was called on a strict (device) array; use)",
    "convolution_backward": "reference/ops/batch_rules.py:59 `return _make(out.astype(np.result_type(x_arr, w_arr), copy=False)), 0`; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (TypeError: numpy.result_type was called on a strict (device) array; use)",
    "fft_c2c": 'reference/autograd/batching.py:176 `return apply(b.rule, args, {**params, "dim": params["dim"] + 1}, cast=`; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (RuntimeError: a CPU tensor made in a rule meets the data in cat)',
    "index_put": 'reference/ops/rules/indexing.py:146 `return apply(b.rule, (x, v), {**params, "indices": (None,) + tuple(ind`; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (RuntimeError: a CPU tensor made in a rule meets the data in index_put)',
    "masked_scatter": "reference/ops/rules/gather.py:257 `outs.append(apply(b.rule, args, params, cast=b.cast))`; called from reference/ops/rules/gather.py:264 `return _fallback_loop(b, params)` (RuntimeError: a CPU tensor made in a rule meets the data in masked_scatter)",
    "masked_select": "reference/ops/rules/gather.py:257 `outs.append(apply(b.rule, args, params, cast=b.cast))`; called from reference/ops/rules/gather.py:264 `return _fallback_loop(b, params)` (RuntimeError: a CPU tensor made in a rule meets the data in masked_select)",
    "max_pool2d": "reference/autograd/batching.py:343 `return BatchedIndex(indices._data + plane)`; called from reference/autograd/batching.py:317 `return [placeholder(v, d, level) for v, d in outs], _aux(rule, inputs,` (TypeError: Unsupported type <class 'numpy.ndarray'>)",
    "nll_loss": 'reference/ops/rules/losses.py:205 `return apply(b.rule, (x, t, _nll_weight(b)), {**params, "batch_dims": `; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (RuntimeError: a CPU tensor made in a rule meets the data in nll_loss)',
    "nll_loss_backward": 'reference/ops/rules/losses.py:205 `return apply(b.rule, (x, t, _nll_weight(b)), {**params, "batch_dims": `; called from reference/autograd/batching.py:282 `out = _SHORTHANDS[spec](b, params) if isinstance(spec, str) else spec(` (RuntimeError: a CPU tensor made in a rule meets the data in nll_loss)',
}
