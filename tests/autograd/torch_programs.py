"""Hand-written programs ``prog(T, *inputs)`` that run unchanged with ``T=torch`` and ``T=reference``.

Each entry: (name, program, input shapes). Inputs are float64 leaves that require grad. The
programs cover composites of the table's ops, view + in-place chains, retained graphs,
create_graph (double backward), hooks, retain_grad, ``autograd.grad`` options and the errors
PyTorch raises; the test compares values, every input's ``.grad`` and whether (and which
autograd error) was raised.
"""

from __future__ import annotations

PROGRAMS = []


def program(*shapes):
    def register(fn):
        PROGRAMS.append((fn.__name__, fn, shapes))
        return fn

    return register


# ---- composites -------------------------------------------------------------------------------------


@program((3, 4), (4, 2), (2,))
def mlp(T, x, w, b):
    F = T.nn.functional
    h = F.linear(x, w.t(), b).tanh()
    out = F.log_softmax(h * h.sigmoid(), dim=1).sum() + F.softmax(h, 0).amax()
    out.backward()
    return [out, h]


@program((2, 3, 4), (4, 5))
def batched_matmul_reductions(T, a, b):
    c = a @ b
    out = (c.mean((0, 2), keepdim=True) * c.amin(1, keepdim=True)).sum() + c.sum(-1).pow(2).mean()
    out.backward()
    return [out, c]


@program((3,), (3,))
def elementwise_zoo(T, a, b):
    pos = a.abs() + 0.5
    y = (
        pos.log()
        + pos.sqrt()
        - a.exp() / (b * b + 1)
        + T.maximum(a, b)
        - T.minimum(a, b) * 2
        + a.clamp(-0.3, 0.3)
        + T.where(a > b, a, b * 3)
        + (-a).relu()
        + pos**b
        + 2.0**a
        + a**3
    )
    y.sum().backward()
    return [y]


@program((2, 3), (2, 3))
def ties_in_max_and_clamp(T, a, b):
    with T.no_grad():
        b.copy_(a)  # exact ties: maximum/minimum split the gradient in half
        a[0, 0] = 0.5
    y = T.maximum(a, b) + T.minimum(a, b) * 3 + a.clamp(0.5, 1.0) + a.amax() + b.amax(0).sum()
    y.sum().backward()
    return [y]


@program((2, 3, 4))
def views_chain(T, x):
    y = x.transpose(0, 2).permute(2, 0, 1)[1:, ::2, None].squeeze(2).unsqueeze(0).expand(3, 1, 2, 2)
    z = x.diagonal(0, 1, 2) * x.narrow(2, 1, 3).select(1, 0).unsqueeze(1)
    u = sum(t.sum() for t in x.unbind(1)) + sum(t.mean() for t in x.split(2, 2)) + x.chunk(2)[0].sum()
    out = y.sum() + z.sum() + u + x.flatten(1).sum(0).sum() + x.reshape(4, 6).t().reshape(-1)[3]
    out.backward()
    return [out, y, z]


@program((2, 3), (2, 3))
def cat_stack_as_strided(T, a, b):
    c = T.cat([a, b, a * 2], 1)
    s = T.stack([a, b], 2)
    st = a.as_strided((2, 2), (1, 2), 1)
    out = (c * c).sum() + s[..., 1].sum() + (st * st).sum()
    out.backward()
    return [out, c, s, st]


@program((2, 3, 4, 4), (3,), (3,))
def batch_norm_train_and_eval(T, x, w, b):
    F = T.nn.functional
    rm = T.zeros(3, dtype=T.float64)
    rv = T.ones(3, dtype=T.float64)
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)
    z = F.batch_norm(x, rm, rv, w, b, training=False)
    (y * y.tanh()).sum().backward(retain_graph=True)
    z.pow(2).sum().backward()
    return [y, z, rm, rv]


@program((1, 2, 5, 5))
def pooling(T, x):
    F = T.nn.functional
    a = F.max_pool2d(x, 3, stride=2, padding=1)
    b = F.avg_pool2d(x, 2, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
    c = F.avg_pool2d(x, 3, stride=1, padding=1, divisor_override=4)
    d = F.max_pool2d(x, (2, 3), stride=(1, 2), dilation=(2, 1), ceil_mode=True)
    out = (a * a).sum() + b.sum() + (c * c).sum() + d.sum()
    out.backward()
    return [out, a, b, c, d]


@program((2, 3, 6, 6), (4, 3, 3, 3), (4,))
def conv2d_then_double_backward(T, x, w, b):
    F = T.nn.functional
    y = F.conv2d(x, w, b, stride=2, padding=1).relu()
    (gx, gw) = T.autograd.grad((y * y).sum(), (x, w), create_graph=True)
    (gx.sum() + (gw * gw).sum()).backward()
    return [y, gx, gw]


@program((1, 2, 5), (2, 3, 3), (2, 4, 3, 3, 3))
def conv_transpose_and_3d(T, x, w, v):
    F = T.nn.functional
    y = F.conv_transpose1d(x, w, stride=2, padding=1, output_padding=1)
    z = F.conv3d(v, T.ones(2, 4, 2, 2, 2, dtype=T.float64) * 0.1, padding=1, groups=1)
    out = (y * y).sum() + z.sum()
    out.backward()
    return [out, y, z]


# ---- retained graphs, create_graph, autograd.grad ------------------------------------------------------


@program((3,))
def second_backward_without_retain_raises(T, x):
    y = (x.exp() * 2).sum()
    y.backward()
    y.backward()
    return [y]


@program((3,))
def second_backward_with_retain(T, x):
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    return [y]


@program((3,))
def no_saved_tensors_second_backward_ok(T, x):
    y = (x + 1).sum()
    y.backward()
    y.backward()
    return [y]


@program((3,))
def scalar_mul_saves_other(T, x):
    y = (x * 2).sum()
    y.backward()
    y.backward()
    return [y]


@program((3,))
def copyslices_second_backward_raises(T, x):
    a = T.zeros(3, dtype=T.float64)
    a[0] = x[1] * 2
    s = a.sum()
    s.backward()
    s.backward()
    return [a]


@program((3,), (3,))
def create_graph_hessian_vector(T, x, v):
    y = x.tanh().pow(3).sum() * x.exp().sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    (h,) = T.autograd.grad((g * v).sum(), x, create_graph=True)
    (h * h).sum().backward()
    return [y, g, h]


@program((3,))
def backward_create_graph_accumulates(T, x):
    y = (x**3).sum()
    y.backward(create_graph=True)
    g = x.grad
    (g * g).sum().backward()
    return [y, g]


@program((3,), (3,))
def grad_allow_unused_and_materialize(T, x, z):
    y = (x * 3).sum()
    (gx, gz) = T.autograd.grad(y, (x, z), allow_unused=True)
    (gx2, gz2) = T.autograd.grad((x * x).sum(), (x, z), materialize_grads=True)
    return [gx, gx2, gz2] + ([] if gz is None else [gz])


@program((3,), (3,))
def grad_unused_raises(T, x, z):
    return list(T.autograd.grad((x * 3).sum(), (x, z)))


@program((3,))
def first_grad_is_constant_so_second_raises(T, x):
    (g,) = T.autograd.grad((x * 3).sum(), x, create_graph=True)
    return list(T.autograd.grad(g.sum(), x))


@program((3,))
def relu_double_backward_reaches_input(T, x):
    (g,) = T.autograd.grad((x.relu() * 1.0).sum(), x, create_graph=True)
    return list(T.autograd.grad((g * x).sum(), x))


@program((3,))
def abs_double_backward_is_zero_not_unused(T, x):
    (g,) = T.autograd.grad(x.abs().sum(), x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return [gg + x]  # PyTorch's zero is a ZeroTensor: adding materialises it


@program((2, 3), (2, 3))
def backward_with_inputs(T, x, y):
    h = x * y
    h2 = h * 1.0
    (h2 * h2).sum().backward(inputs=[x, h])
    return [h.grad, h2]


@program((3,))
def non_scalar_backward_needs_gradient(T, x):
    (x * 2).backward()
    return []


@program((3,))
def backward_with_explicit_gradient(T, x):
    y = x * x
    y.backward(T.tensor([1.0, -2.0, 0.5], dtype=T.float64))
    return [y]


@program((3,))
def gradient_shape_mismatch(T, x):
    (x * 2).backward(T.ones(2, dtype=T.float64))
    return []


@program((3,))
def grad_accumulates_in_place(T, x):
    y = (x * x).sum()
    y.backward(retain_graph=True)
    g = x.grad
    y.backward()
    return [g, x.grad]


# ---- hooks and retain_grad --------------------------------------------------------------------------


@program((3,))
def hooks_scale_and_observe(T, x):
    seen = []
    h = x * 2
    h.register_hook(lambda g: g * 10)
    handle = h.register_hook(lambda g: g + 100)
    handle.remove()
    x.register_hook(lambda g: seen.append(g.detach() * 1) or g * 0.5)
    h.retain_grad()
    (h * h).sum().backward()
    return [h.grad, seen[0]]


@program((3,))
def hook_changing_size_raises(T, x):
    h = x * 2
    h.register_hook(lambda g: g.sum())
    h.sum().backward()
    return []


@program((3,))
def retain_grad_follows_inplace(T, x):
    a = x * 1.0
    a.retain_grad()
    b = a * 1
    a.add_(1)
    (a * b).sum().backward()
    return [a.grad, a]


@program((2, 2))
def hook_on_view_and_base(T, x):
    a = x * 1.0
    v = a[0]
    v.register_hook(lambda g: g * 3)
    (v.exp().sum() + a.sum()).backward()
    return [v]


# ---- views and in-place ------------------------------------------------------------------------------


@program((3,))
def inplace_on_leaf_raises(T, x):
    x.add_(1)
    return [x]


@program((3,))
def inplace_on_leaf_view_raises(T, x):
    x[:2].mul_(2)
    return [x]


@program((3,))
def inplace_on_leaf_under_no_grad_ok(T, x):
    with T.no_grad():
        x.mul_(2)
        x[0] = 7.0
    (x * x).sum().backward()
    return [x]


@program((3,))
def saved_input_modified_raises(T, x):
    a = x * 1.0
    b = a * a
    a.add_(1)
    b.sum().backward()
    return [b]


@program((3,))
def saved_output_modified_raises(T, x):
    a = x * 1.0
    b = a.exp()
    b.add_(1)
    b.sum().backward()
    return [b]


@program((3,))
def inplace_exp_then_add_raises(T, x):
    a = x * 1.0
    a.exp_()
    a.add_(1)
    a.sum().backward()
    return [a]


@program((3,), (3,))
def unsaved_input_modified_ok(T, x, c):
    a = x * 1.0
    with T.no_grad():
        k = c * 1.0
    d = a * k  # k does not require grad: a is not saved
    a.mul_(2)
    d.sum().backward()
    return [d, a]


@program((3,), (3,))
def mul_inplace_saves_original_self(T, x, m):
    a = x * 1.0
    a.mul_(m)
    a.add_(1)
    (a * a).sum().backward()
    return [a]


@program((4,))
def view_inplace_rewrites_base(T, x):
    a = x * 1.0
    v = a[1:3]
    v.mul_(v.detach() + 2)
    w = a.view(2, 2)
    (a.exp().sum() + (w * w).sum() + v.sum()).backward()
    return [a, v, w]


@program((4,))
def base_inplace_regenerates_view(T, x):
    a = x * 1.0
    v = a[:2]
    a.mul_(3)
    v.sum().backward()
    return [a, v]


@program((2, 3), (3,))
def setitem_into_zeros(T, x, y):
    a = T.zeros(3, 3, dtype=T.float64)
    a[0] = y * 2
    a[1:, 1] = x[:, 0]
    a[2, 2] = 5.0
    a[:, None, 0][1] += y[:1]
    (a * a).sum().backward()
    return [a]


@program((3, 3))
def transpose_view_inplace(T, x):
    a = x * 1.0
    t = a.t()
    t[0].copy_(t[1] * 2)
    d = a.diagonal()
    d.zero_()
    (a.sigmoid() * 3).sum().backward()
    return [a, t, d]


@program((3,))
def unbind_output_inplace_raises(T, x):
    a = x * 1.0
    u = a.unbind()
    u[0].mul_(2)
    return [a]


@program((3,))
def unbind_then_base_inplace_raises_on_use(T, x):
    a = x * 1.0
    u = a.unbind()
    a.mul_(2)
    return [u[0] * 2]


@program((3,))
def split_output_inplace_raises(T, x):
    a = x * 1.0
    u = a.split(1)
    u[0].add_(1)
    return [a]


@program((3,))
def no_grad_view_inplace_raises(T, x):
    a = x * 1.0
    with T.no_grad():
        v = a[:2]
    v.mul_(2)
    return [a]


@program((3,))
def no_grad_view_inplace_under_no_grad_ok(T, x):
    a = x * 1.0
    with T.no_grad():
        v = a[:2]
        v.mul_(2)
    (a * a).sum().backward()
    return [a, v]


@program((2, 3))
def expanded_inplace_raises(T, x):
    e = T.zeros(3, dtype=T.float64).expand(2, 3)
    e.add_(x)
    return [e]


@program((3,))
def detach_shares_version(T, x):
    c = x.exp()
    c.detach().mul_(2)
    c.sum().backward()
    return [c]


@program((3,))
def detach_inplace_not_saved_ok(T, x):
    a = x.clone()
    a.detach().mul_(2)
    a.sum().backward()
    return [a]


@program((2, 2))
def view_of_view_inplace_chain(T, x):
    a = x.clone()
    v = a.view(4)
    w = v[1:]
    w.mul_(2)
    w[0] = w[1] * w[2]
    v.add_(1)
    (a * a.exp()).sum().backward()
    return [a, v, w]


@program((3,))
def inplace_then_view_saved_raises(T, x):
    a = x * 1.0
    v = a[:2]
    b = v * v
    a.add_(1)
    b.sum().backward()
    return [b]


@program((3,))
def relu_inplace_and_iadd(T, x):
    F = T.nn.functional
    a = x * 1.0
    F.relu(a, inplace=True)
    a += 1
    a *= x
    a -= 0.5
    a /= 2
    a.sum().backward()
    return [a]


@program((2, 3))
def inplace_on_nondifferentiable_base_then_grad(T, x):
    a = T.ones(2, 3, dtype=T.float64)
    a.mul_(x)
    a[0].clamp_(0.0, 0.5)
    a.sigmoid_()
    a.sum().backward()
    return [a]


@program((3,))
def dropout_composite(T, x):
    mask = T.tensor([1.0, 0.0, 1.0], dtype=T.float64)
    y = x * mask / 0.5  # PyTorch's dropout with this mask
    y.sum().backward()
    return [y]


@program((3,), (3,))
def setitem_whole_tensor_writes_in_place_directly(T, x, y):
    a = x * 1.0
    a[:] = 2.0  # no view: FillBackward on a itself, nothing saved, a second backward works
    b = x * 1.0
    b[...] = y
    c = x * 1.0
    c[None] = y * 3  # a view: CopySlices, which cannot run twice
    s = a.sum() + b.sum()
    s.backward()
    s.backward()
    t = c.sum()
    t.backward()
    t.backward()
    return [a, b, c]


@program((2, 3), (3,))
def getitem_tuple_skips_full_slices(T, x, y):
    a = x * 1.0
    a[:, 1] = y[0]
    v = a[:, :]
    v.mul_(2)
    a[0, :] = y
    (a * a).sum().backward()
    return [a, v]


@program((2,), (2,))
def mixed_dtypes_cast_gradients_back(T, x, y):
    f = x.float()
    z = f * y + f.double() * 2
    z.sum().backward()
    return [z, f]


@program((3,))
def saved_unbind_output_then_base_inplace(T, x):
    a = x * 1.0
    u = a.unbind()[1]
    b = u * u
    a.mul_(2)
    b.sum().backward()  # the version error's message asks u for its grad_fn, which raises first
    return [b]


@program((4,))
def saved_view_then_base_inplace_names_asstrided(T, x):
    a = x * 1.0
    v = a[1:3]
    b = v * v
    a.add_(1)
    b.sum().backward()
    return [b]


@program((3,), (3,))
def leaf_hooks_with_grad_and_backward_inputs(T, x, y):
    seen = []
    x.register_hook(lambda g: seen.append(1) or g * 3)
    y.register_hook(lambda g: seen.append(2) or g)
    (gx,) = T.autograd.grad((x * y).sum(), x)
    (x * y * 2).sum().backward(inputs=[y])  # x's AccumulateGrad does not run, nor its hook
    return [gx, T.tensor(seen, dtype=T.float64)]


@program((4,))
def retain_grad_on_view_moves_with_regenerated_grad_fn(T, x):
    a = x * 1.0
    v = a[1:3]
    v.retain_grad()
    hooked = []
    v.register_hook(lambda g: hooked.append(g))
    a.mul_(2)  # v's grad_fn is regenerated: retain_grad moves, the old hook stays behind
    (v * v).sum().backward()
    return [v.grad, T.tensor(float(len(hooked)), dtype=T.float64)]


@program((3,))
def double_backward_through_copyslices(T, x):
    a = T.zeros(2, 3, dtype=T.float64)
    a[0] = x * x
    a[1, 1:] = x[:2].exp()
    a[:, 0].mul_(x[2])
    (g,) = T.autograd.grad((a * a).sum(), x, create_graph=True)
    (h,) = T.autograd.grad((g * g.tanh()).sum(), x)
    return [a, g, h]


@program((3,))
def requires_grad_flag_rules(T, x):
    d = x.detach().requires_grad_()
    (d * d).sum().backward()
    y = x * 2
    y.requires_grad_(True)  # fine on a non-leaf that requires grad
    y.requires_grad_(False)  # raises: only leaves may change the flag
    return [d.grad]


@program((2, 3))
def where_masked_fill_and_comparisons(T, x):
    m = (x > 0.1) & (x < 1.0) | (x == x.amax())
    y = T.where(m, x.exp(), -x).masked_fill(x < -1.0, 0.25)
    y.sum().backward()
    return [y, m.double()]


@program((2, 3))
def iterating_yields_unbind_views(T, x):
    a = x * 1.0
    rows = [r * 2 for r in a]
    total = sum(r.sum() for r in rows)
    total.backward()
    for r in a:
        r.add_(1)  # an unbind output: PyTorch forbids the in-place
    return [total]


@program((3, 4), (2,))
def views_of_a_detached_view_written_with_grad(T, x, y):
    a = (x * 1.0).detach()
    d = a.t()[1:].detach()  # a root here with its own strides and offset (PyTorch: not a view)
    w = d[1, :2]
    w.mul_(y)
    u = d[0]
    d.add_(1)
    (d * d).sum().backward()
    return [a, d, w, u * 1]


@program((2, 4, 5, 6), (4, 2, 2, 3), (4,), (4, 2, 3, 2))
def conv_padding_modes_groups_and_transposed(T, x, w, b, wt):
    F = T.nn.functional
    same = F.conv2d(x, w, b, padding="same", dilation=(2, 1), groups=2)
    valid = F.conv2d(x, w, None, padding="valid", stride=(2, 1), groups=2)
    tr = F.conv_transpose2d(
        x, wt, b[:4], stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2)
    )
    out = (same * same).sum() + valid.tanh().sum() + (tr * tr.sigmoid()).sum()
    out.backward()
    return [same, valid, tr]


@program((3, 7), (2, 3, 3))
def conv1d_unbatched_input(T, x, w):
    y = T.nn.functional.conv1d(x, w, padding=2, dilation=2)
    (y**2).sum().backward()
    return [y]


@program((), (3,))
def backward_on_a_leaf_and_grad_of_output_wrt_itself(T, s, x):
    s.backward()  # a scalar leaf: its AccumulateGrad is the root's only edge
    y = x * 2
    (gy,) = T.autograd.grad(y, y, T.ones(3, dtype=T.float64) * 3)
    T.autograd.backward([y.sum(), (x * x).sum()], [T.tensor(2.0, dtype=T.float64), None])
    return [gy]


@program((3,), (3,))
def grad_with_graph_through_grad_outputs(T, x, v):
    y = x.tanh()
    (g,) = T.autograd.grad(y, x, v, create_graph=True)  # g depends on v and x
    (g * g).sum().backward()
    return [g]


@program((3,))
def hook_modifying_gradient_in_place(T, x):
    h = x * 1.0
    h.register_hook(lambda g: g.mul_(3))
    (h * h).sum().backward()
    return [h]


@program((3,))
def dot_data_is_untracked(T, x):
    y = x.exp()
    x.data.mul_(2)  # .data: same storage, its own version counter: no error, stale-free by design
    y.data.add_(1)
    y.sum().backward()
    return [y, x]


@program((1, 2))
def overlap_checks_per_op(T, x):
    e = T.zeros(1, 2, dtype=T.float64).expand(3, 2)
    with T.no_grad():
        e.fill_(1.5)  # fill_(number) and zero_ do not check for internal overlap
        e.zero_()
        e[1] = x[0] * 2  # one row of the expansion: no overlap
    e[...] = 2.0  # fill_(tensor) through setitem does check: raises
    return [e]


@program((6,))
def inplace_on_view_saved_result_names_asstrided(T, x):
    a = x * 1.0
    v = a[1:4]
    v.exp_()  # saves its result: the view, whose grad_fn is now AsStridedBackward0
    a.add_(1)
    a.sum().backward()
    return [a]


@program((2,))
def inplace_on_view_saved_result_names_the_op_once_the_view_node_is_gone(T, x):
    a = x * 1.0
    v = a[...]
    v.tanh_()  # saves its result; the view's grad_fn (AsStrided) is regenerated below and freed
    a.add_(0.5)
    (v * 1).sum().backward()  # PyTorch names "output 0 of Tanh" (its weak pointer is dead)
    return [a]


@program((3, 1))
def stale_view_error_comes_before_the_shape_error(T, x):
    a = x * 1.0
    v = a.split(2, 0)[0]
    a[1] = 0.5
    return [x + v]  # both a broadcast error and a stale multi-output view: PyTorch reports the view


@program((1, 1))
def zero_dim_reductions_and_softmax(T, x):
    s = x.squeeze()  # 0-d
    y = s.softmax(-1) + s.log_softmax(0) + s.sum(0) + s.mean(-1) + s.amax(0) + s.sum((0,), keepdim=True)
    y.backward()
    return [y]


@program((3,))
def stale_saved_tensors_are_reported_in_unpack_order(T, x):
    a = x * 1.0
    v = a[0, None]
    b = a * v  # MulBackward0 saves other (v) then self (a): both share a's version counter
    v.sigmoid_()
    b.sum().backward()  # PyTorch names v ([1], AsStrided), the first one it unpacks
    return [b]


@program((1, 2, 2))
def copy_onto_itself_skips_the_kernel_checks(T, x):
    a = x.relu()
    a.neg_()
    e = a.expand(2, 2, 2)
    y = e - x
    e.copy_(e)  # same data: no overlap error, but the version still moves
    y.sum().backward()
    return [y]


@program((2,), (3, 1, 3))
def overlap_is_checked_before_shapes(T, x, y):
    e = x.tanh().expand(2, 2)
    e.copy_(y)  # both an expanded target and a shape mismatch: PyTorch reports the overlap
    return [e]


@program((2, 3, 6, 6), (4, 3, 3, 3), (4,), (4,))
def cnn_block_with_inplace_and_double_backward(T, x, w, g, b):
    F = T.nn.functional
    h = F.conv2d(x, w, padding=1)
    h = F.batch_norm(h, None, None, g, b, training=True)
    F.relu(h, inplace=True)  # in place on batch norm's output (it saves its input, not output)
    h[:, :2] *= 0.5  # in place on a view: CopySlices over the relu
    p = F.max_pool2d(h, 2) + F.avg_pool2d(h, 2)
    loss = F.log_softmax(p.flatten(1), dim=1).sum()
    gx, gw = T.autograd.grad(loss, (x, w), create_graph=True)
    (gx.pow(2).sum() + gw.abs().sum()).backward()
    return [loss, gx, gw]


@program((1, 2, 5, 5), (2, 1, 3, 3))
def conv_output_modified_in_place_raises_where_saved(T, x, w):
    F = T.nn.functional
    y = F.conv2d(x, w, groups=2)
    z = y.sigmoid()  # saves its result z, not y
    y.add_(1)  # fine: conv saved its inputs, sigmoid its output
    s = (z * 2).sum()
    s.backward(retain_graph=True)
    z.mul_(2)  # now sigmoid's saved result is stale
    s.backward()
    return [y, z]
