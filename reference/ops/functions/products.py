"""The matmul family: PyTorch's names, signatures, defaults and errors.

Primitives: dot/mv/mm/bmm (:mod:`reference.ops.rules.matmul`), vdot, addmm, addmv, addr, baddbmm,
addbmm, linalg_cross, trace (:mod:`reference.ops.rules.products`).

Composites, as in PyTorch (their ``grad_fn`` is that of the ops they are made of): inner
(tensordot or mul), outer/ger (mul), einsum (diagonal/permute/unsqueeze, mul and sum: PyTorch
contracts pairs with bmm, so intermediate node names differ, values and gradients do not),
tensordot (permute/reshape/mm/view), kron (reshape/mul/_unsafe_view), chain_matmul and
linalg.multi_dot (mm in the cheapest order), linalg.vecdot (mul and sum), linalg.matmul (matmul).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from reference.autograd.dispatch import apply, apply_inplace
from reference.autograd.tensor import Tensor
from reference.ops import api as A
from reference.ops.functions.complex import conj
from reference.ops.rules import RULES
from reference.scalar_types import cpp_type_name, scalar_type_name

__all__ = [
    "mm",
    "bmm",
    "mv",
    "dot",
    "vdot",
    "inner",
    "outer",
    "ger",
    "addmm",
    "addmv",
    "addr",
    "baddbmm",
    "addbmm",
    "einsum",
    "tensordot",
    "kron",
    "chain_matmul",
    "cross",
    "trace",
]


def _tname(dt):
    return scalar_type_name(dt)


def _xs(shape):
    return "x".join(map(str, shape))


# ---- aten's products --------------------------------------------------------------------------------------


def mm(input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_xs(input.shape)} and {_xs(mat2.shape)})"
        )
    return A._product(RULES["mm"], input, mat2)


def bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    want = [input.shape[0], input.shape[2]]
    if list(mat2.shape[:2]) != want:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {want} but got: {list(mat2.shape[:2])}."
        )
    return A._product(RULES["bmm"], input, mat2)


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0]}), mat ({_xs(input.shape)}), vec ({vec.shape[0]})"
        )
    if input.dtype != vec.dtype:
        raise RuntimeError(
            f"addmv input tensors must have the same dtype, but got {_tname(vec.dtype)}, "
            f"{_tname(input.dtype)}, and {_tname(vec.dtype)}"
        )
    return apply(RULES["mv"], (input, vec))


def _check_dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {_tname(input.dtype)} and "
            f"{_tname(other.dtype)}"
        )
    if input.shape[0] != other.shape[0]:
        n, m = input.shape[0], other.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of elements, "
            f"but got {n} and {m} elements respectively"
        )


def dot(input, tensor):
    _check_dot(input, tensor)
    return apply(RULES["dot"], (input, tensor))


def vdot(input, other):
    _check_dot(input, other)
    if input.dtype.kind == "c":  # sum(conj(input) * other): dot of the conjugate (new storage, see
        return apply(RULES["dot"], (_conj(input), other))  # reference.ops.functions.complex)
    return apply(RULES["vdot"], (input, other))


def _conj(x):
    return conj(x)


def inner(input, other):
    if input.ndim == 0 or other.ndim == 0:
        return A.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            "inner() the last dimension must match on both input tensors but got shapes "
            f"{list(input.shape)} and {list(other.shape)}"
        )
    return tensordot(input, other, ([-1], [-1]))


def outer(input, vec2):
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return A.mul(A.reshape(input, (input.shape[0], 1)), vec2)


ger = outer

# ---- beta * input + alpha * product ---------------------------------------------------------------------


def _add_product(name, input, m1, m2, beta, alpha, out_shape, inplace=False):
    if input.dtype != m1.dtype or input.dtype != m2.dtype:
        other = m2 if input.dtype != m2.dtype else m1
        if name == "addmv":
            raise RuntimeError(
                f"addmv input tensors must have the same dtype, but got {_tname(input.dtype)}, "
                f"{_tname(m1.dtype)}, and {_tname(m2.dtype)}"
            )
        if m1.dtype != m2.dtype:
            raise RuntimeError(
                f"expected m1 and m2 to have the same dtype, but got: {cpp_type_name(m1.dtype)} != {cpp_type_name(m2.dtype)}"
                if name == "addmm"
                else f"expected scalar type {_tname(m1.dtype)} but found {_tname(m2.dtype)}"
            )
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_tname(input.dtype)} and {_tname(other.dtype)}"
            if name == "addmm"
            else f"expected scalar type {_tname(m1.dtype)} but found {_tname(input.dtype)}"
        )
    A.expand(input.detach(), out_shape)  # input broadcasts to the product's shape (PyTorch's expand_size)
    if inplace:  # input.<name>_(...): the product's shape must be input's (checked after the kernel)
        return apply_inplace(RULES[name], input, (m1, m2), {"beta": beta, "alpha": alpha})
    return apply(RULES[name], (input, m1, m2), {"beta": beta, "alpha": alpha})


def _addmm(input, mat1, mat2, beta, alpha, _inplace):
    if mat1.ndim != 2:
        raise RuntimeError("mat1 must be a matrix, got " + f"{mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix, got " + f"{mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({_xs(mat1.shape)} and {_xs(mat2.shape)})"
        )
    return _add_product("addmm", input, mat1, mat2, beta, alpha, (mat1.shape[0], mat2.shape[1]), _inplace)


def _addmv(input, mat, vec, beta, alpha, _inplace):
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(
            f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat ({_xs(mat.shape)}), "
            f"vec ({vec.shape[0]})"
        )
    return _add_product("addmv", input, mat, vec, beta, alpha, (mat.shape[0],), _inplace)


def _addr(input, vec1, vec2, beta, alpha, _inplace):
    if vec1.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    if input.dtype == A.bool_ or (input.dtype.kind in "iu" and isinstance(beta, float)):
        pass
    if _inplace:  # aten's addr_ writes into self, which must be the outer product's matrix
        if input.ndim != 2:
            raise RuntimeError(f"2D tensor expected, got {input.ndim}D tensor for input")
        if tuple(input.shape) != (vec1.shape[0], vec2.shape[0]):
            raise RuntimeError(
                f"size mismatch, input: {list(input.shape)}, v1: {list(vec1.shape)}, v2: {list(vec2.shape)}"
            )
    return _add_product("addr", input, vec1, vec2, beta, alpha, (vec1.shape[0], vec2.shape[0]), _inplace)


def _check_batches(b1, b2):
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    want = [b1.shape[0], b1.shape[2]]
    if list(b2.shape[:2]) != want:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: {want} but got: {list(b2.shape[:2])}."
        )


def _baddbmm(input, batch1, batch2, beta, alpha, _inplace):
    shape = (batch1.size(0), batch1.size(1), batch2.size(2))  # (aten expands input first)
    A.expand(input.detach(), shape)
    _check_batches(batch1, batch2)
    return _add_product("baddbmm", input, batch1, batch2, beta, alpha, shape, _inplace)


def _addbmm(input, batch1, batch2, beta, alpha, _inplace):
    shape = (batch1.size(1), batch2.size(2))  # (aten expands input first)
    A.expand(input.detach(), shape)
    _check_batches(batch1, batch2)
    return _add_product("addbmm", input, batch1, batch2, beta, alpha, shape, _inplace)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(input, mat1, mat2, beta, alpha, False)


def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(self, mat1, mat2, beta, alpha, True)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _addmv(input, mat, vec, beta, alpha, False)


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    return _addmv(self, mat, vec, beta, alpha, True)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return _addr(input, vec1, vec2, beta, alpha, False)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    return _addr(self, vec1, vec2, beta, alpha, True)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(input, batch1, batch2, beta, alpha, False)


def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(self, batch1, batch2, beta, alpha, True)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    return _addbmm(input, batch1, batch2, beta, alpha, False)


def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    return _addbmm(self, batch1, batch2, beta, alpha, True)


# ---- einsum -------------------------------------------------------------------------------------------------

_ELLIPSIS = "..."


def _parse_sublist(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [out_sublist]) as an equation and operands."""
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += _ELLIPSIS
            elif isinstance(s, (int, np.integer)) and 0 <= s < 52:
                out += letters[s]
            else:
                raise ValueError(f"einsum(): expected subscript to be in [0, 52) but got {s}")
        return out

    operands = list(args[0::2])
    subs = list(args[1::2])
    if len(args) % 2 == 1:  # an output sublist
        out = term(args[-1])
        operands = operands[:-1]
        return ",".join(term(s) for s in subs) + "->" + out, operands
    return ",".join(term(s) for s in subs), operands


def _term_labels(term, ndim, i):
    """The labels of one operand's dims: letters, and ('...', k) for the k-th ellipsis dim from the right."""
    if term.count(_ELLIPSIS) > 1 or term.replace(_ELLIPSIS, "").count(".") > 0:
        raise RuntimeError("einsum(): found '.' for operand " + f"{i} that is not part of any ellipsis")
    if _ELLIPSIS in term:
        left, right = term.split(_ELLIPSIS)
        n_ell = ndim - len(left) - len(right)
        if n_ell < 0:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(left) + len(right)}) is more than the "
                f"number of dimensions ({ndim}) for operand {i}"
            )
        return list(left) + [(_ELLIPSIS, n_ell - k) for k in range(n_ell)] + list(right)
    if len(term) != ndim:
        raise RuntimeError(
            f"einsum(): the number of subscripts in the equation ({len(term)}) does not match the number of "
            f"dimensions ({ndim}) for operand {i} and no ellipsis was given"
        )
    return list(term)


def _take_diagonals(x, labels):
    """Repeated labels within one operand: its diagonal (the dims merge into one, at the end)."""
    while True:
        seen = {}
        pair = None
        for d, lab in enumerate(labels):
            if lab in seen:
                pair = (seen[lab], d)
                break
            seen[lab] = d
        if pair is None:
            return x, labels
        d1, d2 = pair
        if x.shape[d1] != x.shape[d2]:
            raise RuntimeError(
                f"einsum(): subscript {labels[d1]} is repeated for operand but the sizes don't match, "
                f"{x.shape[d1]} != {x.shape[d2]}"
            )
        lab = labels[d1]
        x = A.diagonal(x, 0, d1, d2)
        labels = [lb for k, lb in enumerate(labels) if k not in (d1, d2)] + [lab]


def einsum(*args):
    if args and not isinstance(args[0], str):
        equation, operands = _parse_sublist(args)
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, out_term = equation.split("->")
    else:
        lhs, out_term = equation, None
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    dtype = operands[0].dtype
    for op in operands[1:]:
        if op.dtype != dtype:
            raise RuntimeError(f"expected scalar type {_tname(dtype)} but found {_tname(op.dtype)}")
    for t in terms + ([out_term] if out_term is not None else []):
        for ch in t.replace(_ELLIPSIS, ""):
            if not ch.isalpha():
                raise RuntimeError(
                    f"einsum(): invalid subscript given at index {t.index(ch)} in the equation string, "
                    "subscripts must be in [a-zA-Z]"
                )
    labels = [_term_labels(t, op.ndim, i) for i, (t, op) in enumerate(zip(terms, operands))]
    n_ell = max((sum(1 for lb in ls if isinstance(lb, tuple)) for ls in labels), default=0)
    ell = [(_ELLIPSIS, n_ell - k) for k in range(n_ell)]
    sizes = {}
    for i, (op, ls) in enumerate(zip(operands, labels)):
        for lb, n in zip(ls, op.shape):
            if lb in sizes and sizes[lb] != n and n != 1 and sizes[lb] != 1:
                if isinstance(lb, tuple):
                    raise RuntimeError(
                        "einsum(): operands do not broadcast with remapped shapes (original->remapped): ..."
                    )
                raise RuntimeError(
                    f"einsum(): subscript {lb} has size {n} for operand {i} which does not broadcast with "
                    f"previously seen size {sizes[lb]}"
                )
            if lb not in sizes or sizes[lb] == 1:
                sizes[lb] = n
    if out_term is None:
        counts = {}
        for ls in labels:
            for lb in ls:
                if not isinstance(lb, tuple):
                    counts[lb] = counts.get(lb, 0) + 1
        out_labels = ell + sorted(lb for lb, c in counts.items() if c == 1)
    else:
        if _ELLIPSIS in out_term:
            left, right = out_term.split(_ELLIPSIS)
            out_labels = list(left) + ell + list(right)
        else:
            out_labels = list(out_term)
        present = {lb for ls in labels for lb in ls}
        for lb in out_labels:
            if isinstance(lb, tuple):
                continue
            if out_labels.count(lb) > 1:
                raise RuntimeError(f"einsum(): output subscript {lb} appears more than once in the output")
            if lb not in present:
                raise RuntimeError(
                    f"einsum(): output subscript {lb} does not appear in the equation for any input operand"
                )
    # each operand: diagonals of repeated labels, then its dims in a common order (output labels
    # first, then the contracted ones), unit dims for labels it lacks
    contracted = []
    for ls in labels:
        for lb in ls:
            if lb not in out_labels and lb not in contracted:
                contracted.append(lb)
    order = out_labels + contracted
    aligned = []
    for op, ls in zip(operands, labels):
        x, ls = _take_diagonals(op, ls)
        perm = sorted(range(len(ls)), key=lambda d: order.index(ls[d]))
        x = A.permute(x, tuple(perm)) if x.ndim else x
        ls = [ls[d] for d in perm]
        shape = tuple(x.shape[ls.index(lb)] if lb in ls else 1 for lb in order)
        aligned.append(
            (A.reshape(x, shape) if x.ndim != len(order) or tuple(x.shape) != shape else x, set(ls))
        )
    result = aligned[0][0]
    for k in range(1, len(aligned)):
        result = A.mul(result, aligned[k][0])
        later = set().union(*(labs for _, labs in aligned[k + 1 :]))
        seen = set().union(*(labs for _, labs in aligned[: k + 1]))
        done = tuple(
            d
            for d, lb in enumerate(order)
            if lb in contracted and lb in seen and lb not in later and result.shape[d] != 1
        )
        if done and k + 1 < len(aligned):  # sum the labels no later operand needs (dims kept)
            result = A.sum(result, done, keepdim=True)
    if contracted:
        result = A.sum(result, tuple(range(len(out_labels), len(order))))
    out_shape = tuple(sizes[lb] for lb in out_labels)
    if tuple(result.shape) != out_shape:  # an output label present only as a broadcast unit dim
        result = A.expand(result, out_shape)
    return result


# ---- tensordot, kron, multi_dot ---------------------------------------------------------------------------


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))  # (as torch.tensordot)
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists (dims_a, dims_b)")
        da, db = dims
        da = [da] if isinstance(da, (int, np.integer)) else list(da)
        db = [db] if isinstance(db, (int, np.integer)) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db):
        if b.size(y) == 1 and a.size(x) != 1:  # a broadcast dim: summed right away, as aten does
            a = A.sum(a, x, keepdim=True)
        elif a.size(x) == 1 and b.size(y) != 1:
            b = A.sum(b, y, keepdim=True)
        elif a.size(x) != b.size(y):
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.size(x)} in dim {x} and second has "
                f"size {b.size(y)} in dim {y}"
            )
    da = [A._dim(d, a.ndim) for d in da]
    db = [A._dim(d, b.ndim) for d in db]
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    pa = A.reshape(A.permute(a, tuple(free_a + da)), (math.prod(a.shape[d] for d in free_a), k))
    pb = A.reshape(A.permute(b, tuple(db + free_b)), (k, math.prod(b.shape[d] for d in free_b)))
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    if pa.dtype != pb.dtype:
        dt = A.result_type(pa, pb)
        pa, pb = A.to(pa, dt), A.to(pb, dt)
    return A.reshape(mm(pa, pb), shape)


def kron(input, other):
    n = max(input.ndim, other.ndim)
    a = A.reshape(input, (1,) * (n - input.ndim) + tuple(input.shape))
    b = A.reshape(other, (1,) * (n - other.ndim) + tuple(other.shape))
    ai, bi = [], []
    for sa, sb in zip(a.shape, b.shape):
        ai += [sa, 1]
        bi += [1, sb]
    prod = A.mul(A.reshape(a, tuple(ai)), A.reshape(b, tuple(bi)))
    return A._unsafe_view(prod, tuple(sa * sb for sa, sb in zip(a.shape, b.shape)))


def _chain_order(shapes):
    """The matrix-chain DP: split points minimising scalar multiplications (as aten's multi_dot)."""
    p = [shapes[0][0]] + [s[1] for s in shapes]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for t in tensors[1:]:
        if t.dtype != first.dtype:
            raise RuntimeError(
                f"multi_dot(): all tensors must have be the same dtype but tensor 0 is {_tname(first.dtype)} "
                f"and tensor {tensors.index(t)} {_tname(t.dtype)}"
            )
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = A.unsqueeze(first, 0)
    if last.ndim == 1:
        mats[-1] = A.unsqueeze(last, 1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                f"{list(tensors[i + 1].shape)} cannot be multiplied"
            )
    if n == 2:
        out = mm(mats[0], mats[1])
    else:
        split = _chain_order([tuple(m.shape) for m in mats])

        def chain(i, j):
            if i == j:
                return mats[i]
            k = split[i][j]
            return mm(chain(i, k), chain(k + 1, j))

        out = chain(0, n - 1)
    shape = ((out.shape[0],) if first.ndim == 2 else ()) + ((out.shape[1],) if last.ndim == 2 else ())
    return A.view(out, shape)  # (aten views the product to the output shape, 2-D ends too)


def chain_matmul(*matrices):
    warnings.warn(
        "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
        "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
        "parameters.",
        UserWarning,
        stacklevel=2,
    )
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return A.clone(matrices[0])
    return multi_dot(matrices)


# ---- cross, trace, vecdot ---------------------------------------------------------------------------------


def linalg_cross(input, other, *, dim=-1):
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    A.check_broadcast(input, other)
    n = input.ndim
    d = A._dim(dim, n)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and {other.shape[d]}"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(f"expected scalar type {_tname(input.dtype)} but found {_tname(other.dtype)}")
    return apply(RULES["linalg_cross"], (input, other), {"dim": d - n})


def cross(input, other, dim=None):
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
            "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
            "that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dims = [i for i, s in enumerate(shape) if s == 3]
        if not dims:
            raise RuntimeError("no dimension of size 3 in input")
        dim = dims[0]
    return linalg_cross(input, other, dim=dim)


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(RULES["trace"], (input,), {})


def vecdot(x, y, *, dim=-1):
    if x.dtype != y.dtype:
        raise RuntimeError(
            f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {_tname(x.dtype)} "
            f"and y of type {_tname(y.dtype)} instead"
        )
    return A.sum(A.mul(_conj(x), y), dim)  # PyTorch's vecdot conjugates x (complex tensors)


def linalg_matmul(input, other):
    return A.matmul(input, other)


NAMESPACES = {
    "linalg": {
        "multi_dot": multi_dot,
        "cross": linalg_cross,
        "vecdot": vecdot,
        "matmul": linalg_matmul,
    }
}

METHODS = {
    "addmm_": addmm_,
    "addmv_": addmv_,
    "addr_": addr_,
    "baddbmm_": baddbmm_,
    "addbmm_": addbmm_,
    "mm": mm,
    "bmm": bmm,
    "mv": mv,
    "dot": dot,
    "vdot": vdot,
    "inner": inner,
    "outer": outer,
    "ger": ger,
    "addmm": addmm,
    "addmv": addmv,
    "addr": addr,
    "baddbmm": baddbmm,
    "addbmm": addbmm,
    "kron": kron,
    "cross": cross,
    "trace": trace,
}
