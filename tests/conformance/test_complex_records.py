"""Complex op records: the gradient conventions of PyTorch, JAX and TensorFlow mapped to the
reference's (PyTorch's) on functions whose Wirtinger derivatives are known in closed form, a planted
conjugation bug caught, a differently rounded complex result within the declared bound accepted, the
complex error bounds, the case format (complex data round trip), the draws and the CLI plumbing."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conformance.case import Case, CaseError, round_to_dtype
from conformance.cli import main
from conformance.ops import RECORDS, RecordData, RecordParams
from conformance.ops.judge import expected_for, precision_for, record_verdict, run_in_process

torch = pytest.importorskip("torch")

Z = np.array([0.3 + 0.7j, -1.2 + 0.4j, 2.0 - 0.5j])
G = np.array([0.5 - 0.25j, 1.0 + 2.0j, -0.75 + 0.1j])
T_ = np.array([0.2 + 1.0j, -0.3 - 0.1j, 1.5 + 0.5j])

# f, d f/dz, d f/d conj(z) (Wirtinger), with each framework's spelling of f
CLOSED_FORMS = {
    "z^2": (lambda m, x: x * x, lambda z: 2 * z, lambda z: 0 * z),
    "conj(z) z": (lambda m, x: m.conj(x) * x, lambda z: np.conj(z), lambda z: z),
    "exp": (lambda m, x: m.exp(x), np.exp, lambda z: 0 * z),
}


def pytorch_vjp(name, z, g):
    """PyTorch's convention: conj(df/dz)·g + (df/d conj z)·conj(g)."""
    _, dz, dzbar = CLOSED_FORMS[name]
    return np.conj(dz(z)) * g + dzbar(z) * np.conj(g)


def pushforward(name, z, t):
    """The JVP (no conjugate): df/dz·t + (df/d conj z)·conj(t)."""
    _, dz, dzbar = CLOSED_FORMS[name]
    return dz(z) * t + dzbar(z) * np.conj(t)


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_jax_mapped_vjp_is_pytorchs_and_its_raw_vjp_is_not(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    from conformance.ops._run import torch_convention_vjp

    f = CLOSED_FORMS[name][0]
    fn = lambda x: f(jnp, x)  # noqa: E731
    (mapped,) = torch_convention_vjp(jax, fn, jnp.asarray(Z))[1](jnp.asarray(G))
    np.testing.assert_allclose(np.asarray(mapped), pytorch_vjp(name, Z, G), rtol=1e-13)
    (raw,) = jax.vjp(fn, jnp.asarray(Z))[1](jnp.asarray(G))
    assert not np.allclose(np.asarray(raw), pytorch_vjp(name, Z, G))  # the mapping is needed
    _, tan = jax.jvp(fn, (jnp.asarray(Z),), (jnp.asarray(T_),))
    np.testing.assert_allclose(np.asarray(tan), pushforward(name, Z, T_), rtol=1e-13)


def test_jax_mapping_of_a_real_loss_is_the_conjugate_of_jax_grad():
    """|z|^2 as a real loss: PyTorch's gradient is 2z, jax.grad's 2 conj(z) (docs/complex.md)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    from conformance.ops._run import torch_convention_vjp

    loss = lambda x: jnp.sum(jnp.abs(x) ** 2)  # noqa: E731
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(jnp.asarray(Z))), 2 * np.conj(Z), rtol=1e-13)
    (mapped,) = torch_convention_vjp(jax, loss, jnp.asarray(Z))[1](jnp.asarray(1.0))
    np.testing.assert_allclose(np.asarray(mapped), 2 * Z, rtol=1e-13)


# each record's VJP (PyTorch's convention) and JVP in closed form: z = input, w = other, g, t
RECORD_CLOSED_FORMS = {
    "exp": (lambda z, w, g: [g * np.conj(np.exp(z))], lambda z, w, tz, tw: np.exp(z) * tz),
    "mul": (lambda z, w, g: [g * np.conj(w), g * np.conj(z)], lambda z, w, tz, tw: tz * w + z * tw),
    "sqrt": (lambda z, w, g: [g * np.conj(0.5 / np.sqrt(z))], lambda z, w, tz, tw: 0.5 / np.sqrt(z) * tz),
    # |z| is not holomorphic: d|z|/dz = conj(z)/(2|z|), d|z|/d conj(z) = z/(2|z|); g is real
    "abs": (lambda z, w, g: [g * z / np.abs(z)], lambda z, w, tz, tw: np.real(np.conj(tz) * z / np.abs(z))),
}


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
@pytest.mark.parametrize("op", sorted(RECORD_CLOSED_FORMS))
def test_each_adapter_answers_the_closed_form_in_pytorchs_convention(framework, op):
    """Through the harness's adapter (JAX's VJP mapped, TensorFlow's GradientTape and PyTorch's taken
    as they are, as measured): the VJP is conj(df/dz)·g + (df/d conj z)·conj(g) and the JVP the
    pushforward df/dz·t + (df/d conj z)·conj(t), on normal complex128 draws (no zeros, no cut)."""
    from conformance.adapters import BUILTIN, load

    pytest.importorskip(BUILTIN[framework][0])
    adapter = load(BUILTIN[framework][1])
    adapter.setup("cpu", "highest")
    vjp_form, jvp_form = RECORD_CLOSED_FORMS[op]
    names = RECORDS[op].inputs
    data = {n: v for n, v in zip(names, (Z, -G))}
    data.update(grad_output=np.abs(G) if op == "abs" else G, tangent_input=T_, tangent_other=T_[::-1].copy())
    case = _case(op, check="vjp", shapes={n: (3,) for n in names})
    got = adapter.run(case, "vjp", data)
    want = vjp_form(data["input"], data.get("other"), data["grad_output"])
    for n, w in zip(names, want):
        np.testing.assert_allclose(np.asarray(got[f"grad_{n}"]), w, rtol=1e-12)
    got = adapter.run(case.with_checks(["jvp"]), "jvp", data)
    want = jvp_form(data["input"], data.get("other"), T_, data["tangent_other"])
    np.testing.assert_allclose(np.asarray(got["tangent_output"]), want, rtol=1e-12)


# ---- the harness on complex record cases ------------------------------------------------------------


def _case(op, dtype="complex128", check="vjp", values="normal", shapes=None, seed=3):
    rec = RECORDS[op]
    return Case(
        op,
        RecordParams.of({"values": values}),
        shapes or {n: (5,) for n in rec.inputs},
        dtype,
        seed,
        (check,),
    )


@pytest.fixture(scope="module")
def torch_adapter():
    from conformance.adapters.torch_adapter import TorchAdapter

    adapter = TorchAdapter()
    adapter.setup("cpu", "highest")
    return adapter


@pytest.mark.parametrize("op, check", [("exp", "vjp"), ("mul", "vjp"), ("log", "vjp"), ("mm", "vjp_vjp")])
def test_torch_passes_and_a_planted_conjugation_bug_fails(torch_adapter, op, check):
    from conformance.adapters.torch_adapter import TorchAdapter

    shapes = {"input": (2, 3), "other": (3, 2)} if op == "mm" else None
    case = _case(op, check=check, shapes=shapes)
    assert run_in_process(torch_adapter, case, check)["verdict"] == "pass"

    class Conjugating(TorchAdapter):  # a framework answering the conjugate of every gradient
        def run(self, case, check, a):
            return {k: np.conj(v) for k, v in super().run(case, check, a).items()}

    planted = Conjugating()
    planted.setup("cpu", "highest")
    got = run_in_process(planted, case, check)
    assert got["verdict"] == "fail", got
    assert got["worst"]["index"][-1] == 1  # the imaginary part (index 1 of the parts axis) is wrong


@pytest.mark.parametrize("op", ["exp", "sqrt", "log"])
def test_jax_unmapped_vjp_is_caught_and_mapped_passes(op):
    """The JAX adapter conjugates cotangents and gradients (the mapping): its vjp passes; the raw
    jax.vjp answer (no mapping) is the conjugate of PyTorch's for a holomorphic op and fails."""
    pytest.importorskip("jax")
    from conformance.adapters.jax_adapter import JaxAdapter

    adapter = JaxAdapter()
    settings = adapter.setup("cpu", "highest")
    case = _case(op)
    assert run_in_process(adapter, case, "vjp", settings)["verdict"] == "pass"
    out = adapter.run(case, "vjp", RecordData(case))
    raw = {
        k: np.conj(np.asarray(v)) for k, v in out.items()
    }  # what jax.vjp(f)(conj(g)) conjugated back is not
    with np.errstate(all="ignore"):
        assert record_verdict(case, "vjp", "jax", raw, settings)["verdict"] == "fail"


def _textbook_mul_f32(a, b):
    """complex64 a*b by the textbook formula in float32 (no FMA): a different rounding than NumPy's."""
    ar, ai = np.float32(a.real), np.float32(a.imag)
    br, bi = np.float32(b.real), np.float32(b.imag)
    return (ar * br - ai * bi).astype(np.float64) + 1j * (ar * bi + ai * br).astype(np.float64)


def _textbook_div_f32(a, b):
    ar, ai = np.float32(a.real), np.float32(a.imag)
    br, bi = np.float32(b.real), np.float32(b.imag)
    den = br * br + bi * bi
    return ((ar * br + ai * bi) / den).astype(np.float64) + 1j * ((ai * br - ar * bi) / den).astype(
        np.float64
    )


@pytest.mark.parametrize("op, kernel", [("mul", _textbook_mul_f32), ("div", _textbook_div_f32)])
def test_a_differently_rounded_result_within_the_bound_passes(op, kernel):
    """The textbook formulas round differently from NumPy's (Smith's division, NumPy's multiply): the
    result is within the declared bound (sqrt(5)u, 7u) and passes; moved by twice its bound it fails."""
    case = _case(op, dtype="complex64", check="forward", shapes={"input": (64,), "other": (64,)}, seed=11)
    data = RecordData(case)
    x, y = data["input"], data["other"]
    ok = np.isfinite(x) & np.isfinite(y) & (np.abs(x) > 1e-30) & (np.abs(y) > 1e-30)
    case = Case(
        op,
        case.params,
        case.shapes,
        case.dtype,
        case.seed,
        case.checks,
        data={
            "input": {"real": np.where(ok, x, 1).real.tolist(), "imag": np.where(ok, x, 1).imag.tolist()},
            "other": {"real": np.where(ok, y, 1).real.tolist(), "imag": np.where(ok, y, 1).imag.tolist()},
        },
    )
    data = RecordData(case)
    with np.errstate(all="ignore"):
        mine = kernel(data["input"], data["other"])
    ours = {"output": mine}
    exact = data["input"] * data["other"] if op == "mul" else data["input"] / data["other"]
    assert np.any(mine != round_to_dtype(exact, "complex64"))  # a different rounding somewhere
    assert record_verdict(case, "forward", "torch", ours, {})["verdict"] == "pass"
    ((value, bound),) = expected_for(case, "forward", precision_for(case, {}, "torch"))[0].values()
    far = {"output": value + 2.5 * bound}
    assert record_verdict(case, "forward", "torch", far, {})["verdict"] == "fail"


def test_complex_bounds_are_the_declared_ones():
    """mul's own error on complex inputs is sqrt(5)·u|y| (Brent-Percival-Zimmermann), not the real
    0.5 ulp (u|y|); a complex matmul's K is sqrt(2)(K + 2)."""
    from reference.errors import REFERENCE_U, Precision, bound_of

    x, y = np.array([1.5 + 2.0j]), np.array([-0.5 + 3.0j])
    _, (b,), _ = bound_of(lambda a, c: a * c, [x, y], Precision(dtype="float32"))
    u = 2.0**-24 + REFERENCE_U
    assert b[0] == pytest.approx(math.sqrt(5) * u * abs(x[0] * y[0]), rel=1e-6)
    a, c = np.ones((1, 4), dtype=np.complex128), np.ones((4, 1), dtype=np.complex128)
    _, (bm,), _ = bound_of(lambda p, q: p @ q, [a, c], Precision(dtype="float32"))
    _, (br,), _ = bound_of(lambda p, q: p @ q, [a.real.copy(), c.real.copy()], Precision(dtype="float32"))
    # (K·u + u)·M + u·|y| with M = |y| = 4: K = 4 real, sqrt(2)·(4 + 2) complex (plus underflow terms)
    assert br[0, 0] == pytest.approx((4 * u + u) * 4 + u * 4, rel=1e-6)
    assert bm[0, 0] == pytest.approx((math.sqrt(2) * 6 * u + u) * 4 + u * 4, rel=1e-6)


# ---- the case format, the draws, the CLI -----------------------------------------------------------


def test_complex_data_round_trips_through_json_exactly():
    z = np.array([-0.0 - 0.0j, complex(np.inf, np.nan), complex(-1.0, -0.0), complex(1e-310, -3.5)])
    from conformance.case import encode_array

    case = Case(
        "exp",
        RecordParams.of({"values": "normal"}),
        {"input": (4,)},
        "complex128",
        0,
        ("forward",),
        data={"input": encode_array(z)},
    )
    back = Case.from_json(case.to_json())
    got = RecordData(back)["input"]
    assert got.dtype == np.complex128
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(z.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(z.imag))
    np.testing.assert_array_equal(
        got.view(np.float64)[~np.isnan(got.view(np.float64))],
        z.view(np.float64)[~np.isnan(z.view(np.float64))],
    )
    assert back.id == case.id


def test_a_complex_case_of_a_real_only_record_is_a_case_error():
    with pytest.raises(CaseError, match="'relu' record is not complex-capable"):
        Case.from_dict(
            {"op": "relu", "shapes": {"input": [3]}, "dtype": "complex128", "params": {"values": "normal"}}
        )
    with pytest.raises(CaseError, match="data.input"):
        Case.from_dict(
            {
                "op": "exp",
                "shapes": {"input": [2]},
                "dtype": "complex64",
                "params": {"values": "normal"},
                "data": {"input": {"real": [1, 2], "imag": [1]}},
            }
        )


def test_complex_draws_reach_the_branch_cut_with_both_zero_signs_and_both_axes():
    zs = np.concatenate(
        [RecordData(_case("log", seed=s, shapes={"input": (64,)}))["input"] for s in range(4)]
    )
    assert zs.dtype == np.complex128
    on_cut = (zs.real < 0) & (zs.imag == 0)
    assert np.any(on_cut & np.signbit(zs.imag)) and np.any(on_cut & ~np.signbit(zs.imag))
    assert np.any((zs.real < 0) & (zs.imag != 0) & (np.abs(zs.imag) < 1e-300))  # just off the cut
    assert np.any((zs.real == 0) & (zs.imag != 0)) and np.any((zs.imag == 0) & (zs.real > 0))
    f32 = RecordData(_case("exp", dtype="complex64", shapes={"input": (64,)}))["input"]
    assert np.array_equal(f32, round_to_dtype(f32, "complex64"))  # each part exact in float32


def test_abs_cotangents_are_real_for_its_real_output():
    data = RecordData(_case("abs"))
    assert np.iscomplexobj(data["input"]) and not np.iscomplexobj(data["grad_output"])


def test_cli_complex_dtypes_of_real_only_records_exit_2_saying_so(tmp_path, capsys):
    code = main(
        [
            "run",
            "--frameworks",
            "torch",
            "--ops",
            "relu",
            "--dtypes",
            "complex128",
            "--max-examples",
            "1",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "nothing selected" in err and "not complex-capable" in err and "relu" in err


def test_cli_runs_complex_records_and_names_the_real_only_ones(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--frameworks",
            "torch",
            "--ops",
            "exp,relu",
            "--dtypes",
            "complex64",
            "--checks",
            "forward,vjp",
            "--max-examples",
            "1",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    assert "not complex-capable" in capsys.readouterr().err
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    judged = [r for r in results if r.get("verdict")]
    assert (
        judged
        and {r["case"]["op"] for r in judged} == {"exp"}
        and {r["dtype"] for r in judged} == {"complex64"}
    )
    assert {r["verdict"] for r in judged} == {"pass"}


def test_reproducer_rebuilds_complex_arrays_and_shows_the_jax_sqrt_branch_cut(tmp_path):
    """A complex case's standalone reproducer: the arrays as complex128 bytes (the -0.0 imaginary part
    kept), JAX's VJP mapped, parts compared: JAX's sqrt of -4 - 0j is +2j (PyTorch, TensorFlow, NumPy
    and the reference: -2j, the side of the cut the zero's sign names), so it exits 1."""
    import subprocess
    import sys

    pytest.importorskip("jax")
    from conformance.case import encode_array
    from conformance.record_reproducer import record_reproducer

    z = np.array([complex(-4, -0.0), complex(-4, 0.0), 1 + 2j])
    codes = {}
    for framework, spec, check in (
        ("jax", "conformance.adapters.jax_adapter:JaxAdapter", "forward"),
        ("jax", "conformance.adapters.jax_adapter:JaxAdapter", "vjp"),
    ):
        op = "sqrt" if check == "forward" else "exp"
        case = Case(op, RecordParams.of({"values": "normal"}), {"input": (3,)}, "complex128", 1, (check,),
                    data={"input": encode_array(z)})  # fmt: skip
        result = {"case": case.to_dict(), "case_id": case.id, "check": check, "framework": framework}
        script = tmp_path / f"{op}_{check}.py"
        script.write_text(record_reproducer(result, spec))
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
        codes[(op, check)] = (proc.returncode, proc.stdout)
    assert codes[("sqrt", "forward")][0] == 1, codes
    assert "observed 2.0, expected -2.0" in codes[("sqrt", "forward")][1]
    assert codes[("exp", "vjp")][0] == 0, codes  # the mapped VJP is PyTorch's


# ---- second slice: reference spellings at the edges, conventions of the new families ----------------


def _with_data(case, **arrays):
    """``case`` with complex data of its inputs given ({name: complex array})."""
    return Case(
        case.op,
        case.params,
        {n: np.shape(v) for n, v in arrays.items()},
        case.dtype,
        case.seed,
        case.checks,
        data={n: {"real": np.real(v).tolist(), "imag": np.imag(v).tolist()} for n, v in arrays.items()},
    )


def test_reciprocal_of_complex_zero_is_torchs_infinity(torch_adapter):
    """torch.reciprocal(0j) is inf+nanj (an infinity); the record's reference spelling 1.0 / x of a
    complex tensor is reciprocal() * (1 + 0j) in PyTorch, which makes nan+nanj: the reference must
    compute reciprocal itself on complex tensors, so torch passes at 0 (it failed before)."""
    z = np.array([0j, complex(-0.0, 0.0), complex(0.0, -0.0), 2 - 1j])
    case = _with_data(_case("reciprocal", check="forward"), input=z)
    got = run_in_process(torch_adapter, case, "forward")
    assert got["verdict"] == "pass", got


def test_inplace_abs_of_complex_is_refused_like_torch_and_reported_unsupported(torch_adapter):
    """PyTorch refuses Tensor.abs_ of a complex tensor (its result is real); the reference raises the
    same error, and the harness reports the Tensor.abs_ spelling of a complex case unsupported, with
    torch's reason (it was an error_mismatch)."""
    import reference as T

    for m in (T, torch):
        with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors"):
            m.tensor([1 + 1j]).abs_()
    assert float(T.tensor([-2.0]).abs_()[0]) == 2.0
    case = Case(
        "abs",
        RecordParams.of({"values": "normal", "spelling_torch": "Tensor.abs_"}),
        {"input": (3,)},
        "complex128",
        1,
        ("vjp",),
    )
    got = run_in_process(torch_adapter, case, "vjp")
    assert got["verdict"] == "unsupported", got
    assert "In-place abs is not supported" in got["reason"]


def test_nonfinite_classes_chosen_by_the_arithmetic_are_the_convention_and_others_fail():
    """1 / (inf + nan j): the reference (PyTorch, NumPy: textbook division) gives nan + nan j, C99
    Annex G's recovery (JAX) 0, a framework answering inf + 0j another infinity class: those elements
    are the complex non-finite convention. A NaN answered at a finite element, or a finite element
    outside its bound, fails (both were plain failures before the convention was declared)."""
    z = np.array([complex(np.inf, np.nan), complex(0.0, -0.0), 2 - 1j])
    case = _with_data(_case("reciprocal", check="forward"), input=z)
    ((value, _),) = expected_for(case, "forward", precision_for(case, {}, "jax"))[0].values()
    assert np.isnan(value[0].real) and np.isinf(value[1].real)  # nan+nanj and inf+nanj
    annex_g = value.copy()
    annex_g[0], annex_g[1] = 0.0, complex(np.inf, 0.0)  # recovered zero; the infinity's other parts
    got = record_verdict(case, "forward", "jax", {"output": annex_g}, {})
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "complex-nonfinite-arithmetic"
    nan_at_finite = value.copy()
    nan_at_finite[2] = complex(np.nan, np.nan)
    assert record_verdict(case, "forward", "jax", {"output": nan_at_finite}, {})["verdict"] == "fail"
    off = annex_g.copy()
    off[2] *= 1 + 1e-6
    assert record_verdict(case, "forward", "jax", {"output": off}, {})["verdict"] == "fail"
    # a NaN answered for the reference's infinity is the convention too (inf * 0 in another order)
    swapped = value.copy()
    swapped[1] = complex(np.nan, np.nan)
    assert record_verdict(case, "forward", "jax", {"output": swapped}, {})["verdict"] == "convention"


def test_a_failure_beside_the_nonfinite_convention_is_named_by_what_the_convention_leaves():
    """A result with an element the complex non-finite convention decides (JAX's 0 for the
    reference's nan at an infinite input) and one it does not (nan where the reference is finite)
    fails, and its worst element, reason and count name the undecided one: known entries match a
    result by that reason (log-4b50c69f1d19: '=0.0 but reference says nan' hid JAX's nan at a tiny
    modulus, whose entry then matched nothing). Before, the decided element came first."""
    z = np.array([complex(np.inf, np.nan), 2 - 1j, 0.5 + 0j])
    case = _with_data(_case("reciprocal", check="forward"), input=z)
    ((value, _),) = expected_for(case, "forward", precision_for(case, {}, "jax"))[0].values()
    assert np.isnan(value[0].real)
    out = value.copy()
    out[0] = 0.0  # decided by the convention (Annex G's recovery)
    out[1] = complex(np.nan, np.nan)  # not decided: a NaN for a finite value
    got = record_verdict(case, "forward", "jax", {"output": out}, {})
    assert got["verdict"] == "fail", got
    assert got["worst"]["index"][0] == 1, got["worst"]
    assert got["reason"].startswith("output[1,0]=nan but reference says"), got["reason"]
    assert got["failing_elements"] == 2  # the two parts of element 1, not element 0's
    # the control: without the undecided element the result is the convention
    out[1] = value[1]
    assert record_verdict(case, "forward", "jax", {"output": out}, {})["verdict"] == "convention"


def test_the_declared_conventions_judge_complex_cases_too():
    """angle's derivative is unbounded at z = 0 (1/|z|): the reference's second order there is nan
    (PyTorch's chain rule, 0 * inf), TensorFlow's 0 (its zero seed wins): the convention
    `zero-seed-at-an-unbounded-derivative`, which complex cases were not judged by (a fail before).
    A value that is neither, at z = 0 or at a finite element, still fails."""
    case = _with_data(
        _case("angle", check="vjp_jvp"),
        input=np.array([0j, 1 + 1j]),
        tan1_input=np.array([1j, 1 + 0j]),
        cot_output=np.array([1.0, 2.0]),
    )
    expected = expected_for(case, "vjp_jvp", precision_for(case, {}, "tensorflow"))[0]
    assert np.isnan(expected["g_input"][0][0]) and np.isnan(expected["g_tan1_input"][0][0])

    def judged(g_input, g_tan1_input):
        outputs = {"g_input": np.array(g_input), "g_tan1_input": np.array(g_tan1_input)}
        return record_verdict(case, "vjp_jvp", "tensorflow", outputs, {})

    # at 1 + 1j, Im(t / z)'s VJP is conj(-t / z^2) c i = 1 (z) and conj(1 / z) c i = -1 + 1j (t)
    got = judged([0j, 1 + 0j], [0j, -1 + 1j])
    assert got["verdict"] == "convention", got
    assert got["conventions"][0]["name"] == "zero-seed-at-an-unbounded-derivative"
    assert judged([1 + 0j, 1 + 0j], [0j, -1 + 1j])["verdict"] == "fail"
    assert judged([0j, 1.001 + 0j], [0j, -1 + 1j])["verdict"] == "fail"
    nan = complex(np.nan, np.nan)
    assert judged([nan, 1 + 0j], [nan, -1 + 1j])["verdict"] == "pass"  # the reference's own


# ---- each new family's convention, through each adapter, on closed-form Wirtinger derivatives ------

_A = np.array(
    [[1.0 + 0.5j, -0.3 + 0.2j, 0.4 - 0.1j], [0.2 - 0.7j, 1.5 + 0.1j, -0.6j], [0.3j, 0.5 + 0.5j, 2.0]]
)
_TA = np.array([[0.1 - 0.2j, 0.3, -0.5j], [0.2 + 0.1j, -0.4 + 0.3j, 0.1], [0.6, 0.2j, -0.1 - 0.1j]])
_M1, _M2 = _A[:2], _A[:, :2].copy()


def _holomorphic(dz, g, t):
    """VJP conj(f')·g and JVP f'·t of an elementwise holomorphic f with derivative dz."""
    return {"input": np.conj(dz) * g}, dz * t


#: op -> (params, inputs, cotangent, tangents, VJP {input: gradient}, JVP), all in closed form:
#: PyTorch's VJP conj(df/dz)·g + (df/d conj z)·conj(g) summed over outputs, the JVP
#: df/dz·t + (df/d conj z)·conj(t)
def _family_forms():
    z, g, t = Z, G, T_
    zc = z - z.mean()
    norm = np.sqrt(np.sum(np.abs(z) ** 2))
    s = z / np.abs(z)
    det = np.linalg.det(_A)
    inv_t = np.linalg.inv(_A).T
    return {
        # elementwise holomorphic: tan' = 1/cos^2
        "tan": ({}, {"input": z}, g, {"input": t}, *_holomorphic(1 / np.cos(z) ** 2, g, t)),
        # not holomorphic: d sgn/dz = 1/(2|z|), d sgn/d conj z = -sgn^2/(2|z|)
        "sgn": (
            {},
            {"input": z},
            g,
            {"input": t},
            {"input": (g - s * s * np.conj(g)) / (2 * np.abs(z))},
            (t - s * s * np.conj(t)) / (2 * np.abs(z)),
        ),
        # a reduction, holomorphic: d prod/dz_i = prod / z_i
        "prod": (
            {},
            {"input": z},
            g[0],
            {"input": t},
            {"input": g[0] * np.conj(z.prod() / z)},
            np.sum(z.prod() / z * t),
        ),
        # a scan, linear: the VJP sums the cotangents of the later outputs
        "cumsum": (
            {"dim": 0},
            {"input": z},
            g,
            {"input": t},
            {"input": np.cumsum(g[::-1])[::-1]},
            np.cumsum(t),
        ),
        # real results of complex input: d var/d conj z_i = (z_i - mean)/(N - c), g real
        "var": (
            {"dim": [0], "keepdim": False, "correction": 1},
            {"input": z},
            0.75,
            {"input": t},
            {"input": 2 * 0.75 * zc / 2},
            2 * np.real(np.sum(np.conj(zc) * t)) / 2,
        ),
        "linalg_vector_norm": (
            {"ord": 2, "dim": [0], "keepdim": False},
            {"input": z},
            0.75,
            {"input": t},
            {"input": 0.75 * z / norm},
            np.real(np.sum(np.conj(z) * t)) / norm,
        ),
        # products: holomorphic bilinear (A^H, B^H in the VJP), vdot conjugates its first operand
        "addmm": (
            {"beta": 0.5, "alpha": 2.0},
            {"input": _A[:2, :2], "mat1": _M1, "mat2": _M2},
            _TA[:2, :2],
            {"input": _TA[1:, 1:], "mat1": _TA[:2], "mat2": _TA[:, :2]},
            {
                "input": 0.5 * _TA[:2, :2],
                "mat1": 2 * _TA[:2, :2] @ _M2.conj().T,
                "mat2": 2 * _M1.conj().T @ _TA[:2, :2],
            },
            0.5 * _TA[1:, 1:] + 2 * (_TA[:2] @ _M2 + _M1 @ _TA[:, :2]),
        ),
        "vdot": (
            {},
            {"input": z, "other": t},
            g[1],
            {"input": g, "other": z},
            {"input": t * np.conj(g[1]), "other": z * g[1]},
            np.sum(np.conj(g) * t + np.conj(z) * z),
        ),
        # linear algebra, holomorphic: d det/dA = det A^{-T}
        "linalg_det": (
            {},
            {"input": _A},
            g[2],
            {"input": _TA},
            {"input": g[2] * np.conj(det * inv_t)},
            det * np.trace(np.linalg.inv(_A) @ _TA),
        ),
    }


def closed_form_answers(framework, op, params, inputs, g, tangents):
    """The adapter's VJP (cotangent ``g``) and JVP (``tangents``) outputs for one complex128 case of
    ``op`` with ``params`` on ``inputs``."""
    from conformance.adapters import BUILTIN, load

    adapter = load(BUILTIN[framework][1])
    adapter.setup("cpu", "highest")
    data = dict(inputs, grad_output=np.asarray(g))
    data.update({f"tangent_{n}": v for n, v in tangents.items()})
    case = Case(
        op,
        RecordParams.of({"values": "normal", **params}),
        {n: np.shape(v) for n, v in inputs.items()},
        "complex128",
        0,
        ("vjp",),
    )
    return adapter.run(case, "vjp", data), adapter.run(case.with_checks(["jvp"]), "jvp", data)


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
@pytest.mark.parametrize(
    "op", ["tan", "sgn", "prod", "cumsum", "var", "linalg_vector_norm", "addmm", "vdot", "linalg_det"]
)
def test_each_new_family_answers_its_closed_form_in_pytorchs_convention(framework, op):
    """One record of each family the second slice made complex-capable, through the harness's adapter:
    its VJP and JVP are the closed forms (holomorphic, non-holomorphic, real-valued). JAX's sgn and
    TensorFlow's det VJP are their known departures (jax-sign-of-complex-has-a-zero-derivative: a
    zero derivative; tf-det-complex-gradient-not-conjugated: g det A^-H)."""
    from conformance.adapters import BUILTIN

    pytest.importorskip(BUILTIN[framework][0])
    params, inputs, g, tangents, vjp, jvp = _family_forms()[op]
    got, jgot = closed_form_answers(framework, op, params, inputs, g, tangents)
    if framework == "jax" and op == "sgn":
        assert np.all(np.asarray(got["grad_input"]) == 0) and np.all(np.asarray(jgot["tangent_output"]) == 0)
        return
    if framework == "tensorflow" and op == "linalg_det":  # tf-det-complex-gradient-not-conjugated
        unconjugated = g * np.linalg.det(_A) * np.linalg.inv(_A).conj().T
        np.testing.assert_allclose(np.asarray(got["grad_input"]), unconjugated, rtol=1e-12)
        # ForwardAccumulator transposes that VJP twice: conj(det) tr(A^-1 tA), not det tr(A^-1 tA)
        forward = np.conj(np.linalg.det(_A)) * np.trace(np.linalg.inv(_A) @ _TA)
        np.testing.assert_allclose(np.asarray(jgot["tangent_output"]), forward, rtol=1e-12)
        return
    for n, want in vjp.items():
        np.testing.assert_allclose(np.asarray(got[f"grad_{n}"]), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(jgot["tangent_output"]), jvp, rtol=1e-12, atol=1e-14)


def test_sgn_of_complex_has_its_declared_bound():
    """sgn z = z/|z| on complex arrays: hypot's 2u and a division per part, 3u (it was the real
    declaration's u, one correctly rounded division, which TensorFlow's complex64 z/|z| exceeds)."""
    import reference as T
    from reference.errors import REFERENCE_U, Precision, bound_of

    _, (b,), tr = bound_of(lambda a: T.sgn(a), [np.array([1.5 + 2.0j])], Precision(dtype="float32"))
    assert b[0] == pytest.approx(3 * (2.0**-24 + REFERENCE_U), rel=1e-6)
    assert "sgn (complex)" in tr.used


@pytest.mark.parametrize(
    "dtype, z",
    [("complex64", 1.5449033 + 0.5190079j), ("complex128", -0.12491490957621508 - 1.7596268434293396j)],
)
def test_complex_tan_declares_tanhs_error_which_torch_needs(dtype, z):
    """tan z = -i tanh(iz) (glibc's ctan is ctanh's algorithm): 12u, as tanh. PyTorch's complex tan is
    5.36u (complex64) and 4.24u (complex128) off at these points, normwise (mpmath): the real
    declaration it kept before (1 ulp: 2u) did not hold, and the derivatives' 1 + tan^2 carried that
    (first-order ratios 1.02-1.29 of --domains whole, tan-de7630c5905f, tan-85769dc5e243)."""
    import mpmath

    import reference as T
    from reference.errors import REFERENCE_U, Precision, bound_of

    part = {"complex64": "float32", "complex128": "float64"}[dtype]
    u = float(np.finfo(part).eps) / 2
    x = np.array([z], dtype=dtype)
    mpmath.mp.prec = 120
    exact = complex(mpmath.tan(mpmath.mpc(float(x[0].real), float(x[0].imag))))
    got = complex(torch.tan(torch.tensor(x)).numpy()[0])
    assert 2 * u * abs(exact) < abs(got - exact) <= 12 * u * abs(exact)
    _, (b,), tr = bound_of(lambda a: T.tan(a), [x.astype(np.complex128)], Precision(dtype=part))
    assert b[0] == pytest.approx(12 * (u + REFERENCE_U) * abs(exact), rel=1e-6)
    assert "tan (complex)" in tr.used


@pytest.mark.parametrize("op, base", [("log10", 10.0), ("log2", 2.0)])
def test_log10_and_log2_of_complex_carry_logs_absolute_term(op, base):
    """log_b z = log z / log b on complex arrays: log's 2u absolute (|z|'s rounding) over log b, and
    4u + u relative (the real declaration, 4u relative, missed the absolute term)."""
    import reference as T
    from reference.errors import REFERENCE_U, Precision, bound_of

    z = np.array([0.9 + 0.6j])
    (v,), (b,), tr = bound_of(lambda a: getattr(T, op)(a), [z], Precision(dtype="float32"))
    u = 2.0**-24 + REFERENCE_U
    assert b[0] == pytest.approx(5 * u * abs(v[0]) + 2 * u / math.log(base), rel=1e-6)
    assert f"{op} (complex)" in tr.used


def test_tensorflows_complex64_log10_near_the_unit_circle_is_within_the_bound_and_a_wrong_one_is_not():
    """TensorFlow 2.21's complex64 log10 (a full vector packet) at z = 1.1714098 + 0.27086326i has real
    part 0.08001929 where log10|z| = 0.080019253 (4.66 ulps: 1.54 times the real declaration's bound,
    log10-8dc2c59532fd); log's absolute term accepts it, and an answer 4 bounds away fails."""
    case = _case("log10", dtype="complex64", check="forward", shapes={"input": (1,)})
    case = Case(case.op, case.params, case.shapes, case.dtype, case.seed, case.checks,
                data={"input": {"real": [1.1714098453521729], "imag": [0.27086326479911804]}})  # fmt: skip
    ((value, bound),) = expected_for(case, "forward", precision_for(case, {}, "tensorflow"))[0].values()
    tf_answer = complex(0.08001928776502609, float(np.float32(value[0].imag)))
    assert record_verdict(case, "forward", "tensorflow", {"output": np.array([tf_answer])}, {})["verdict"] == "pass"
    far = {"output": value + 4 * bound}
    assert record_verdict(case, "forward", "tensorflow", far, {})["verdict"] == "fail"


def test_a_real_operand_promoted_to_complex_keeps_its_bound():
    """cat (and every op whose operands are promoted) of a complex tensor and a real one with an error:
    the real one's bound survives the promotion (the promoted copy had no bound, found by memory, so
    the singular values in linalg_svd's program cat([U^2 S, S, U Vh]) were judged against 0 and
    complex64 results 1.6 ulps off failed)."""
    import reference as T
    from reference.errors import Precision, bound_of

    x, z = np.array([0.5, 1.5]), np.array([1.0 + 2.0j])
    _, (alone,), _ = bound_of(lambda a: T.exp(a), [x], Precision(dtype="float32"))
    _, (joined,), _ = bound_of(lambda a, b: T.cat([b, T.exp(a)]), [x, z], Precision(dtype="float32"))
    assert np.all(alone > 0)
    np.testing.assert_array_equal(joined[1:], alone)
    _, (summed,), _ = bound_of(lambda a, b: b + T.exp(a), [x, z], Precision(dtype="float32"))
    assert np.all(summed >= alone)


def test_cli_real_dtypes_of_complex_only_records_exit_2_saying_so(tmp_path, capsys):
    """The transforms run in the complex dtypes only: real --dtypes (the default) select nothing of
    them, and the error says so and how to ask for them."""
    code = main(
        [
            "run",
            "--frameworks",
            "torch",
            "--ops",
            "fft",
            "--max-examples",
            "1",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "nothing selected" in err and "run in the complex dtypes only" in err
    assert "fft, ifft" in err and "--dtypes complex64,complex128" in err


# the records complex8 made complex-capable: linear maps with real coefficients (VJP the plain
# transpose, JVP the map itself); duplicates and overlaps must add, complex values must not be
# truncated to their real parts on the way
_IDX = [0, 2, 0]
_ZI = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])
_GI = np.array([0.5 - 1j, 2 + 0.5j, -1 + 3j])
_VI = np.array([-2 + 1j, 0.75 - 0.5j, 1.5 + 2j])
_UNFOLDED = np.array([[0, 1], [1, 2]])  # windows of size 2, step 1 over 3 elements


def _scatter_add_at(base, index, values):
    out = np.array(base, dtype=complex)
    np.add.at(out, index, values)
    return out


_LINEAR_FORMS = {
    # x.index_put((index,), v, accumulate=True): grad_x = g, grad_v = g[index]; JVP t_x + scatter_add(t_v)
    "index_put": (
        {"index": _IDX, "accumulate": True},
        {"input": _ZI, "values_in": _VI},
        _GI,
        {"input": _GI[::-1].copy(), "values_in": _ZI},
        {"input": _GI, "values_in": _GI[_IDX]},
        _scatter_add_at(_GI[::-1], _IDX, _ZI),
    ),
    # torch.take with a duplicate: grad_x adds the duplicate's cotangents
    "take": (
        {"index": _IDX},
        {"input": _ZI},
        _VI,
        {"input": _GI},
        {"input": _scatter_add_at(np.zeros(3), _IDX, _VI)},
        _GI[_IDX],
    ),
    # x.unfold(0, 2, 1): overlapping windows, the middle element's cotangent is the sum of two
    "unfold": (
        {"dim": 0, "size": 2, "step": 1},
        {"input": _ZI},
        _GI[:2, None] * np.array([1, 1j]),
        {"input": _VI},
        {"input": _scatter_add_at(np.zeros(3), _UNFOLDED.ravel(), (_GI[:2, None] * np.array([1, 1j])).ravel())},
        _VI[_UNFOLDED],
    ),
}


@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
@pytest.mark.parametrize("op", sorted(_LINEAR_FORMS))
def test_the_indexing_records_made_complex_answer_their_closed_forms(framework, op):
    """index_put (accumulate), take (a duplicate index) and unfold (overlapping windows) of complex128
    inputs through each adapter that spells them: the VJP is the transpose (duplicates and overlaps
    add, both parts kept) and the JVP the map itself."""
    from conformance.adapters import BUILTIN

    pytest.importorskip(BUILTIN[framework][0])
    spelling = RECORDS[op].spelling(framework)
    if isinstance(spelling, str):
        pytest.skip(f"{op} is not spelled on {framework}: {spelling}")
    params, inputs, g, tangents, vjp, jvp = _LINEAR_FORMS[op]
    got, jgot = closed_form_answers(framework, op, params, inputs, g, tangents)
    for n, want in vjp.items():
        np.testing.assert_allclose(np.asarray(got[f"grad_{n}"]), want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.asarray(jgot["tangent_output"]), jvp, rtol=1e-15, atol=0)


_SCATTER_PARAMS = {
    "select_scatter": ({"dim": 0, "index": 1}, {"input": (3, 2), "src": (2,)}),
    "slice_scatter": ({"dim": 0, "start": 0, "end": 2, "step": 1}, {"input": (3, 2), "src": (2, 2)}),
}


@pytest.mark.parametrize("op", sorted(_SCATTER_PARAMS))
def test_torchs_refusal_to_differentiate_complex_scatters_is_unsupported_with_its_words(torch_adapter, op):
    """torch.select_scatter / slice_scatter of complex tensors that require grad raise in PyTorch's
    autograd ('... does not support automatic differentiation for outputs with complex dtype.'): the
    torch spelling reports those checks unsupported in those words (they were error_mismatch); where
    PyTorch computes (values, vmap, forward over forward) the case is judged, and passes."""
    import torch

    params, shapes = _SCATTER_PARAMS[op]
    x = torch.zeros(shapes["input"], dtype=torch.complex128, requires_grad=True)
    with pytest.raises(RuntimeError, match=f"{op} does not support automatic differentiation"):
        getattr(torch, op)(x, torch.zeros(shapes["src"], dtype=torch.complex128), **params)

    def case(dtype, check):
        return Case(op, RecordParams.of({"values": "normal", **params}), shapes, dtype, 1, (check,))

    for check in ("vjp", "jvp", "vjp_vjp"):
        got = run_in_process(torch_adapter, case("complex128", check), check)
        assert got["verdict"] == "unsupported", got
        assert f"'{op} does not support automatic differentiation for outputs with complex dtype.'" in got["reason"]
    for check in ("forward", "vmap", "jvp_jvp"):
        assert run_in_process(torch_adapter, case("complex128", check), check)["verdict"] == "pass"
    assert run_in_process(torch_adapter, case("float64", "vjp"), "vjp")["verdict"] == "pass"


def test_jaxs_complex_abs_second_derivative_at_the_origin_is_a_declared_convention():
    """At z = 0 |z|'s second derivatives are unbounded: PyTorch's sgn(0) = 0 makes them 0, JAX's
    those of |z|^2/2 (forward over reverse c·t: abs-7a62437673d4, 1.7816 - 0.4451i where 0). Judged
    'convention' (abs-gradient-at-zero's complex alternative); a value that is neither still fails."""
    pytest.importorskip("jax")
    from conformance.adapters.jax_adapter import JaxAdapter

    adapter = JaxAdapter()
    settings = adapter.setup("cpu", "highest")
    z = np.array([0j, 1.5 - 0.5j, -2j])
    t = np.array([-1.1342833307889715 + 0.2833976333804489j, 1j, 0.5 + 0j])
    parts = lambda a: {"real": a.real.tolist(), "imag": a.imag.tolist()}  # noqa: E731
    case = Case("abs", RecordParams.of({"values": "normal"}), {"input": (3,)}, "complex128", 3, ("vjp_jvp",),
                data={"input": parts(z), "tan1_input": parts(t), "cot_output": [-1.570712008885673, 0.5, 2.0]})  # fmt: skip
    got = run_in_process(adapter, case, "vjp_jvp", settings)
    assert got["verdict"] == "convention" and "abs-gradient-at-zero" in got["reason"], got
    answers = adapter.run(case, "vjp_jvp", RecordData(case))
    out = {k: np.array(v, dtype=np.complex128) for k, v in answers.items()}
    assert abs(out["g_input"][0]) > 0  # JAX's c·t, where the reference says 0
    out["g_input"][0] *= 2
    assert record_verdict(case, "vjp_jvp", "jax", out, settings)["verdict"] == "fail"
