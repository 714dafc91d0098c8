"""``python -m shiyi.llm.local.llama_server --model X.gguf``: llama.cpp's own OpenAI-compatible
server (what people run as ``llama-server``), from the prebuilt engine shiyi embeds.

The ``xllamacpp`` wheel carries llama.cpp's server engine with its HTTP listener but no
``llama-server`` executable; this starts it on a host and port of your choosing and serves
until interrupted.  Chat templates are the model's own (Jinja), tool calls and JSON schemas
are llama.cpp's.  The tests that need a real server nobody here wrote run against it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from shiyi.errors import ModelUnavailable
from shiyi.llm.local.xllama import check_gguf, import_runtime


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m shiyi.llm.local.llama_server")
    parser.add_argument("--model", "-m", required=True, help="GGUF chat model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--n_ctx", "--ctx-size", "-c", type=int, default=4096)
    parser.add_argument("--n_threads", "--threads", "-t", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--parallel", "-np", type=int, default=1, help="slots")
    parser.add_argument("--api-key", default="", help="required of clients when set")
    parser.add_argument(
        "--chat-template-file", default="", help="a Jinja chat template instead of the model's"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        xllamacpp = import_runtime()
        check_gguf(Path(args.model))
    except ModelUnavailable as exc:
        sys.exit(str(exc))
    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.hostnames = [args.host]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.n_ctx * args.parallel  # llama-server's -c is per slot here
    params.cpuparams.n_threads = args.n_threads
    params.cpuparams_batch.n_threads = args.n_threads
    if args.chat_template_file:
        params.chat_template = Path(args.chat_template_file).read_text()
    if args.api_key:
        params.api_keys = [args.api_key]
    server = xllamacpp.Server(params)
    print(f"llama.cpp server listening at {server.listening_address}", flush=True)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()


if __name__ == "__main__":
    main()
