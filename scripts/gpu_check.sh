#!/usr/bin/env bash
# The GPU check, prepared to run once on a lent CUDA machine (docs/gpu.md).
#
#   scripts/gpu_check.sh [--rehearse] [OUTDIR]
#
# On a CUDA machine with PyTorch, JAX and CuPy (no TensorFlow, no network), in well under 8
# minutes by default, it writes everything under OUTDIR (default: $OUT where the device tool sets
# it, else reports/gpu):
#   versions.txt       device, driver, CUDA, cuDNN, framework versions, TF32 settings per framework
#   gpu-tests.log      the `gpu`-marked tests (reference conv paths and Tensor on CuPy)
#   gpu-tests.xml      their JUnit file
#   highest.tar.gz     the GPU campaigns with TF32 off (--precision highest): highest/conv (the conv fuzzer,
#                      every cuDNN/XLA algorithm path it reaches) and highest/records (a sample of op records
#                      across families, and programs), each with results, report.json and HTML
#   default.tar.gz     the same at the frameworks' default precision (TF32 where they use it): default/conv and
#                      default/records over the families where TF32 can act (matrix products, linalg, nn, programs)
#   summary.txt        counts per verdict and the worst ratio per framework, check and dtype, per precision
#   gpu_check.log      this script's own log
# (seven files: the device tool brings back at most eight, two folders deep.)
#
# Each campaign part runs under a time budget (GPU_CHECK_CAMPAIGN_S seconds for conv, default 90, and
# GPU_CHECK_RECORDS_S for the records, default 150, at --precision highest; half of each at default):
# when it runs out the part is interrupted (SIGINT keeps every recorded
# result) and `conformance report` writes the report from what was recorded, so a report is always there.
# The conv fuzzer and the records run as separate parts so that neither budget is spent on the other.
#
# --rehearse runs every step on a machine without a GPU (CI does, tests/test_gpu_check.py): the GPU
# parts say they are skipped for want of a device, the campaigns run on the CPU with a tiny budget,
# so a typo in this script fails in CI and not in the fifteen minutes of a device loan.
#
# Missing Python packages travel as wheels in .whl/ (scripts/gpu_wheels.sh downloads them here);
# they are installed with --no-index into a folder on PYTHONPATH, and the project itself runs from
# this checkout (PYTHONPATH), so nothing needs the network.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

rehearse=0
if [ "${1:-}" = "--rehearse" ]; then rehearse=1; shift; fi
out="${1:-${OUT:-reports/gpu}}"
mkdir -p "$out" || { echo "gpu_check: cannot create the output folder $out" >&2; exit 2; }
out=$(cd "$out" && pwd)
log="$out/gpu_check.log"
: >"$log"
say() { echo "gpu_check: $*" | tee -a "$log" >&2; }

python="${REFGRAD_PYTHON:-}"
if [ -z "$python" ]; then
    if [ -x .venv/bin/python ]; then python=.venv/bin/python; else python=python3; fi
fi
campaign_s="${GPU_CHECK_CAMPAIGN_S:-90}"
records_s="${GPU_CHECK_RECORDS_S:-150}"
examples="${GPU_CHECK_EXAMPLES:-4}"
# A sample of op records across families (two or three each, the GPU kernels users call most), then
# programs (float64 programs on the GPU). They run in this order, so what a budget cuts is the tail:
# on the first run whole families (--ops activations,elementwise,...) left 90 s for two families.
ops="${GPU_CHECK_OPS:-mm,bmm,addmm,baddbmm,linalg_solve,linalg_cholesky_ex,linalg_qr,linalg_svd,linalg_eigh,linalg_det,batch_norm,log_softmax,softmax,avg_pool2d,max_pool2d,upsample_bilinear2d,cumsum,cumprod,logcumsumexp,cummax,sum,mean,var,logsumexp,prod,gelu,hardsigmoid,hardswish,softplus,div,exp,log,pow_tensor,sigmoid,tanh,sqrt,erf,lgamma,digamma,binary_cross_entropy,nll_loss,gather,index_add,scatter_add_dim,cdist,sort,topk,programs}"
# at the frameworks' default precision only the ops where TF32 can act (matrix products inside)
tf32_ops="${GPU_CHECK_TF32_OPS:-mm,bmm,addmm,baddbmm,addmv,linalg_solve,linalg_cholesky_ex,linalg_qr,linalg_svd,linalg_det,batch_norm,cdist,upsample_bilinear2d,programs}"
tests_s="${GPU_CHECK_TESTS_S:-120}"
# every name in the op lists is a record or family (the first run with scatter_add, not a record name,
# lost the whole highest/records part to a usage error on the device): checked here, rehearsal or not
"$python" -c 'import sys; from conformance.cli import UsageError, _list, _op_choices
try:
    for flag, value in zip(sys.argv[1::2], sys.argv[2::2]): _list(flag, value, _op_choices(), [])
except UsageError as exc: sys.exit(str(exc)[:200])' \
    GPU_CHECK_OPS "$ops" GPU_CHECK_TF32_OPS "$tf32_ops" \
    || { echo "gpu_check: an op list names no record (above)" >&2; exit 2; }
if [ "$rehearse" = 1 ]; then
    campaign_s="${GPU_CHECK_CAMPAIGN_S:-40}"
    records_s="${GPU_CHECK_RECORDS_S:-40}"
    examples="${GPU_CHECK_EXAMPLES:-1}"
    ops="${GPU_CHECK_OPS:-gelu,sum,matmul}"
    tf32_ops="${GPU_CHECK_TF32_OPS:-matmul}"
    GPU_CHECK_TEST_WORKERS="${GPU_CHECK_TEST_WORKERS:-0}"  # every gpu test skips here: no xdist start-up
fi

if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
    say "installing the carried wheels: $(ls .whl | tr '\n' ' ')"
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/refgrad-site .whl/*.whl >>"$log" 2>&1 || say "carried wheels did not install (see log)"
    export PYTHONPATH="/tmp/refgrad-site:$repo${PYTHONPATH:+:$PYTHONPATH}"
else
    export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
# two framework workers and the CuPy tests share one GPU: no framework takes most of its memory up front
export XLA_PYTHON_CLIENT_PREALLOCATE=false

# 1. versions and precision settings
"$python" scripts/gpu_versions.py >"$out/versions.txt" 2>>"$log"
cat "$out/versions.txt" | tee -a "$log"
has_cuda=$("$python" -c 'import sys; sys.path.insert(0, "scripts"); import gpu_versions as g; print(int(g.cuda_available()))' 2>>"$log" || echo 0)
device=cuda
frameworks="torch,jax"
if [ "$has_cuda" != 1 ]; then
    if [ "$rehearse" = 1 ]; then
        say "no CUDA device: rehearsal, the GPU parts are skipped for want of a device, campaigns on the CPU"
        device=cpu
        frameworks="torch"
    else
        say "no CUDA device here: nothing to check (use --rehearse to rehearse on a CPU machine)"
        exit 2
    fi
fi

# 2. the gpu-marked tests (on a CPU machine each one skips, saying why). Most of their time is CuPy
# compiling kernels (the first run, serial: 42% of them in 80 s; the op records' comparison calls
# about 550 distinct function/dtype/rank signatures, measured on the strict device): eight xdist
# workers compile in parallel, into one kernel cache
export CUPY_CACHE_DIR="${CUPY_CACHE_DIR:-/tmp/refgrad-cupy-cache}"
workers=()
if "$python" -c "import xdist" 2>/dev/null; then workers=(-n "${GPU_CHECK_TEST_WORKERS:-8}"); fi
say "gpu tests (limit ${tests_s}s, ${workers[*]:-no xdist: one process})"
timeout -s INT "$tests_s" "$python" -m pytest -q -m gpu -p no:cacheprovider ${workers[@]+"${workers[@]}"} \
    --junit-xml "$out/gpu-tests.xml" tests/conv/test_gpu.py tests/autograd/test_gpu_tensor.py \
    tests/conformance/test_gpu_known.py -rs >"$out/gpu-tests.log" 2>&1
tests_rc=$?
tail -3 "$out/gpu-tests.log" | tee -a "$log"
say "gpu tests exit $tests_rc"

# 3. the campaigns: TF32 off, then the frameworks' defaults; each part's report is written whatever happens
part() {  # part PRECISION NAME BUDGET_S ARGS...: one campaign into $out/PRECISION/NAME
    local precision=$1 name=$2 budget=$3 dir="$out/$1/$2"
    shift 3
    mkdir -p "$out/$precision"
    rm -rf "$dir"
    say "campaign $precision/$name on $device ($frameworks; $*; budget ${budget}s)"
    timeout -s INT -k 20 "$budget" "$python" -m conformance run --quiet --device "$device" \
        --precision "$precision" --frameworks "$frameworks" "$@" \
        --dtypes float64,float32,float16,bfloat16 --out "$dir" --found-dir "$dir/found" \
        --known builtin >"$dir.log" 2>&1
    local rc=$?
    tail -4 "$dir.log" | tee -a "$log"
    say "campaign $precision/$name exit $rc (124/130: the budget ran out and the run was interrupted)"
    if [ -s "$dir/results.jsonl" ]; then
        "$python" -m conformance report "$dir" --known builtin >>"$dir.log" 2>&1
        say "report of $precision/$name written (exit $?)"
    else
        say "campaign $precision/$name recorded no result"
    fi
    mv "$dir.log" "$dir/" 2>/dev/null
}
pack() { tar -czf "$out/$1.tar.gz" -C "$out" "$1" && rm -rf "${out:?}/$1"; }
part highest conv "$campaign_s" --ops conv --max-examples "$examples"
part highest records "$records_s" --ops "$ops"
pack highest
part default conv "$(( campaign_s / 2 ))" --ops conv --max-examples "$examples"
part default records "$(( records_s / 2 ))" --ops "$tf32_ops"
pack default

# 4. the summary: verdict counts and worst ratios per precision
"$python" scripts/gpu_versions.py --summary "$out/highest.tar.gz" "$out/default.tar.gz" >"$out/summary.txt" 2>>"$log"
cat "$out/summary.txt" | tee -a "$log"
say "done: $(ls "$out" | tr '\n' ' ')"
