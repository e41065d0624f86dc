#!/usr/bin/env bash
# Create (or update) the project's virtualenv in .venv with every framework refgrad fuzzes.
#
# torch==2.13.0 goes in first: on a CPU-only machine any other spec pulls the multi-GB CUDA
# build. Then the project with all extras (torch, tensorflow, jax, ray, bisect: uv, test). Re-running is cheap:
# pip only checks what is already there. Set REFGRAD_VENV to put the virtualenv elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${REFGRAD_VENV:-.venv}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    echo "bootstrap: creating $venv with $($python --version)" >&2
    "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install -q --upgrade pip
"${pip[@]}" install -q "torch==2.13.0"
"${pip[@]}" install -q -e ".[all]"
echo "bootstrap: $venv is ready ($("$venv/bin/python" -c 'import torch, jax, tensorflow as tf; print(f"torch {torch.__version__}, jax {jax.__version__}, tensorflow {tf.__version__}")' 2>/dev/null | tail -1))" >&2
