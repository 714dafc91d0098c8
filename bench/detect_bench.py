"""What looking for a local model server costs at start-up (``model_sources.detect``).

Times :func:`shiyi.llm.first_model.pick_main_model` as ``shiyi chat/run/serve`` call it, with
detection on against detection off (the baseline), alternating, in three cases: nothing
listening on the probed ports (the common case), an Ollama-like server answering on one of
them, and a port that accepts connections but never answers (the worst case, bounded by
``detect_timeout``).  Prints medians and p90 in milliseconds.

    python bench/detect_bench.py [--runs 30]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from shiyi.config import load_settings
from shiyi.llm.first_model import pick_main_model

TAGS = {"models": [{"name": "qwen2.5:3b", "details": {"family": "qwen2"}}]}


class _Tags(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        data = json.dumps(TAGS).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def ollama_like() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


def closed_ports(count: int) -> list[int]:
    ports = []
    for _ in range(count):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(int(sock.getsockname()[1]))
    return ports


def timed(detect: bool, ports: list[int], workspace: Path) -> tuple[float, str]:
    os.environ["SHIYI_MODEL_SOURCES__DETECT"] = "true" if detect else "false"
    os.environ["SHIYI_MODEL_SOURCES__DETECT_PORTS"] = json.dumps(ports)
    settings = load_settings(cwd=workspace)
    started = time.perf_counter()
    chosen = pick_main_model(settings)
    elapsed = (time.perf_counter() - started) * 1000
    return elapsed, chosen.settings.model_role("main").provider


def case(name: str, ports: list[int], runs: int, workspace: Path) -> None:
    on: list[float] = []
    off: list[float] = []
    provider = ""
    for _ in range(runs):  # alternate, so machine noise hits both alike
        ms, provider = timed(True, ports, workspace)
        on.append(ms)
        off.append(timed(False, ports, workspace)[0])
    print(
        f"{name:<34} detect on: median {statistics.median(on):6.1f} ms, "
        f"p90 {_p90(on):6.1f} ms | off (baseline): median {statistics.median(off):5.2f} ms"
        f" | picked {provider}"
    )


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * 0.9) - 1)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args(argv)
    runs: int = args.runs
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        os.environ["SHIYI_HOME"] = str(workspace / "home")
        for var in ("SHIYI_CONFIG", "SHIYI_PRESET"):
            os.environ.pop(var, None)
        budget = load_settings(cwd=workspace).model_sources.detect_timeout
        print(
            f"detect_timeout {budget * 1000:.0f} ms; {runs} runs each;"
            f" python {sys.version.split()[0]}"
        )
        case("nothing listening (4 ports)", closed_ports(4), runs, workspace)
        with ollama_like() as port:
            case("Ollama-like on 1 of 4 ports", [*closed_ports(3), port], runs, workspace)
        with silent_port() as quiet, ollama_like() as port:
            few = max(5, runs // 6)
            case("silent port, then Ollama-like", [quiet, *closed_ports(2), port], few, workspace)
            case("Ollama-like, then silent port", [port, quiet, *closed_ports(2)], runs, workspace)


if __name__ == "__main__":
    main()
