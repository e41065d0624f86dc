"""A tie-invariant convention: which of equal input elements an op that selects among its inputs
(topk, sort, kthvalue, mode, median over a dim) returns, and so where each selected element's
derivative goes.

Where a slice holds equal values the mathematics does not say which of them a selection returns:
every choice gives the same values, and each gives a derivative (the derivative of the element it
returns). A framework may order equal values as its algorithm leaves them (torch.topk's partial
sort, torch.sort without ``stable=True``, torch.mode's index), which is no rule one alternative
could compute. So the alternative here is the *framework's own routing*: a permutation π of the
input elements that moves each element only among the elements of its slice equal to it, read
off the framework's derivatives, and the op's reference computed at x[π]. Since x[π] equals x
value for value, the reference at x[π] is the op with the tied elements returned in another
order, its derivatives routed through π, all other elements' derivatives unchanged; the judge
then applies the usual rule (conformance.ops._conventions): every rejected element must equal this
alternative within its bound.

A permutation moves a whole derivative to one tied element: a gradient routed to an element that
is not tied, split between tied elements, or given to two of them, is no permutation's and stays
``fail``. The routing is read consistently from every output of the check: the outputs indexed
like the input (a gradient: the framework's value at q is the reference's at p when π(p) = q) and,
for the forward-mode and second-order checks whose outputs are indexed like the op's output (a
tangent of the selected values), through the reference's own indices (the selected element p of
a slot is routed to the q whose seed the framework's slot holds). The per-element costs of the
candidate pairs are matched greedily, least first, within each group of equal elements.
"""

from __future__ import annotations

import numpy as np

import reference as T
from conformance.ops import RECORDS, VMAP_CHECKS, op_params
from conformance.ops._conventions import Alternative, Convention, any_repeated, region_inputs
from conformance.tolerance import element_ratios

#: the checks whose outputs are indexed like the op's output, and the input-shaped seed each one's
#: slot reads at the element the slot selects (conformance.ops._run)
SLOT_SEEDS = {"jvp": ("tangent_output", "tangent_input"), "vjp_vjp": ("g_grad_output", "gg_input")}

#: a ratio to the bound above which a pairing is as bad as any other (keeps the sums finite)
_CAP = 1e6


def tie_labels(x, axis):
    """An int array of ``x``'s shape, equal exactly where two elements of one slice along ``axis``
    are equal (NaNs equal to each other, -0.0 to 0.0), or None for a scalar."""
    if x.ndim == 0:
        return None
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    labels = np.empty(rows.shape, dtype=np.int64)
    for r, row in enumerate(rows):
        labels[r] = r * max(row.size, 1) + np.unique(row, return_inverse=True)[1].reshape(-1)
    return np.moveaxis(labels.reshape(moved.shape), -1, axis)


def _cost(obs, value, bound):
    return np.minimum(element_ratios(obs, value, bound), _CAP)


def routing(labels, pair_costs):
    """The permutation π (flat: x_alt.flat[p] = x.flat[π[p]]) that pairs each element p with an
    element q of its group (equal label) at the least summed cost ``pair_costs(group) -> cost[p, q]``
    (greedy: least cost above the row's least first, and among equal ones the rows whose costs tell
    their candidates apart most, so that an element the outputs say nothing about, such as a tied
    element no slot returned, takes what is left); the identity outside groups of two or more."""
    flat = labels.reshape(-1)
    perm = np.arange(flat.size)
    for label in np.unique(flat):
        group = np.flatnonzero(flat == label)
        if group.size < 2:
            continue
        cost = pair_costs(group)
        spread = cost.max(axis=1, keepdims=True) - cost.min(axis=1, keepdims=True)
        above = cost - cost.min(axis=1, keepdims=True)
        order = np.lexsort(((-spread * np.ones_like(cost)).reshape(-1), above.reshape(-1)))
        p_free = np.ones(group.size, dtype=bool)
        q_free = np.ones(group.size, dtype=bool)
        for i in order:
            p, q = divmod(int(i), group.size)
            if p_free[p] and q_free[q]:
                perm[group[p]] = group[q]
                p_free[p] = q_free[q] = False
    return perm


def _gradient_costs(outputs, expected, shape):
    """cost[p, q] over the outputs indexed like the input: the framework's value at q against the
    reference's at p (π(p) = q moves p's derivative to q)."""
    named = [
        (
            np.asarray(outputs[n], np.float64).reshape(-1),
            np.asarray(v, np.float64).reshape(-1),
            np.broadcast_to(np.asarray(b, np.float64), np.shape(v)).reshape(-1),
        )
        for n, (v, b) in expected.items()
        if outputs.get(n) is not None and np.shape(outputs[n]) == tuple(shape) == np.shape(v)
    ]

    def costs(group):
        total = np.zeros((group.size, group.size))
        for obs, value, bound in named:
            total += _cost(obs[group][None, :], value[group][:, None], bound[group][:, None])
        return total

    return costs, bool(named)


def _slot_costs(case, check, data, outputs, expected, indices, x, axis):
    """cost[p, q] from an output indexed like the op's output: slot j selects p (the reference's
    index), and the framework's slot holds the seed of q."""
    name, seed_name = SLOT_SEEDS.get(check, (None, None))
    if name not in expected or outputs.get(name) is None:
        return None
    params = op_params(case)
    idx = np.asarray(indices(T, T.tensor(x), **params).numpy(), dtype=np.int64)
    value, bound = expected[name]
    if idx.size != np.size(value) or np.size(outputs[name]) != idx.size:
        return None
    grid = list(np.indices(idx.shape))
    grid[axis] = idx
    selected = np.ravel_multi_index(tuple(grid), x.shape).reshape(-1)
    obs = np.asarray(outputs[name], np.float64).reshape(-1)
    b = np.broadcast_to(np.asarray(bound, np.float64), np.shape(value)).reshape(-1)
    seed = np.asarray(data[seed_name], np.float64).reshape(-1)

    def costs(group):
        total = np.zeros((group.size, group.size))
        where = {int(g): i for i, g in enumerate(group)}
        for j, p in enumerate(selected):
            if int(p) in where:
                total[where[int(p)]] += _cost(np.full(group.size, obs[j]), seed[group], b[j])
        return total

    return costs


def _permuted(expected, perm, shape):
    """The reference's outputs indexed like the input, moved by π: value at π(p) is the value at p."""
    out = {}
    for n, (v, b) in expected.items():
        if np.shape(v) != tuple(shape):
            out[n] = (v, b)
            continue
        value = np.empty(np.size(v))
        bound = np.empty(np.size(v))
        value[perm] = np.asarray(v, np.float64).reshape(-1)
        bound[perm] = np.broadcast_to(np.asarray(b, np.float64), np.shape(v)).reshape(-1)
        out[n] = (value.reshape(shape), bound.reshape(shape))
    return out


def routed_among_ties(indices, axis=lambda params: params["dim"]):
    """The alternative: the framework's routing among equal elements of a slice along
    ``axis(params)``. ``indices(T, x, **params)``: the reference's indices of the selected elements
    along that axis, keepdim-shaped (for the checks whose outputs are indexed like the op's)."""

    def routed(case, check, data, outputs, expected, alternative_expected):
        params = op_params(case)
        x = region_inputs(case, check, data)["input"]
        if check in VMAP_CHECKS:  # each sample its own routing: batch dim first, the op's axis after it
            if x.ndim < 2:
                return None
            labels = tie_labels(x, axis(params) % (x.ndim - 1) + 1)
        else:
            labels = tie_labels(x, axis(params) % max(x.ndim, 1)) if x.ndim else None
        if labels is None:
            return None
        gradient, any_gradient = _gradient_costs(outputs, expected, x.shape)
        slot = None if check in VMAP_CHECKS else _slot_costs(
            case, check, data, outputs, expected, indices, x, axis(params) % x.ndim
        )
        if not any_gradient and slot is None:
            return None
        perm = routing(labels, lambda g: gradient(g) + (slot(g) if slot is not None else 0.0))
        if check in VMAP_CHECKS:  # the per-sample gradients, moved by each sample's routing
            return _permuted(expected, perm, x.shape)
        op = RECORDS[case.op].fn
        shape = x.shape

        def at_permuted(T, x_, **p):
            return op(T, T.reshape(T.reshape(x_, (-1,))[T.tensor(perm)], shape), **p)

        return alternative_expected(at_permuted)

    return routed


def tie_routing(op_name, indices, axis=lambda params: params["dim"], also=""):
    """The convention ``<op>-routing-among-equal-values`` (see the module docstring)."""
    return Convention(
        f"{op_name}-routing-among-equal-values",
        f"where a slice holds equal values, which of them {op_name} returns, and so which one each "
        "selected element's derivative goes to: the reference returns "
        + (also or "the lowest index first"),
        any_repeated,
        (
            Alternative(
                "the-framework's-own-routing",
                None,
                "any permutation among equal elements of a slice, read off the framework's derivatives "
                "(PyTorch's partial sorts and unstable sorts)",
                routed=routed_among_ties(indices, axis),
            ),
        ),
    )
