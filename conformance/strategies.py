"""Hypothesis strategies for convolution cases: small composites, valid by construction.

Valid configurations are built backwards, the way a shape checker would want them: draw the
kernel, dilation, stride and padding, then the *output* size, and derive an input size that
produces it — so no draw is ever rejected. A transposed convolution draws its input size and
an output_padding from every legal value (< stride or < dilation). Invalid configurations
(:func:`invalid_conv_cases`) take a valid one and break exactly one rule, for the error
conformance check. Strategies return :class:`~conformance.case.Case`; they never assert.
"""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.case import COMPLEX_DTYPES, CONV_CHECKS, DTYPES, LAYOUTS, VMAP_OPERANDS, Case, ConvParams
from conformance.models import model_programs
from conformance.ops import PRIMARY, RECORDS, SPELLING_PARAMS, VALUES, RecordParams
from conformance.programs import program_case, programs


def _no_local_constants() -> None:
    """Make a seed's cases a function of the seed and the strategy alone.

    Hypothesis (6.131 and later) sometimes (5% of choices) draws an integer, float or string literal
    found in any *local* module imported so far (not site-packages: refgrad's own modules, the
    user's tests). Which cases a seed draws then depends on which modules the drawing process has
    loaded: a campaign resumed, a Ray shard on a worker that ran another shard first, or one more
    import in the CLI draws other cases for the same seed (found by the Ray executor's resume test).
    The global constants (0, 1, -1, nan, ...: the same in every process) stay. Importing this module
    turns local constants off for the whole process (the user's own ``@given`` tests included).
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # an older Hypothesis without local constants
        return
    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty
        cache = getattr(providers, "CONSTANTS_CACHE", None)
        if cache is not None and hasattr(cache, "cache"):
            cache.cache.clear()  # permitted constants computed before, local ones included


_no_local_constants()

# ---- strategy objects built once ---------------------------------------------------------------
# A conv case takes ~30 draws; building each drawn strategy afresh (``st.integers(1, 4)``, a
# composite's lazy wrapper, ``st.sampled_from([...])``) and validating it again cost about as much as
# Hypothesis's own drawing. These memos hand back the *same* strategy for the same arguments, so the
# choice sequence, the span labels and therefore the cases a seed draws are exactly those of building
# them afresh (a list stays a list: ``sampled_from``'s label depends on whether its elements hash).


def _memo(factory):
    cache = {}

    def get(*args):
        try:
            return cache[args]
        except KeyError:
            cache[args] = out = factory(*args)
            return out
        except TypeError:  # unhashable arguments: build it afresh
            return factory(*args)

    get.__wrapped__ = factory
    return get


_integers = _memo(st.integers)


def _sampled(elements):
    """``st.sampled_from(elements)``, memoised by the elements' type and values."""
    if type(elements) not in (list, tuple):
        return st.sampled_from(elements)
    return _sampled_of(type(elements), tuple(elements))


@_memo
def _sampled_of(kind, items):
    return st.sampled_from(kind(items))


_BOOLEANS = st.booleans()

#: how a case writes its padding: an int, one int per dim, one (low, high) pair per dim whose sides
#: are all >= 0 (``pairs``), that crop (``crop``: a negative side, no pair that also pads) or where a
#: pair crops its low side and pads its high one (``crop_pad``, e.g. (-1, 1)) or pads the low side and
#: crops the high one (``pad_crop``, e.g. (1, -1): a kernel handles its two edges apart), or a string
PADDING_FORMS = ("int", "per_dim", "pairs", "crop", "crop_pad", "pad_crop", "same", "same_lower", "valid")


GROUP_KINDS = ("plain", "grouped", "depthwise")
#: channel counts at and around the vector widths 8 and 16 (full lanes, a tail of one, one lane
#: short): a plain convolution draws one of them for a channel count one time in four
WIDE_CHANNELS = (7, 8, 9, 15, 16, 17)
_plain_channels = st.one_of(
    st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.sampled_from(WIDE_CHANNELS)
)
#: input channels per group of a grouped convolution: 1 to 3 (shorter than a vector), 4 or 5 (a
#: 4-lane vector, one lane over), 7 to 9 (around an 8-lane one): every bucket of the coverage's
#: ``group_channels`` axis (a grouped kernel contracts a group's channels, not all of them)
_group_channels = st.one_of(st.integers(1, 3), st.integers(4, 5), st.sampled_from((7, 8, 9)))


@st.composite
def channel_groups(draw, transposed: bool, kinds=GROUP_KINDS):
    """(groups, input channels, output channels): plain, grouped or depthwise."""
    kind = draw(_sampled([k for k in kinds if not (transposed and k == "depthwise")] or ["grouped"]))
    if kind == "plain":
        return 1, draw(_plain_channels), draw(_plain_channels)
    if kind == "depthwise" and not transposed:
        c = draw(_integers(2, 4))
        return c, c, c * draw(_integers(1, 2))  # channel multiplier 1 or 2
    g = draw(_integers(2, 3))
    return g, g * draw(_group_channels), g * draw(_integers(1, 2))


def channel_outcomes(transposed: bool) -> list[tuple[int, int, int]]:
    """Every (groups, input channels, output channels) :func:`channel_groups` can draw (every kind):
    the table a constructed case (conformance.coverage.axes_cases) picks its channels from."""
    plain = (1, 2, 3, 4, *WIDE_CHANNELS)
    out = [(1, cin, cout) for cin in plain for cout in plain]
    if not transposed:
        out += [(c, c, c * m) for c in (2, 3, 4) for m in (1, 2)]
    per_group = (1, 2, 3, 4, 5, 7, 8, 9)
    out += [(g, g * k, g * m) for g in (2, 3) for k in per_group for m in (1, 2)]
    return out


def _one_over_one(draw, values: tuple) -> tuple:
    """``values`` with one element (a drawn dim) raised to 2 where none exceeds 1."""
    if any(v > 1 for v in values):
        return values
    d = draw(_integers(0, len(values) - 1))
    return values[:d] + (2,) + values[d + 1 :]


@st.composite
def window(draw, rank: int, strided: bool | None = None, dilated: bool | None = None):
    """Per-dim kernel, dilation and stride (rank 3 kept small). ``strided``/``dilated``: None draws
    either; True makes some dim's stride/dilation > 1, False every one 1 (a constructed case)."""
    small = rank == 3
    kernel = tuple(draw(_integers(1, 2 if small else 3)) for _ in range(rank))
    if dilated is False:
        dilation = (1,) * rank
    else:
        dilation = tuple(draw(_sampled([1, 1, 2])) for _ in range(rank))
        dilation = _one_over_one(draw, dilation) if dilated else dilation
    if strided is False:
        stride = (1,) * rank
    else:
        stride = tuple(draw(_integers(1, 2 if small else 3)) for _ in range(rank))
        stride = _one_over_one(draw, stride) if strided else stride
    return kernel, dilation, stride


def _effective(k, d):
    return (k - 1) * d + 1


@st.composite
def plain_geometry(draw, rank: int, form: str, strided=None, dilated=None, least_pad=False):
    """(padding as written, kernel, dilation, stride, input size) of a valid plain convolution
    (``strided``, ``dilated``: :func:`window`'s; ``least_pad``: :func:`pairs_of_form`'s)."""
    kernel, dilation, stride = draw(_window(rank, strided, dilated))
    eks = [_effective(k, d) for k, d in zip(kernel, dilation)]
    outs = [draw(_integers(1, 2 if rank == 3 else 4)) for _ in range(rank)]
    if form in ("same", "same_lower"):
        sizes = [draw(_integers((y - 1) * s + 1, y * s)) for y, s in zip(outs, stride)]
        return form, kernel, dilation, stride, tuple(sizes)
    if form == "valid":
        pads = [(0, 0)] * rank
    elif form == "int":
        p = draw(_integers(0, 2))
        pads = [(p, p)] * rank
    elif form == "per_dim":
        pads = [(p, p) for p in (draw(_integers(0, 2)) for _ in range(rank))]
    else:
        pads = draw(_pairs(form, (3,) * rank, False, least_pad))  # each side -1..2
    if least_pad and form == "pad_crop":
        kernel, eks = _one_wide_where_pad_crop(kernel, dilation, pads)
    sizes = []
    for y, s, ek, (lo, hi) in zip(outs, stride, eks, pads):
        size = (y - 1) * s + ek - lo - hi + draw(_integers(0, s - 1))
        sizes.append(max(size, 1 - min(lo, 0) - min(hi, 0), 1))
    padding = "valid" if form == "valid" else _written(form, pads)
    return padding, kernel, dilation, stride, tuple(sizes)


def _one_wide_where_pad_crop(kernel, dilation, pads):
    """(kernel, effective kernel) with a 1-wide kernel in each dim whose pair pads its low side and
    crops its high one. The input gradient of a plain convolution is a convolution under the pairs
    (k - 1 - low, k - 1 - high): with k = 1 the least pad_crop pair (1, -1) becomes (-1, 1), so a
    constructed pad_crop case also runs the crop_pad form through the backward's kernel (XLA:CPU's
    is wrong there: jax-conv1d-pad-crop-input-gradient-with-a-1-wide-kernel); a wider kernel turns it
    into a pair that pads both sides."""
    kernel = tuple(1 if lo > 0 > hi else k for k, (lo, hi) in zip(kernel, pads))
    return kernel, [_effective(k, d) for k, d in zip(kernel, dilation)]


@st.composite
def pairs_of_form(draw, form: str, room: tuple, shared: bool, least_pad: bool = False):
    """(low, high) per dim written in the pairs ``form`` (pairs, crop or crop_pad: PADDING_FORMS).

    A side pads by up to ``room[d] - 1`` or crops by 1; ``shared``: the two sides' pads together
    at most ``room[d] - 1`` (a transposed convolution crops its full output by its padding: at most
    its effective kernel less one). ``crop`` pairs are each all >= 0 or all <= 0, with a crop
    somewhere; ``crop_pad`` has a dim that crops one side and pads the other (a dim with
    ``room[d] >= 2``: the caller makes one). ``least_pad``: that pair pads by 1, the form's plainest
    instance (a constructed case's: XLA:CPU's rank-1 (-1, 1) departs where (-1, 2) is right)."""
    pads = []
    for r in room:
        low_side = 0 if form == "pairs" or (form == "crop" and draw(_BOOLEANS)) else -1
        lo = draw(_integers(low_side, r - 1))
        hi = draw(_integers(low_side, r - 1 - max(lo, 0) if shared else r - 1))
        if form == "crop" and min(lo, hi) < 0:  # a pair that crops pads on neither side
            lo, hi = min(lo, 0), min(hi, 0)
        pads.append((lo, hi))
    if form == "crop" and all(side >= 0 for p in pads for side in p):
        d = draw(_integers(0, len(room) - 1))
        pads[d] = (-1, 0) if draw(_BOOLEANS) else (0, -1)
    if form in ("crop_pad", "pad_crop"):
        d = draw(_sampled([i for i, r in enumerate(room) if r >= 2]))
        pad = 1 if least_pad else draw(_integers(1, room[d] - 1))
        pads[d] = (-1, pad) if form == "crop_pad" else (pad, -1)
    return pads


def _written(form, pads):
    if form == "int":
        return pads[0][0]
    if form == "per_dim":
        return [lo for lo, _ in pads]
    return [list(p) for p in pads]


@st.composite
def transposed_geometry(draw, rank: int, form: str, strided=None, dilated=None, least_pad=False):
    """(padding, output_padding, kernel, dilation, stride, input size) of a valid conv_transpose
    (``strided``, ``dilated``: :func:`window`'s; ``least_pad``: :func:`pairs_of_form`'s)."""
    kernel, dilation, stride = draw(_window(rank, strided, dilated))
    eks = [_effective(k, d) for k, d in zip(kernel, dilation)]
    sizes = tuple(draw(_integers(1, 2 if rank == 3 else 4)) for _ in range(rank))
    if form in ("same", "same_lower", "valid"):
        return form, (0,) * rank, kernel, dilation, stride, sizes
    if form == "int":
        p = draw(_integers(0, min((ek - 1) // 2 for ek in eks)))
        pads = [(p, p)] * rank
    elif form == "per_dim":
        pads = [(p, p) for p in (draw(_integers(0, (ek - 1) // 2)) for ek in eks)]
    else:  # the padding crops the full output: at most ek - 1 in all per dim
        if form in ("crop_pad", "pad_crop") and max(eks) < 2:  # a crop and a pad need a kernel wider than 1
            widened = draw(_integers(0, rank - 1))
            kernel = kernel[:widened] + (2,) + kernel[widened + 1 :]
            eks = [_effective(k, d) for k, d in zip(kernel, dilation)]
        pads = draw(_pairs(form, tuple(eks), True, least_pad))
    # every legal output_padding: smaller than the stride or than the dilation
    output_padding = tuple(draw(_integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    return _written(form, pads), output_padding, kernel, dilation, stride, sizes


@st.composite
def conv_cases(
    draw,
    dtypes=DTYPES,
    ranks=(1, 2, 3),
    checks=CONV_CHECKS,
    transposed=None,
    layouts=LAYOUTS,
    padding_forms=PADDING_FORMS,
    group_kinds=GROUP_KINDS,
    batches=(1, 2, 2, 0),
    channel_choices=None,
    strided=None,
    dilated=None,
    least_pad=False,
):
    """Valid convolution cases: every padding form, groups incl. depthwise, transposed, empty batch.

    The keyword arguments narrow the space (a test of one code path draws only from it; a
    constructed case, conformance.coverage.axes_cases, every axis): ``channel_choices``, some of
    :func:`channel_outcomes` (given ``transposed``) to draw (groups, input, output channels) from
    instead of ``group_kinds``; ``strided``, ``dilated``: :func:`window`'s; ``least_pad``:
    :func:`pairs_of_form`'s.
    """
    rank = draw(_sampled(ranks))
    is_transposed = draw(_BOOLEANS) if transposed is None else transposed
    form = draw(_sampled(padding_forms))
    if channel_choices is None:
        groups, cin, cout = draw(_channel_groups(is_transposed, group_kinds))
    else:
        groups, cin, cout = draw(_sampled(channel_choices))
    if is_transposed:
        padding, output_padding, kernel, dilation, stride, size = draw(
            _transposed_geometry(rank, form, strided, dilated, least_pad)
        )
        weight = (cin, cout // groups, *kernel)
    else:
        padding, kernel, dilation, stride, size = draw(_plain_geometry(rank, form, strided, dilated, least_pad))
        output_padding = (0,) * rank
        weight = (cout, cin // groups, *kernel)
    batch = draw(_sampled(batches))
    params = ConvParams(
        rank=rank,
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
        transposed=is_transposed,
        output_padding=output_padding,
        bias=draw(_BOOLEANS),
        layout=draw(_sampled(layouts)),
    )
    over = draw(_sampled([("input",), ("weight",), VMAP_OPERANDS]))
    raw = Case(
        "conv",
        params,
        {"input": (batch, cin, *size), "weight": weight},
        draw(_sampled(dtypes)),
        draw(_integers(0, 2**16)),
        tuple(checks),
        draw(_integers(1, 3)),
        over,
    )
    return Case.from_dict(raw.to_dict(), source="strategy")  # normalise through the one parser


_window = _memo(window)
_channel_groups = _memo(channel_groups)
_plain_geometry = _memo(plain_geometry)
_transposed_geometry = _memo(transposed_geometry)
_pairs = _memo(pairs_of_form)
_conv_cases = _memo(
    lambda dtypes, ranks, checks, transposed: conv_cases(dtypes, ranks, checks, transposed=transposed)
)


BREAKAGES = (
    "input_channels",
    "out_channels_vs_groups",
    "kernel_too_large",
    "output_padding_too_large",
    "zero_stride",
    "zero_dilation",
    "groups_do_not_divide_input",
    "transposed_weight_channels",
    "crop_past_input",
)


@st.composite
def invalid_conv_cases(draw, dtypes=DTYPES, ranks=(1, 2, 3), breakages=BREAKAGES):
    """A valid case with exactly one rule broken, checked with the ``error`` check."""
    kind = draw(_sampled(breakages))
    transposed = kind in ("output_padding_too_large", "transposed_weight_channels")
    case = draw(_conv_cases(dtypes, ranks, ("error",), transposed))
    d = case.to_dict()
    p, shapes, rank = d["params"], d["shapes"], case.params.rank
    dim = draw(_integers(0, rank - 1))
    if kind == "input_channels":
        shapes["input"][1] += draw(_integers(1, 2))
    elif kind == "out_channels_vs_groups":
        p["groups"] = max(p["groups"], 2)
        shapes["weight"][0] = p["groups"] * draw(_integers(1, 2)) + 1
        shapes["input"][1] = p["groups"] * shapes["weight"][1]
    elif kind == "kernel_too_large":
        p["padding"] = "valid"
        shapes["weight"][2 + dim] = max(shapes["weight"][2 + dim], 2)
        ek = (shapes["weight"][2 + dim] - 1) * p["dilation"][dim] + 1
        shapes["input"][2 + dim] = draw(_integers(1, ek - 1))
    elif kind == "output_padding_too_large":
        p["padding"] = 0
        p["output_padding"][dim] = max(p["stride"][dim], p["dilation"][dim])
    elif kind == "groups_do_not_divide_input":
        p["groups"] = max(p["groups"], 2)
        shapes["input"][1] = p["groups"] * draw(_integers(1, 2)) + 1
        shapes["weight"][1] = 1
    elif kind == "transposed_weight_channels":  # weight (C_in, O/groups, *k) with the wrong C_in
        shapes["weight"][0] = shapes["input"][1] + p["groups"]
    elif kind == "crop_past_input":  # a negative (cropping) padding that removes the whole input
        size = shapes["input"][2 + dim]
        p["padding"] = [[0, 0]] * rank
        p["padding"][dim] = [-size, 0]
    elif kind == "zero_stride":
        p["stride"][dim] = 0
    else:
        p["dilation"][dim] = 0
    d["description"] = f"invalid: {kind}"
    return Case.from_dict(d, source="strategy")


def program_cases(max_inputs: int = 2, max_steps: int = 6, dtypes=("float64",)):
    """Program cases (op ``program``): random programs over views, in-place and numeric ops, custom
    autograd.Functions, checkpointed blocks and saved-tensor hooks, each carrying its own Python text
    (:func:`conformance.programs.programs` with every kind of step on), in one of ``dtypes`` (the
    inputs' dtype; every intermediate is computed in it)."""
    plain = programs(max_inputs, max_steps, numeric=True)
    featured = programs(
        max_inputs, max_steps, numeric=True, custom_functions=True, checkpoints=True, saved_hooks=True
    )
    # plain (half the programs), featured (a third) or a model template (a sixth: conformance.models):
    # the templates' definitions and layers make programs longer and dilute the view/in-place steps,
    # whose bugs the plain half keeps finding as often as before (and shrinks towards: index 0)
    kinds = [plain, plain, plain, featured, featured, model_programs()]
    program = st.integers(0, len(kinds) - 1).flatmap(lambda k: kinds[k])
    real = [d for d in dtypes if d not in COMPLEX_DTYPES]
    complex_ = [d for d in dtypes if d in COMPLEX_DTYPES]
    drawn = []
    if real:
        drawn.append(st.tuples(program, _sampled(real)))
    if complex_:  # complex leaves: the complex steps (views as real/complex, conj, .real/.imag)
        drawn.append(st.tuples(programs(max_inputs, max_steps, complex_steps=True), _sampled(complex_)))
    return st.one_of(*drawn).map(lambda pd: program_case(pd[0], dtype=pd[1]))


# ---- op records: shapes and values that reach where kernels change behaviour ------------------------

#: Sizes at and around SIMD widths and blocking thresholds (8/16/32/64 lanes; odd tails), and empty.
EDGE_SIZES = (0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65)
#: Reduction lengths past the 4096 blocking threshold of vectorised sums.
LONG_SIZES = (4095, 4096, 4097, 8193)


@st.composite
def tensor_shapes(draw, min_rank=0, max_rank=3, max_size=1024, min_dim=0):
    """A shape with dims drawn mostly small, sometimes at SIMD/blocking edges, total size capped."""
    rank = draw(st.integers(min_rank, max_rank))
    dims = []
    for _ in range(rank):
        room = max(max_size // max(1, _prod(dims)), 1)
        low = max(min_dim, 1)
        choices = [d for d in EDGE_SIZES if min_dim <= d <= room] or [low]
        # past the cap (room < min_dim) the smallest allowed dim, as ``choices`` does: min_dim wins
        dims.append(draw(st.one_of(st.integers(low, max(low, min(4, room))), st.sampled_from(choices))))
    return tuple(dims)


def _prod(dims):
    out = 1
    for d in dims:
        out *= max(d, 1)
    return out


@st.composite
def broadcast_shapes(draw, max_rank=3, max_size=512):
    """Two shapes that broadcast together: dims of 1 and missing leading dims on either side."""
    shape = draw(tensor_shapes(0, max_rank, max_size))
    other = list(shape)
    for i in range(len(other)):
        if draw(st.integers(0, 3)) == 0:
            other[i] = 1
    cut = draw(st.integers(0, len(other)))
    other = tuple(other[cut:])
    return (shape, other) if draw(st.booleans()) else (other, shape)


def value_kinds(kinds=None):
    """How a record case's inputs are drawn: normal, wide magnitudes, ties and zeros, large (softmax
    overflow), tiny (subnormals), non-finite, special (IEEE special values over the whole line)."""

    return st.sampled_from(kinds or VALUES)


def record_spellings(rec):
    """A strategy of the ``spelling_<framework>`` params of a case of ``rec``: per framework with
    other public spellings, one of them or the primary (then absent: a record without spellings
    draws nothing, so its cases are what they were)."""

    @st.composite
    def draw_them(draw):
        out = {}
        for framework, named in sorted(rec.spellings.items()):
            name = draw(st.sampled_from((PRIMARY, *named)))
            if name != PRIMARY:
                out[SPELLING_PARAMS[framework]] = name
        return out

    return draw_them()


def record_cases(name, dtypes=DTYPES, checks=None, max_size=None):
    """Cases of the op record ``name`` (its own sample strategy), in ``dtypes``, for ``checks``."""

    rec = RECORDS[name]
    checks = tuple(checks or rec.checks)
    dtypes = [d for d in dtypes if d in rec.dtypes] or list(rec.dtypes)  # (the transforms: complex only)

    @st.composite
    def build(draw):
        params, shapes = draw(rec.sample())
        return Case(
            name,
            RecordParams.of({**params, **draw(record_spellings(rec))}),
            {k: tuple(v) for k, v in shapes.items()},
            draw(st.sampled_from(dtypes)),
            draw(st.integers(0, 2**16)),
            checks,
        )

    return build()


def draw_examples(strategy, n: int, seed: int = 0) -> list:
    """``n`` examples of ``strategy``, seeded (for tests and quick looks; campaigns use Campaign.fuzz)."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    out = []

    @hypothesis_seed(seed)
    @settings(max_examples=n, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example):
        out.append(example)

    collect()
    return out[:n]
