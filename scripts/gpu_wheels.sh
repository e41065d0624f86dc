#!/usr/bin/env bash
# Download, here, the wheels the GPU check needs on a device machine that has no network
# (scripts/gpu_check.sh installs .whl/*.whl with --no-index). The device image has PyTorch, JAX,
# CuPy, NumPy, SciPy, Hypothesis, Jinja2, ml_dtypes, packaging, threadpoolctl and pytest, but not
# jsonschema (refgrad validates reports and known files with it); Hypothesis is pinned to the
# version the project's tests pin. Device Python: 3.12, x86-64 manylinux (/work/.library/device).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
python="${PYTHON:-python3}"
platforms=()
for n in 2_28 2_27 2_17 2014 1; do
    case $n in 2014|1) platforms+=(--platform "manylinux${n}_x86_64") ;; *) platforms+=(--platform "manylinux_${n}_x86_64") ;; esac
done
"$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d .whl \
    jsonschema jsonschema-specifications referencing rpds-py "hypothesis==6.170.17"
ls .whl
