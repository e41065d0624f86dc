"""Coverage measured, not hoped for: which parameter features (and pairs of them) a campaign drew.

A *feature* is a named property of one case, derived from its parameters, shapes and drawn inputs
(a function of its seed; never a framework's answer), so the same case always has the same features:

* every case: ``dtype=<dtype>``; ``empty`` (an input with a zero-sized dim), ``scalar`` (a 0-d
  input), ``broadcast`` (inputs of different shapes), ``large`` (an input of 4096 elements or more:
  past the reductions' blocking threshold);
* an op record's case: ``values=<kind>`` (how its inputs are drawn), and from each of the op's
  own parameters by type: a bool ``k=True``/``k=False``; ``k=None``; an int ``k<0``, ``k=0``,
  ``k=1``, ``k>1``; a short list of ints ``k>1`` / ``k<0`` / ``k=0`` (any element) and
  ``len(k)>1``; a string ``k=<value>``; a float ``k=0`` / ``k!=0`` (long lists such as index arrays
  carry no feature); the vmap checks: ``in_dims=None`` (a shared input), ``in_dims<0``,
  ``in_dims>0`` (the per-sample slice is a strided, non-contiguous view), ``vmap_size=1`` /
  ``vmap_size>1``; the error check: ``invalid=<breakage>``;
  ``at=<input>:<point>`` and ``near=<input>:<point>`` for each hard point of the input's declared
  domain (a zero, pole or branch point: conformance.ops._domains) that some drawn element lies
  exactly on, and some other lies near (the reach table's two cells per point);
* a convolution case: ``transposed``, ``output_padding>0``, ``groups>1``, ``stride>1``,
  ``dilation>1``, ``batch_empty``, ``padding=<string>``, ``channels_last``, ``bias=False``,
  ``rank=<r>``.

A convolution case also has one value on each of its eleven *axes* (:func:`conv_axes`, the values
each can take: :data:`CONV_AXES`): ``rank`` (1, 2 or 3 spatial dims), ``layout``, ``padding`` (its
form: per_dim (an int or one per dim), pairs (all sides >= 0), crop (a side < 0, no pair that also
pads), crop_pad (a pair that crops its low side and pads its high one, (-1, 1)), pad_crop (the
mirror, (1, -1)), same, same_lower, valid), ``channels`` (the larger channel count, bucketed at and
around the vector widths 4, 8 and 16: ``1``, ``4±1``, ``8±1``, ``16±1``, ``other``),
``group_channels`` (the input channels one group contracts, by the vector lanes they fill: ``1``,
``2-3``, ``4-7``, ``>=8``), ``groups`` (plain, grouped, depthwise), ``stride`` and ``dilation``
(``1`` or ``>1``), ``batch`` (``0``: an empty batch, or ``>0``), ``transposed`` and ``dtype``; its
*triples* are its 165 combinations of three axis values (kernel bugs sit at combinations of three
and more: XLA:CPU's rank-1 float32 convolution with a crop_pad padding and four or more channels
per group, a crop of a transposed channels-last conv, a stride with a vector-width channel count in
float16).

:class:`Coverage` counts, per record (``conv`` and ``program`` included), how often each feature
and each pair of features was drawn, and for ``conv`` each triple; :func:`coverage_of_results`
measures it from a results file (the report's coverage table); :func:`record_strategy` and
:func:`conv_strategy` steer generation toward pairs (and, for conv, triples) not yet drawn: each
draws a candidate case and, while the candidate adds nothing new, up to ``tries - 1`` more,
keeping the one that adds the most. A conv example always draws ``tries`` candidates: a case has
165 triples of thousands, so the first candidate always added some and the rule never drew a
second (the best of six reaches more of them). The choice is memoised by the first candidate (for
conv by all of them), so a replay of the same Hypothesis choices (the campaign's shrink phase)
rebuilds the same case, and a seed gives the same campaign.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from itertools import combinations, product

from conformance.case import DTYPES, LAYOUTS, PADDING_STRINGS, PART_DTYPE, Case
from conformance.ops import (  # CELLS: the feature keys of a domain's hard point reached by a case
    AT,
    CELLS,
    NEAR,
    PLANE_POINTS,
    POINT,
    RECORDS,
    VMAP_CHECKS,
    WHOLE,
    RecordParams,
    as_domain,
    moving_params_in_dtype,
)
from conformance.strategies import channel_outcomes, conv_cases, record_spellings

#: candidates drawn at most per steered example
TRIES = 6
#: pairs of features listed per record as never drawn (the report shows the first ones)
MISSING_SHOWN = 12
#: ``run --domains mixed``: one example in this many of a record with declared hard points is drawn
#: over its whole domain (``params["domain"] = "whole"``, the ``near`` kind among its kinds)
WHOLE_SHARE = 4
#: the records whose axis triples are counted and steered for (:func:`conv_axes`)
TRIPLE_OPS = ("conv",)
#: the vector widths the ``channels`` axis buckets around (SIMD lanes of float32/float16 kernels)
VECTOR_WIDTHS = (4, 8, 16)
#: the ``group_channels`` axis's buckets of the input channels one group contracts: none to reduce
#: over (1), less than a 4-lane vector (2-3), at least a 4-lane one (4-7), at least an 8-lane one
#: (>=8); each is (its value, its smallest count)
GROUP_CHANNEL_BUCKETS = (("1", 1), ("2-3", 2), ("4-7", 4), (">=8", 8))


def features(case) -> list[str]:
    """The features of a :class:`~conformance.case.Case` (sorted, no repeats): its dtype and its
    format's own (:meth:`~conformance.case.Case.features`)."""
    return sorted(set([f"dtype={case.dtype}", *case.features()]))


def declared_points(op, plane: bool = False) -> list[str]:
    """The ``<input>:<point>`` regions a record's domains declare (the reach table's rows); with
    ``plane``, those of its complex argument instead (conformance.ops.PLANE_POINTS: the rows of its
    complex cases)."""
    rec = RECORDS.get(op)
    if rec is None:
        return []
    if plane:
        return [f"{name}:{p.label}" for name, points in PLANE_POINTS.get(op, {}).items() for p in points]
    return [f"{name}:{p.label}" for name, d in rec.domains.items() for p in as_domain(d).points]


def moving_points(op) -> set[str]:
    """The ``<input>:<point>`` regions of record ``op`` whose point moves with an op parameter
    (conformance.ops._domains.Point's ``param``: hardtanh's kinks at min_val and max_val): the reach
    sweep draws their examples at the record's parameter draws, not at its simplest sample only
    (conformance.executors.plan.fuzz_units)."""
    rec = RECORDS.get(op)
    if rec is None:
        return set()
    return {f"{name}:{p.label}" for name, d in rec.domains.items() for p in as_domain(d).points if p.param}


def dealt_dtypes(dtypes, position: int) -> tuple:
    """``dtypes`` rotated so that the one at ``position`` (modulo their number) comes first.

    How a campaign deals the requested dtypes out, the same at every seed: the reach sweep's point
    ``i`` runs in the first of ``dealt_dtypes(real, i)`` (:func:`reach_points`), and a record's
    fuzz unit number ``k`` draws from ``dealt_dtypes(dtypes, k + 1)``
    (conformance.executors.plan.fuzz_units), whose first dtype is its simplest draw's: at the
    default budget (one example per record and check) that is the one dtype the unit judges."""
    dtypes = tuple(dtypes)
    if not dtypes:
        return dtypes
    k = position % len(dtypes)
    return dtypes[k:] + dtypes[:k]


def reach_points(op, checks, dtypes) -> list[tuple[str, str, str, str]]:
    """The default campaign's reach sweep of a record: ``(point, check, dtype, kind)`` twice per
    declared point (:func:`declared_points`), one example each, so that a campaign reaches both
    cells of every declared point at any budget: kind ``near`` (every element of the point's input
    around it, none on it) and kind ``at`` (the first element exactly on it: where a function's
    value or derivative at the point is a rule of its own). The checks (the record's, among
    ``checks``, but ``error``) and the real dtypes among ``dtypes`` are dealt round-robin over the
    points (:func:`dealt_dtypes`), the ``near`` example of point ``i`` taking check and dtype ``i``
    and its ``at`` example check and dtype ``i + 1``: a record with more points than checks runs
    each check at some point, one with fewer runs its first checks (forward, vjp, ...), and the two
    cells of a point are judged in two checks and dtypes where the record has them. The points of
    the complex plane (``declared_points(op, plane=True)``) are swept the same way in the complex
    dtypes among ``dtypes``."""
    rec = RECORDS.get(op)
    if rec is None:
        return []
    own = [c for c in rec.checks if c in checks and c != "error"]
    real = [d for d in dtypes if d in rec.dtypes and d not in PART_DTYPE]
    plane = [d for d in dtypes if d in rec.dtypes and d in PART_DTYPE]
    return [
        (p, own[j % len(own)], dealt_dtypes(dealt, j)[0], kind)
        for dealt, points in ((real, declared_points(op)), (plane, declared_points(op, plane=True)))
        if own and dealt
        for i, p in enumerate(points)
        for j, kind in ((i, NEAR), (i + 1, AT))
    ]


def pairs(feats) -> list[str]:
    return [f"{a} & {b}" for a, b in combinations(sorted(feats), 2)]


def channels_bucket(n: int) -> str:
    """A channel count at or around a vector width (``8±1``: 7, 8 or 9), ``1``, or ``other``."""
    if n == 1:
        return "1"
    for w in VECTOR_WIDTHS:
        if abs(n - w) <= 1:
            return f"{w}±1"
    return "other"


def group_channels_bucket(n: int) -> str:
    """The ``group_channels`` value of ``n`` input channels per group (:data:`GROUP_CHANNEL_BUCKETS`)."""
    return [value for value, least in GROUP_CHANNEL_BUCKETS if n >= least][-1]


def _padding_form(padding) -> str:
    """The ``padding`` axis value: the string, ``per_dim``, or how the (low, high) pairs pad."""
    if isinstance(padding, str):
        return padding
    if isinstance(padding, int) or all(isinstance(p, int) for p in padding):
        return "per_dim"
    if any(lo < 0 < hi for lo, hi in padding):  # the low side cropped, the high one padded
        return "crop_pad"
    if any(hi < 0 < lo for lo, hi in padding):  # the low side padded, the high one cropped
        return "pad_crop"
    return "crop" if any(side < 0 for p in padding for side in p) else "pairs"


#: every value each convolution axis takes (conformance.strategies.conv_cases draws each:
#: tests/conformance/test_coverage.py); the report's triples_possible counts the values drawn
CONV_AXES = {
    "batch": ("0", ">0"),
    "channels": ("1", *(f"{w}±1" for w in VECTOR_WIDTHS), "other"),
    "dilation": ("1", ">1"),
    "dtype": DTYPES,
    "group_channels": tuple(value for value, _ in GROUP_CHANNEL_BUCKETS),
    "groups": ("plain", "grouped", "depthwise"),
    "layout": LAYOUTS,
    "padding": ("per_dim", "pairs", "crop", "crop_pad", "pad_crop", *PADDING_STRINGS),
    "rank": ("1", "2", "3"),
    "stride": ("1", ">1"),
    "transposed": ("False", "True"),
}


def channel_axes(transposed: bool, groups: int, cin: int, cout: int) -> dict[str, str]:
    """The ``channels``, ``group_channels`` and ``groups`` values of a convolution's channels."""
    kind = "plain" if groups == 1 else "depthwise" if groups == cin and not transposed else "grouped"
    return {
        "channels": channels_bucket(max(cin, cout)),
        "group_channels": group_channels_bucket(cin // groups),
        "groups": kind,
    }


def conv_axes(case) -> dict[str, str]:
    """{axis: value} of a convolution case: the eleven axes its triples combine (:data:`CONV_AXES`)."""
    p = case.params
    batch, cin = case.shapes["input"][:2]
    weight = case.shapes["weight"]
    cout = weight[1] * p.groups if p.transposed else weight[0]
    return {
        "batch": ">0" if batch else "0",
        "dilation": ">1" if any(d > 1 for d in p.dilation) else "1",
        "dtype": case.dtype,
        **channel_axes(p.transposed, p.groups, cin, cout),
        "layout": p.layout,
        "padding": _padding_form(p.padding),
        "rank": str(p.rank),
        "stride": ">1" if any(s > 1 for s in p.stride) else "1",
        "transposed": str(bool(p.transposed)),
    }


def triples(axes: dict) -> list[str]:
    """The combinations of three axis values (``axis=value & axis=value & axis=value``)."""
    named = [f"{k}={v}" for k, v in sorted(axes.items())]
    return [" & ".join(t) for t in combinations(named, 3)]


# ---- base-choice construction (combinatorial testing's base-choice design) ------------------------
# Steering picks the best of a few random candidates: it reaches many triples, but a kernel bug that
# needs three axis values *and* the other axes plain (JAX's rank-1 crop_pad convolution departs only
# with a non-empty batch, stride 1, dilation 1 and several channels contracted) is reached by chance,
# and more candidates lower that chance (the one adding most triples has unusual other axes). A
# constructed example sets the three axes of a chosen cell and every other axis to its base value.

#: each axis's base (plain) value: what a typical network's convolution has, where a kernel takes its
#: ordinary path (a non-empty batch, unit stride and dilation, one group contracting a vector's width
#: of channels, symmetric padding, a 2-d float32 input); a constructed case keeps every axis but its
#: cell's at it (:func:`base_axes`)
BASE_AXES = {
    "batch": ">0",
    "channels": "8±1",
    "dilation": "1",
    "dtype": "float32",
    "group_channels": ">=8",
    "groups": "plain",
    "layout": "channels_first",
    "padding": "per_dim",
    "rank": "2",
    "stride": "1",
    "transposed": "False",
}
#: the axis triples constructed first, in this order: those that choose a kernel (the spatial rank
#: and the padding's form with the channels contracted, the dtype, the channel count, transposition,
#: the layout), then the window's; the other triples follow in an order drawn from the seed
DISPATCH_TRIPLES = (
    ("rank", "padding", "group_channels"),
    ("rank", "padding", "dtype"),
    ("rank", "padding", "channels"),
    ("rank", "padding", "transposed"),
    ("rank", "padding", "layout"),
    ("rank", "stride", "dilation"),
)
#: one example in this many of a conv unit's budget is constructed (after its first: Hypothesis's
#: simplest draw); the default budget's 40 constructs 13 a unit, 78 over the six checks' units:
#: three rounds of the first dispatch triple (every rank x padding pair with three of the four
#: group_channels values)
CONSTRUCTED_SHARE = 3
#: the examples of a constructed case with a non-empty batch: two, so that each example but the last
#: has a neighbour row in memory. A kernel that reads a padded element from the wrong address (XLA:CPU's
#: rank-1 and 2-d convolution with a crop at one end and a pad at the other reads the high pad from
#: past the cropped row: jax-conv1d-mixed-sign-padding-wrong-values) then reads the next example's
#: row, standard normal data whose products with the weights are nonzero, so the wrong element differs
#: from the right one; at batch 1 it reads past the buffer, often zeros, and is right by chance (of
#: 45 float32 (-1, 1) rank-1 shapes contracting 8 or more, 12 to 16 wrong at batch 1 in two runs, 39
#: at batch 2 and at 3, the 6 others right at any batch: 4 channels with a 3-wide kernel; conv28).
#: The steered examples still draw batch 1 (conv_cases' batches).
CONSTRUCTED_BATCH = 2
#: draws of a constructed case at most until one has exactly its axes (a pad_crop pair can come
#: with another dim's crop_pad, which names the form)
CELL_TRIES = 8


def _dtype_base(dtypes) -> str:
    """The ``dtype`` base among ``dtypes``: float32, else another one that is not float64."""
    if "float32" in dtypes:
        return "float32"
    return next((d for d in dtypes if d != "float64"), dtypes[0])


def _axis_values(dtypes) -> dict:
    return {**CONV_AXES, "dtype": tuple(d for d in DTYPES if d in dtypes)}


def channel_choices(axes: dict) -> list[tuple[int, int, int]]:
    """The (groups, input, output channels) conv_cases can draw (channel_outcomes) whose
    ``channels``, ``group_channels`` and ``groups`` values are those ``axes`` gives (any where absent;
    ``transposed`` False where absent)."""
    transposed = axes.get("transposed") == "True"
    return [
        c
        for c in channel_outcomes(transposed)
        if all(axes.get(k, v) == v for k, v in channel_axes(transposed, *c).items())
    ]


def base_axes(cell: dict, dtypes) -> dict:
    """{axis: value} of the case constructed for ``cell`` (some axes' values): the cell's values,
    every other axis at its base (:data:`BASE_AXES`; the dtype: :func:`_dtype_base`), or where the
    base cannot go with the values fixed so far (channels 1 contract one channel), its first value
    that can. Raises ValueError when the cell itself cannot be drawn."""
    if not channel_choices(cell):
        raise ValueError(f"base_axes: no convolution has {cell}")
    axes, values = dict(cell), _axis_values(dtypes)
    for axis in sorted(CONV_AXES):
        if axis not in axes:
            base = _dtype_base(values["dtype"]) if axis == "dtype" else BASE_AXES[axis]
            order = [base, *(v for v in values[axis] if v != base)]
            axes[axis] = next(v for v in order if channel_choices({**axes, axis: v}))
    return axes


def axes_cases(axes: dict, checks):
    """Convolution cases with exactly these eleven axis values (``axes``: :func:`base_axes`'s), for
    ``checks``: conv_cases narrowed on every axis, a mixed-sign pair at its plainest ((-1, 1), (1,
    -1)), a non-empty batch of :data:`CONSTRUCTED_BATCH` examples, redrawn up to :data:`CELL_TRIES` times until the case's axes are ``axes`` (the last draw
    otherwise)."""
    from hypothesis import strategies as st

    narrowed = conv_cases(
        [axes["dtype"]],
        ranks=(int(axes["rank"]),),
        checks=tuple(checks),
        transposed=axes["transposed"] == "True",
        layouts=(axes["layout"],),
        padding_forms=("int", "per_dim") if axes["padding"] == "per_dim" else (axes["padding"],),
        batches=(0,) if axes["batch"] == "0" else (CONSTRUCTED_BATCH,),
        channel_choices=_gradient_width(axes, channel_choices(axes)),
        strided=axes["stride"] == ">1",
        dilated=axes["dilation"] == ">1",
        least_pad=True,
    )

    @st.composite
    def exact(draw):
        for _ in range(CELL_TRIES):
            case = draw(narrowed)
            if conv_axes(case) == axes:
                break
        return case

    return exact()


def _gradient_width(axes: dict, choices: list) -> list:
    """``choices`` (groups, input, output channels) of a plain pad_crop case narrowed to those with
    8 or more output channels per group where there are some: its input gradient (conv_cases gives it
    a 1-wide kernel there) is a crop_pad convolution contracting the output channels, and takes a
    vector kernel only with a vector's width of them (XLA:CPU's is wrong from 8: 4 or 7 are right)."""
    if axes["padding"] != "pad_crop" or axes["transposed"] == "True":
        return choices
    return [c for c in choices if c[2] // c[0] >= 8] or choices


def _rounds(axis_triple, values, rng) -> list[tuple]:
    """The cells of ``axis_triple`` (a, b, c) in rounds: each round has every (a, b) value pair
    once, in an order drawn from ``rng`` and rotated by one a round (so that cells dealt round-robin
    to the conv units give a pair's rounds to different units: different checks), and c's values
    rotate over the pairs (a Latin square), so that the first rounds reach every pair of the first
    two axes with several values of the third."""
    a, b, c = axis_triple
    pairs_ = list(product(values[a], values[b]))
    thirds = list(values[c])
    rng.shuffle(pairs_)
    rng.shuffle(thirds)
    n = len(pairs_)
    return [
        ((a, pairs_[j][0]), (b, pairs_[j][1]), (c, thirds[(j + r) % len(thirds)]))
        for r in range(len(thirds))
        for j in ((i + r) % n for i in range(n))
    ]


def construction_cells(seed: int, dtypes, count: int) -> list[tuple]:
    """The first ``count`` cells a conv campaign constructs (each ((axis, value), x3)): the
    :data:`DISPATCH_TRIPLES`' cells in rounds (:func:`_rounds`), then the other axis triples' in an
    order drawn from ``seed``, the same for a seed; cells no convolution has left out."""
    rng = random.Random(seed)
    values = _axis_values(dtypes)
    first = [tuple(t) for t in DISPATCH_TRIPLES]
    rest = [t for t in combinations(sorted(CONV_AXES), 3) if not any(set(t) == set(f) for f in first)]
    rng.shuffle(rest)
    out = []
    for axis_triple in first + rest:
        out += [cell for cell in _rounds(axis_triple, values, rng) if channel_choices(dict(cell))]
        if len(out) >= count:
            break
    return out[:count]


def cell_key(cell) -> str:
    """The triple a cell (((axis, value), x3)) is counted as (:func:`triples`' spelling)."""
    return " & ".join(f"{k}={v}" for k, v in sorted(cell))


def _triples_of(case) -> list[str]:
    return triples(conv_axes(case)) if case.op in TRIPLE_OPS else []


class Coverage:
    """Feature and pair counts per record (a campaign's, or measured from results)."""

    def __init__(self):
        self.cases: Counter = Counter()
        self.features: dict[str, Counter] = {}
        self.pairs: dict[str, Counter] = {}
        self.triples: dict[str, Counter] = {}
        self.axes: dict[str, dict[str, Counter]] = {}
        self._memo: dict = {}
        #: how many of its cells a constructing conv strategy has taken (conv_strategy's ``cells``),
        #: and those taken whose example Hypothesis stopped before it was drawn (taken again first)
        self.cells_taken = 0
        self.cells_again: list = []

    def add(self, case) -> None:
        self.add_features(case.op, features(case))
        if case.op in TRIPLE_OPS:
            axes = conv_axes(case)
            for k, v in axes.items():
                self.axes.setdefault(case.op, {}).setdefault(k, Counter())[v] += 1
            self.triples.setdefault(case.op, Counter()).update(triples(axes))

    def snapshot(self):
        """The state steering depends on (counts and remembered choices), to :meth:`restore` later."""
        return (
            Counter(self.cases),
            {k: Counter(v) for k, v in self.features.items()},
            {k: Counter(v) for k, v in self.pairs.items()},
            {k: Counter(v) for k, v in self.triples.items()},
            {op: {k: Counter(v) for k, v in axes.items()} for op, axes in self.axes.items()},
            dict(self._memo),
            self.cells_taken,
            list(self.cells_again),
        )

    def restore(self, state) -> None:
        cases, feats, pairs_, triples_, axes, memo, self.cells_taken, again = state
        self.cells_again = list(again)
        self.cases = Counter(cases)
        self.features = {k: Counter(v) for k, v in feats.items()}
        self.pairs = {k: Counter(v) for k, v in pairs_.items()}
        self.triples = {k: Counter(v) for k, v in triples_.items()}
        self.axes = {op: {k: Counter(v) for k, v in a.items()} for op, a in axes.items()}
        self._memo = dict(memo)

    def add_features(self, op, feats) -> None:
        self.cases[op] += 1
        self.features.setdefault(op, Counter()).update(feats)
        self.pairs.setdefault(op, Counter()).update(pairs(feats))

    def novelty(self, case) -> int:
        """How many of the case's feature pairs (and, for conv, axis triples) have not been drawn
        for its record yet."""
        seen = self.pairs.get(case.op, Counter())
        seen3 = self.triples.get(case.op, Counter())
        return sum(1 for p in pairs(features(case)) if not seen[p]) + sum(
            1 for t in _triples_of(case) if not seen3[t]
        )

    def table(self) -> dict:
        """{record: {cases, features: {f: n}, pairs_drawn, pairs_possible, missing: [pair, ...]}};
        ``pairs_possible``: pairs of features each drawn at least once (not every such pair can
        exist: two dtypes never meet in one case), ``missing``: those never drawn together."""
        out = {}
        for op in sorted(self.cases):
            feats = self.features[op]
            drawn = self.pairs[op]
            # features that exclude each other (two dtypes, two values kinds) never pair up
            possible = [p for p in pairs(feats) if not _exclusive(p)]
            missing = [p for p in possible if not drawn[p]]
            out[op] = {
                "cases": self.cases[op],
                "features": dict(sorted(feats.items())),
                "pairs_drawn": len([p for p in possible if drawn[p]]),
                "pairs_possible": len(possible),
                "missing": missing[:MISSING_SHOWN],
                "missing_count": len(missing),
                "rarest_pairs": [[p, n] for p, n in sorted(drawn.items(), key=lambda kv: (kv[1], kv[0]))[:5]],
            }
            if op in self.triples:
                out[op].update(self._triple_table(op))
            declared = declared_points(op)
            if any(feats[f"dtype={d}"] for d in PART_DTYPE):  # complex cases: the points of the plane
                declared += declared_points(op, plane=True)
            if declared:  # the reach of the record's declared domain points (conformance.ops._domains)
                reached = {r: {c: feats[f"{c}={r}"] for c in CELLS} for r in declared}
                out[op]["points"] = reached
                out[op]["point_cells"] = len(declared) * len(CELLS)
                out[op]["points_unreached"] = [f"{c} {r}" for r, n in reached.items() for c in CELLS if not n[c]]
        return out

    def _triple_table(self, op) -> dict:
        """``triples_drawn``; ``triples_possible``: the triples of axis values each drawn at least
        once (not all can exist: a transposed conv is never depthwise); ``triples_missing``."""
        drawn = self.triples[op]
        values = {k: sorted(c) for k, c in self.axes[op].items()}
        missing, possible = [], 0
        for keys in combinations(sorted(values), 3):
            for combo in product(*(values[k] for k in keys)):
                possible += 1
                t = " & ".join(f"{k}={v}" for k, v in zip(keys, combo))
                if not drawn[t]:
                    missing.append(t)
        return {
            "triples_drawn": len(drawn),
            "triples_possible": possible,
            "triples_missing": missing[:MISSING_SHOWN],
            "triples_missing_count": len(missing),
        }


def _exclusive(pair: str) -> bool:
    """Two values of the same feature key (``dtype=float32 & dtype=float64``) never pair up."""
    a, b = pair.split(" & ")
    ka, kb = _key(a), _key(b)
    return ka is not None and ka == kb


def _key(feature: str):
    for sep in ("!=", "=", "<", ">"):
        if sep in feature:
            return feature.split(sep, 1)[0]
    return None


def coverage_of_results(records) -> Coverage:
    """The coverage of the cases a results file holds (each distinct case once)."""
    cov, seen, ids = Coverage(), set(), set()
    for rec in records:
        raw = rec.get("case")
        cid = rec.get("case_id")
        if not raw or cid in seen or rec.get("phase") == "shrunk":
            continue
        seen.add(cid)
        try:
            case = Case.from_dict(raw)
        except Exception:  # noqa: BLE001 - a result whose case no longer parses has no features
            continue
        # one case per content: its checks are the check it ran for, not part of what was drawn
        key = (case.op, case.id if case.name else case.with_checks(("forward",)).id)
        if key not in ids:
            ids.add(key)
            cov.add(case)
    return cov


# ---- steered generation -------------------------------------------------------------------------


def _in_dims(st, ranks):
    """Per input: None or a dim of the batched array (rank + 1 dims; negative from the end); at
    least one input batched."""

    @st.composite
    def draw_dims(draw):
        dims = [draw(st.one_of(st.none(), st.integers(-(r + 1), r))) for r in ranks]
        if all(d is None for d in dims):
            i = draw(st.integers(0, len(ranks) - 1))
            dims[i] = draw(st.integers(-(ranks[i] + 1), ranks[i]))
        return dims

    return draw_dims()


def record_strategy(
    name,
    dtypes,
    checks,
    coverage: Coverage | None = None,
    tries: int = TRIES,
    whole_domains: bool = False,
    mixed_domains: bool = False,
    point: str | None = None,
    point_kind: str = NEAR,
):
    """Cases of the op record ``name`` for ``checks`` in ``dtypes``: its valid sample (with fuzzed
    ``in_dims`` and ``vmap_size`` for the vmap checks) or, for the ``error`` check, its invalid
    one; steered toward uncovered feature pairs when ``coverage`` is given. ``whole_domains``: the
    inputs are drawn over the record's whole declared domains (``params["domain"] = "whole"``),
    and a record with hard points (of its real domains, or of the complex plane:
    conformance.ops.PLANE_POINTS, drawn so in the complex dtypes) draws the ``near`` kind as often
    as any other kind;
    ``mixed_domains``: one example in :data:`WHOLE_SHARE` of a record with hard points so.
    ``point`` (``<input>:<label>``, one of :func:`declared_points`): every case is drawn over the
    whole domains with that input's elements all around that point, and with ``point_kind="at"``
    its first element on it (the reach sweep, :func:`reach_points`)."""
    from hypothesis import assume
    from hypothesis import strategies as st

    rec = RECORDS[name]
    points = declared_points(name) + declared_points(name, plane=True)
    if point is not None and point not in points:
        raise ValueError(f"record {name!r} declares no domain point {point!r} (its points: {points})")
    if point_kind not in (NEAR, AT):
        raise ValueError(f"record_strategy: point_kind must be {NEAR!r} or {AT!r}, got {point_kind!r}")
    # hard points of the real domains or of the complex plane: their record draws the ``near`` kind
    declared = any(as_domain(d).points for d in rec.domains.values()) or bool(PLANE_POINTS.get(name))
    mixed = mixed_domains and not whole_domains and declared
    checks = tuple(checks)
    if "error" in checks and len(checks) > 1:
        raise ValueError("the error check draws invalid cases: ask for it on its own")
    if "error" in checks and rec.invalid is None:
        raise ValueError(f"the {name} record declares no invalid-input strategy")
    vmapped = bool(set(checks) & set(VMAP_CHECKS))

    @st.composite
    def one(draw):
        params, shapes = draw(rec.invalid() if "error" in checks else rec.sample())
        params = dict(params)
        dtype_choices = list(dtypes)
        if "error" not in checks:  # which spelling rejects what is the primary spelling's record
            params.update(draw(record_spellings(rec)))
            whole = whole_domains or (mixed and draw(st.integers(0, WHOLE_SHARE - 1)) == 0)
            if point is not None:
                params.update({"domain": WHOLE, "values": point_kind, POINT: point})
            elif whole and (rec.domains or declared):
                params["domain"] = WHOLE
                if declared and draw(st.integers(0, 8)) == 0:  # one kind in nine, like the others
                    params["values"] = NEAR
                    # aimed, as the reach sweep's cases are, at one point's cell, or (None) at all
                    aim = draw(st.sampled_from([None, *near_aims(name, params, dtypes)]))
                    if aim is not None:
                        target, kind, dtype_choices = aim
                        params.update({"values": kind, POINT: target})
            # a swept point's input has elements (a seeded draw of a moving point's may be empty)
            assume(point is None or math.prod(shapes[point.split(":", 1)[0]]) > 0)
        if vmapped:
            params["vmap_size"] = draw(st.integers(1, 3))
            params["in_dims"] = draw(_in_dims(st, [len(shapes[n]) for n in rec.inputs]))
        dtype = draw(st.sampled_from(dtype_choices))
        if "error" not in checks:  # a moving point's parameter in the dtype (an overflowing one redrawn)
            params = moving_params_in_dtype(name, params, dtype)
            assume(params is not None)
        return Case(
            name,
            RecordParams.of(params),
            {k: tuple(v) for k, v in shapes.items()},
            dtype,
            draw(st.integers(0, 2**16)),
            checks,
        )

    if coverage is None:
        return one()
    # over the whole domains, the cells of the points the record can reach in these dtypes are
    # steered for first (the reach table's rows: conformance.ops.reached_points' features)
    wanted = (
        {f"{cell}={p}" for p, _, dts in near_aims(name, {}, dtypes) for cell in CELLS}
        if whole_domains or mixed
        else set()
    )
    return _steered(one(), checks, coverage, tries, cells=frozenset(wanted))


def near_aims(op, params, dtypes) -> list[tuple[str, str, tuple]]:
    """What a ``near`` case of ``run --domains whole`` may aim at, as the reach sweep does
    (:func:`reach_points`): ``(point, kind, dtypes)`` for each declared point of record ``op`` and
    kind (``near``: the point's input all around it; ``at``: its first element on it), with the
    dtypes among ``dtypes`` it is drawn in: the real ones for the points of the real domains (a
    moving point only where ``params`` set its parameter), the complex ones for the points of the
    plane (conformance.ops.PLANE_POINTS)."""
    rec = RECORDS[op]
    real = tuple(d for d in dtypes if d not in PART_DTYPE)
    plane = tuple(d for d in dtypes if d in PART_DTYPE)
    points = [
        (f"{name}:{p.label}", real)
        for name, d in rec.domains.items()
        for p in as_domain(d).points
        if real and p.value(params) is not None
    ]
    points += [(p, plane) for p in declared_points(op, plane=True) if plane]
    return [(p, kind, dts) for p, dts in points for kind in (NEAR, AT)]


def _steered(
    one, checks, coverage: Coverage, tries: int, best_of: bool = False, construct=None, cells=frozenset()
):
    """``one`` steered toward what ``coverage`` has not drawn: up to ``tries`` candidates while
    they add nothing new, the one adding most kept, memoised by the first candidate; ``best_of``:
    ``tries`` candidates always, memoised by all of them (Hypothesis varies the later draws of an
    example as often as its first: a memo by the first alone would keep repeating one pick).
    ``construct`` (with ``best_of``): (cells, strategy of a cell): once the first example is drawn,
    each example takes the next of the cells that ``coverage`` has not reached and is drawn from its
    strategy instead, until the cells run out; the decision is memoised by the candidates like a
    pick, so a replay of the same choices constructs the same case (Hypothesis's tree of choices
    requires it), and a cell whose example Hypothesis stopped (its early examples have a size cap)
    is taken again by the next example.
    ``cells``: the reach cells (``at=<input>:<point>`` features) steered for first: while some is
    not drawn yet, candidates are drawn until one reaches one of them (up to ``tries``), and the
    one reaching most of them kept."""
    from hypothesis import strategies as st

    def new_cells(case):
        seen = coverage.features.get(case.op, Counter())
        return sum(1 for f in features(case) if f in cells and not seen[f])

    def wanting(case):
        seen = coverage.features.get(case.op, Counter())
        return coverage.novelty(case) == 0 or (any(not seen[f] for f in cells) and new_cells(case) == 0)

    def next_cell():
        targets, _ = construct
        while coverage.cases["conv"] and (coverage.cells_again or coverage.cells_taken < len(targets)):
            if coverage.cells_again:
                cell = coverage.cells_again.pop(0)
            else:
                cell = targets[coverage.cells_taken]
                coverage.cells_taken += 1
            if not coverage.triples.get("conv", Counter())[cell_key(cell)]:
                return cell
        return None

    def choose(cands, key):
        if key in coverage._memo:  # a replay of the same choices: the same decision
            return cands[coverage._memo[key][1]]
        scores = [(new_cells(c), coverage.novelty(c)) if cells else coverage.novelty(c) for c in cands]
        pick = max(range(len(cands)), key=lambda i: (scores[i], -i))
        coverage._memo[key] = (len(cands), pick)
        coverage.add(cands[pick])
        return cands[pick]

    @st.composite
    def steered(draw):
        if best_of:
            cands = [draw(one) for _ in range(tries)]
            key = (tuple(c.id for c in cands), checks)
            if key in coverage._memo:  # a replay: constructed if the example it replays was
                cell = coverage._memo[key][1]
                return draw(construct[1](cell)) if isinstance(cell, tuple) else choose(cands, key)
            cell = next_cell() if construct else None
            if cell is not None:
                # decided before the drawing, which Hypothesis may abort (an example past its size
                # limit): the same choices, drawn again, construct again
                coverage._memo[key] = (tries, cell)
                try:
                    case = draw(construct[1](cell))
                except BaseException:  # Hypothesis stopped this example: a later one constructs it
                    coverage.cells_again.append(cell)
                    raise
                coverage.add(case)
                return case
            return choose(cands, key)
        first = draw(one)
        key = (first.id, checks)
        if key in coverage._memo:  # a replay: as many candidates as the decision drew
            n, _ = coverage._memo[key]
            return choose([first] + [draw(one) for _ in range(n - 1)], key)
        cands = [first]
        while wanting(cands[-1]) and len(cands) < tries:
            cands.append(draw(one))
        return choose(cands, key)

    strategy = steered()
    strategy.coverage = coverage  # Campaign.fuzz restores it before each framework's shrink
    return strategy


def conv_strategy(dtypes, checks, coverage: Coverage | None = None, tries: int = TRIES, cells=()):
    """Valid convolution cases (conformance.strategies.conv_cases) for ``checks`` in ``dtypes``,
    steered toward undrawn feature pairs and axis triples when ``coverage`` is given; ``cells``
    (with ``coverage``; :func:`construction_cells`): after the first example, one example per cell
    not yet reached is constructed: the cell's three axis values, every other axis at its base
    (:func:`base_axes`, :func:`axes_cases`)."""
    checks = tuple(checks)
    one = conv_cases(list(dtypes), checks=checks)
    if coverage is None:
        return one
    built = {}

    def of_cell(cell):
        if cell not in built:
            built[cell] = axes_cases(base_axes(dict(cell), dtypes), checks)
        return built[cell]

    return _steered(one, checks, coverage, tries, best_of=True, construct=(tuple(cells), of_cell) if cells else None)


def render_rows(table: dict) -> list[dict]:
    """Rows for the HTML report: record, cases, pairs drawn/possible, features, missing pairs."""
    rows = []
    for op, t in table.items():
        rows.append(
            {
                "op": op,
                "cases": t["cases"],
                "pairs": f"{t['pairs_drawn']}/{t['pairs_possible']}",
                "features": ", ".join(f"{f} {n}" for f, n in t["features"].items()),
                "missing": "; ".join(t["missing"]) + (" …" if t["missing_count"] > len(t["missing"]) else ""),
                "triples": f"{t['triples_drawn']}/{t['triples_possible']}" if "triples_drawn" in t else "",
            }
        )
    return rows
