"""The second-order forward-mode checks of the op records (jvp_jvp, vjp_jvp, jvp_vjp, vmap_jvp_vjp;
docs/conformance.md, "Checks"): the reference's answers agree with finite differences of the forward
in float64 and with closed forms; the frameworks' answers on a sample of records pass; a planted bug
in a derivative rule's own derivative is caught, an exactly right answer rounded differently is not;
the seeds are drawn like inputs and deterministically; the reproducers run."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from conformance.case import Case
from conformance.ops import RECORDS, RecordData, RecordParams, check_arrays
from conformance.ops._run import order_names, reference_expected
from conformance.ops.judge import record_verdict
from reference.errors import Precision

HERE = Path(__file__).resolve().parent
ORDER = ("jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp")


def _case(op, shapes, check, dtype="float64", seed=5, data=None, **params):
    if check == "vmap_jvp_vjp":
        params = {"vmap_size": 2, "in_dims": [0] + [None] * (len(RECORDS[op].inputs) - 1), **params}
    return Case(op, RecordParams.of(params), shapes, dtype, seed, (check,), data=data or {})


def _normal_seeds(case, check, scale=1.0):
    """The check's arrays with normal seeds (finite differences cannot follow 2**255)."""
    a = RecordData(case)
    rng = np.random.default_rng(11)
    return {
        n: (a[n] if n in RECORDS[case.op].inputs else scale * rng.standard_normal(a[n].shape)).tolist()
        for n in check_arrays(case, check)
    }


def _reference(case, check):
    expected, _ = reference_expected(case, check, RecordData(case), Precision(case.dtype))
    return {n: v for n, (v, _) in expected.items()}


# ---- finite differences of the forward (float64) -------------------------------------------------
def _forward(op, params):
    import reference as T

    rec = RECORDS[op]

    def f(xs):
        y = rec.fn(T, *[T.tensor(np.asarray(x, dtype=np.float64)) for x in xs], **params)
        y = y[0] if isinstance(y, (tuple, list)) else y
        return np.asarray(y.detach()._data, dtype=np.float64)

    return f


def _d1(f, xs, u, h=1e-5):
    return (f([x + h * d for x, d in zip(xs, u)]) - f([x - h * d for x, d in zip(xs, u)])) / (2 * h)


def _d2(f, xs, u, v, h=1e-4):
    """d²f[u, v] by the mixed central second difference."""

    def at(a, b):
        return f([x + a * h * du + b * h * dv for x, du, dv in zip(xs, u, v)])

    return (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * h * h)


def _basis(xs, which, index):
    out = [np.zeros_like(x) for x in xs]
    out[which].reshape(-1)[index] = 1.0
    return out


def _fd(case, check, a):
    """The check's results by finite differences of the op's forward (float64)."""
    rec = RECORDS[case.op]
    names, diff = rec.inputs, rec.diff_inputs
    f_all = _forward(
        case.op, {k: v for k, v in case.params.as_dict().items() if k not in ("in_dims", "vmap_size")}
    )

    def on_diff(xs_fixed):
        def f(ps):
            it = iter(ps)
            return f_all([xs_fixed[n] if n not in diff else next(it) for n in names])

        return f

    def jvp_vjp(xs, c, t1, tc):
        f = on_diff(xs)
        ps = [xs[n] for n in diff]
        out = []
        for j, p in enumerate(ps):
            g = np.zeros(p.shape)
            for i in range(p.size):
                e = _basis(ps, j, i)
                g.reshape(-1)[i] = np.sum(c * _d2(f, ps, e, t1)) + np.sum(tc * _d1(f, ps, e))
            out.append(g)
        return out

    xs = {n: np.asarray(a[n]) for n in names}
    if check == "jvp_jvp":
        f, ps = on_diff(xs), [xs[n] for n in diff]
        return [
            _d2(f, ps, [np.asarray(a[f"tan1_{n}"]) for n in diff], [np.asarray(a[f"tan2_{n}"]) for n in diff])
        ]
    if check == "vjp_jvp":
        f, ps = on_diff(xs), [xs[n] for n in diff]
        t1, c = [np.asarray(a[f"tan1_{n}"]) for n in diff], np.asarray(a["cot_output"])
        gx, gt = [], []
        for j, p in enumerate(ps):
            x_, t_ = np.zeros(p.shape), np.zeros(p.shape)
            for i in range(p.size):
                e = _basis(ps, j, i)
                x_.reshape(-1)[i] = np.sum(c * _d2(f, ps, t1, e))
                t_.reshape(-1)[i] = np.sum(c * _d1(f, ps, e))
            gx.append(x_)
            gt.append(t_)
        return gx + gt
    if check == "jvp_vjp":
        return jvp_vjp(
            xs,
            np.asarray(a["cot_output"]),
            [np.asarray(a[f"tan1_{n}"]) for n in diff],
            np.asarray(a["tan_cot_output"]),
        )
    size = case.params.as_dict()["vmap_size"]
    dims = case.params.as_dict()["in_dims"]
    per = []
    for s in range(size):
        xs_s = {
            n: (np.asarray(a[n]) if d is None else np.asarray(a[f"batched_{n}"])[s])
            for n, d in zip(names, dims)
        }
        per.append(
            jvp_vjp(
                xs_s,
                np.asarray(a["batched_cot_output"])[s],
                [np.asarray(a[f"batched_tan1_{n}"])[s] for n in diff],
                np.asarray(a["batched_tan_cot_output"])[s],
            )
        )
    return [np.stack([p[k] for p in per]) for k in range(len(diff))]


FD_CASES = [
    ("exp", {"input": (3,)}),
    ("sin", {"input": (2, 2)}),
    ("mul", {"input": (3,), "other": (3,)}),
    ("tanh", {"input": (3,)}),
    ("div", {"input": (2,), "other": (2,)}),
    ("log_softmax", {"input": (2, 3)}),
]


@pytest.mark.parametrize("check", ORDER)
@pytest.mark.parametrize("op,shapes", FD_CASES)
def test_reference_agrees_with_finite_differences(op, shapes, check):
    params = {"dim": 1} if op == "log_softmax" else {}
    base = _case(op, shapes, check, **params)
    if op == "div":  # keep the divisor away from 0
        data = _normal_seeds(base, check)
        for n in ("other", "batched_other"):
            if n in data:
                data[n] = (np.abs(np.asarray(data[n])) + 1.0).tolist()
        base = _case(op, shapes, check, data=data, **params)
    case = _case(op, shapes, check, data=_normal_seeds(base, check), **params)
    got = _reference(case, check)
    want = _fd(case, check, {n: np.asarray(v) for n, v in case.data.items()})
    assert list(got) == order_names(case, check)[1]
    for name, w in zip(got, want):
        np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6, err_msg=f"{op} {check} {name}")


# ---- closed forms (the default draws: zeros, ±1, integers, tiny, huge seeds) -----------------------
def test_closed_forms_of_second_derivatives():
    for op, d2 in {
        "exp": lambda x, t1, t2: t1 * t2 * np.exp(x),
        "sin": lambda x, t1, t2: -t1 * t2 * np.sin(x),
        "tanh": lambda x, t1, t2: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2) * t1 * t2,
    }.items():
        case = _case(op, {"input": (64,)}, "jvp_jvp", seed=9)
        a = RecordData(case)
        want = d2(a["input"], a["tan1_input"], a["tan2_input"])
        np.testing.assert_allclose(
            _reference(case, "jvp_jvp")["tangent2_output"], want, rtol=1e-13, atol=0, err_msg=op
        )
        case = _case(op, {"input": (64,)}, "jvp_vjp", seed=9)
        a = RecordData(case)
        d1 = {"exp": np.exp, "sin": np.cos, "tanh": lambda x: 1 - np.tanh(x) ** 2}[op](a["input"])
        want = a["cot_output"] * d2(a["input"], a["tan1_input"], 1.0) + a["tan_cot_output"] * d1
        np.testing.assert_allclose(
            _reference(case, "jvp_vjp")["tangent_grad_input"], want, rtol=1e-13, atol=1e-300
        )
    case = _case("mul", {"input": (16,), "other": (16,)}, "vjp_jvp", seed=9)
    a = RecordData(case)
    got = _reference(case, "vjp_jvp")
    c = a["cot_output"]
    for name, want in {
        "g_input": c * a["tan1_other"],
        "g_other": c * a["tan1_input"],
        "g_tan1_input": c * a["other"],
        "g_tan1_other": c * a["input"],
    }.items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)  # one rounding each: exact


def test_seeds_are_drawn_like_inputs_and_deterministic():
    case = _case("exp", {"input": (400,)}, "jvp_vjp", dtype="float32", seed=3)
    a, again = RecordData(case), RecordData(case)
    seeds = np.concatenate([a[n] for n in ("cot_output", "tan1_input", "tan_cot_output")])
    assert np.array_equal(
        seeds, np.concatenate([again[n] for n in ("cot_output", "tan1_input", "tan_cot_output")])
    )
    assert np.any(seeds == 0) and np.any(np.abs(seeds) == 1)
    assert np.any((np.abs(seeds) > 1) & (seeds == np.round(seeds)) & (np.abs(seeds) <= 4))
    assert np.any((seeds != 0) & (np.abs(seeds) < 2.0**-126))  # subnormal in float32
    assert np.any(np.abs(seeds) > 2.0**28)
    assert np.all(np.isfinite(seeds)) and np.all(seeds.astype(np.float32) == seeds)
    other = RecordData(_case("exp", {"input": (400,)}, "jvp_vjp", dtype="float32", seed=4))
    assert not np.array_equal(a["tan1_input"], other["tan1_input"])


def test_records_with_second_order_rules_carry_the_new_checks():
    assert {"jvp_jvp", "vjp_jvp", "jvp_vjp", "vmap_jvp_vjp"} <= set(RECORDS["tanh"].checks)
    assert "jvp_vjp" not in RECORDS["hardsigmoid"].checks  # no vjp_vjp: not differentiated twice
    assert "vmap_jvp_vjp" not in RECORDS["unsafe_split"].checks  # no_vmap
    assert "jvp_jvp" in RECORDS["unsafe_split"].checks


# ---- the frameworks ----------------------------------------------------------------------------------
SAMPLE = [
    ("tanh", {"input": (2, 3)}),
    ("mul", {"input": (3,), "other": (3,)}),
    ("exp", {"input": (4,)}),
    ("sigmoid", {"input": (2, 2)}),
    ("div", {"input": (3,), "other": (3,)}),
    ("matmul", {"input": (2, 3), "other": (3, 2)}),
]
ADAPTERS = {
    "torch": "conformance.adapters.torch_adapter:TorchAdapter",
    "jax": "conformance.adapters.jax_adapter:JaxAdapter",
    "tensorflow": "conformance.adapters.tf_adapter:TensorFlowAdapter",
}


@pytest.fixture(scope="module", params=sorted(ADAPTERS))
def adapter(request):
    from conformance.adapters import load_class

    pytest.importorskip(request.param)
    ad = load_class(ADAPTERS[request.param])()
    return ad, ad.setup()


@pytest.mark.parametrize("check", ORDER)
def test_frameworks_pass_a_sample_of_records(adapter, check):
    from conformance.ops.judge import run_in_process

    ad, settings = adapter
    for op, shapes in SAMPLE:
        if op not in RECORDS or check not in RECORDS[op].checks:
            continue
        for dtype in ("float32", "float64"):
            case = _case(op, shapes, check, dtype=dtype)
            if op == "div":
                data = {n: np.asarray(RecordData(case)[n]) for n in check_arrays(case, check)}
                for n in ("other", "batched_other"):
                    if n in data:
                        data[n] = np.abs(data[n]) + 1.0
                case = _case(op, shapes, check, dtype=dtype, data={k: v.tolist() for k, v in data.items()})
            result = run_in_process(ad, case, check, settings)
            assert result["verdict"] == "pass", (ad.name, op, check, dtype, result)


# ---- a planted bug in a derivative rule's own derivative; a differently rounded right answer --------
@pytest.mark.parametrize("planted", ["TorchLinearisedTanh", "JaxLinearisedTanh"])
def test_a_wrong_second_derivative_is_caught_and_only_there(planted):
    pytest.importorskip("torch" if planted.startswith("Torch") else "jax")
    from conformance.ops.judge import run_in_process

    sys.path.insert(0, str(HERE))
    try:
        import planted_spellings

        ad = getattr(planted_spellings, planted)()
        settings = ad.setup()
        for check in ("forward", "vjp", "jvp", *ORDER):
            case = _case("tanh", {"input": (2, 3)}, check, dtype="float32", seed=2)
            verdict = run_in_process(ad, case, check, settings)["verdict"]
            assert verdict == ("fail" if check in ORDER else "pass"), (planted, check, verdict)
    finally:
        sys.path.remove(str(HERE))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("check", ORDER)
def test_the_exact_answer_rounded_differently_passes(check, dtype):
    """The float64 reference's answer rounded to the dtype, then moved by one ulp either way per
    element (another order of the same operations): within the bound."""
    from conformance.case import round_to_dtype
    from conformance.ops.judge import expected_for, precision_for

    rng = np.random.default_rng(0)
    for op, shapes in SAMPLE[:4]:
        case = _case(op, shapes, check, dtype=dtype, seed=8)
        expected, _ = expected_for(case, check, precision_for(case, {}, "torch"))
        out = {}
        for name, (v, _) in expected.items():
            r = round_to_dtype(v, dtype)
            np_dtype = np.float16 if dtype == "float16" else np.float32
            step = rng.choice([-1, 0, 1], r.shape)
            nudged = np.where(
                step > 0,
                np.nextafter(r.astype(np_dtype), np_dtype(np.inf)),
                np.where(step < 0, np.nextafter(r.astype(np_dtype), np_dtype(-np.inf)), r),
            )
            out[name] = np.where(np.isfinite(r), nudged.astype(np.float64), r)
        verdict = record_verdict(case, check, "torch", out, {})
        assert verdict["verdict"] == "pass", (op, check, dtype, verdict)


# ---- reproducers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("check", ORDER)
def test_reproducers_of_the_new_checks_run(check, tmp_path):
    """The planted bug's script exits 1 on every new check; the stock adapter's script exits 0."""
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    from test_record_reproducers import STOCK, _run

    from conformance.ops.judge import run_in_process
    from conformance.reproducer import reproducer

    sys.path.insert(0, str(HERE))
    try:
        import planted_spellings

        for planted, fw in (("TorchLinearisedTanh", "torch"), ("JaxLinearisedTanh", "jax")):
            ad = getattr(planted_spellings, planted)()
            case = _case("tanh", {"input": (2, 3)}, check, dtype="float32", seed=2)
            result = run_in_process(ad, case, check, ad.setup())
            result = {"case": case.to_dict(), "case_id": case.id, "check": check, "framework": fw, **result}
            for spec, code in ((f"planted_spellings:{planted}", 1), (STOCK[fw], 0)):
                script = tmp_path / f"{fw}-{code}.py"
                script.write_text(reproducer(result, spec))
                proc = _run(script, tmp_path)
                assert proc.returncode == code, (spec, proc.stdout, proc.stderr[-3000:])
    finally:
        sys.path.remove(str(HERE))


@pytest.mark.parametrize("mode", ["tensorflow", "tensorflow:function", "torch:compile"])
def test_reproducers_of_the_new_checks_in_other_modes(mode, tmp_path):
    pytest.importorskip(mode.split(":")[0])
    from test_record_reproducers import _run

    from conformance.adapters import BUILTIN, load_class, mode_specs
    from conformance.ops.judge import run_in_process
    from conformance.reproducer import reproducer

    spec = BUILTIN[mode][1] if mode in BUILTIN else mode_specs()[mode]
    ad = load_class(spec)()
    settings = ad.setup()
    checks = ORDER if mode != "torch:compile" else ("jvp_vjp",)  # a compile per check: one is enough
    for check in checks:
        case = _case("mul", {"input": (3,), "other": (3,)}, check, dtype="float32", seed=4)
        result = run_in_process(ad, case, check, settings)
        assert result["verdict"] == "pass", (mode, check, result)
        result = {"case": case.to_dict(), "case_id": case.id, "check": check, "framework": mode, **result}
        script = tmp_path / f"{check}.py"
        script.write_text(reproducer(result, spec))
        proc = _run(script, tmp_path)
        assert proc.returncode == 0, (mode, check, proc.stdout, proc.stderr[-3000:])
