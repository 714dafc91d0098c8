"""``python -m shiyi.llm.llama_server --model X.gguf``: llama-cpp-python's OpenAI-compatible
server, with this machine's llama.cpp CPU backend loaded first.

The llama.cpp that ``scripts/install.sh`` builds keeps its CPU code in per-CPU variant
libraries (:mod:`shiyi.llm.llama_backends`); ``python -m llama_cpp.server`` alone would find
none of them and fail with "no backends are loaded".  Every argument is the server's own.
"""

from __future__ import annotations

import runpy

from shiyi.llm.llama_backends import load_cpu_backend


def main() -> None:
    load_cpu_backend()
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
