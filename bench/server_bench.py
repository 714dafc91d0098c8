"""Load test of ``shiyi serve``: N concurrent sessions, each streaming one tool-using run.

    python bench/server_bench.py [--sessions 50]

Starts the server in-process on a free loopback port with a scripted model (a short text and
one cheap ``list_dir`` call, then a final answer) and prints time to first event (p50/p95),
events per second and errors. Targets: zero errors, p95 first event < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from shiyi.config import load_settings
from shiyi.interfaces.server import AgentService, create_app
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call, reply


def scripted_step(request: ScriptedRequest) -> ScriptedReply:
    if request.last.role == "tool":
        return reply("done: the directory is listed")
    return reply("let me look", call("list_dir", path="."))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(home: Path, *, memory: bool) -> tuple[uvicorn.Server, threading.Thread, str]:
    os.environ["SHIYI_HOME"] = str(home)
    workspace = home / "ws"
    workspace.mkdir(parents=True)
    (workspace / "a.txt").write_text("a\n")
    settings = load_settings(cwd=workspace, workspace=workspace)
    port = free_port()
    settings = settings.model_copy(
        update={
            "memory": settings.memory.model_copy(update={"embedder": "none", "enabled": memory}),
            "server": settings.server.model_copy(update={"port": port}),
        }
    )
    model = ScriptedModel([scripted_step], repeat_last=True, chunk_size=16)
    app = create_app(AgentService(settings, model=model))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{port}"


async def one_run(client: httpx.AsyncClient, session_id: str) -> tuple[float, int, str | None]:
    """(seconds to first event, events, error or None)."""
    started = time.perf_counter()
    first = 0.0
    events = 0
    status = ""
    url = f"/v1/sessions/{session_id}/messages"
    async with client.stream("POST", url, json={"text": "list the files"}) as response:
        if response.status_code != 200:
            return 0.0, 0, f"HTTP {response.status_code}"
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            events += 1
            if events == 1:
                first = time.perf_counter() - started
            if '"type":"run_end"' in line:
                status = line
    if '"status":"completed"' not in status:
        return first, events, f"run did not complete: {status[:200]}"
    return first, events, None


async def run_bench(url: str, sessions: int) -> None:
    limits = httpx.Limits(max_connections=sessions + 10)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        ids = [(await client.post("/v1/sessions", json={})).json()["id"] for _ in range(sessions)]
        began = time.perf_counter()
        results = await asyncio.gather(*(one_run(client, i) for i in ids), return_exceptions=True)
        elapsed = time.perf_counter() - began
    report(results, elapsed)


def report(results: list[tuple[float, int, str | None] | BaseException], elapsed: float) -> None:
    firsts = [r[0] * 1000 for r in results if isinstance(r, tuple) and r[2] is None]
    events = sum(r[1] for r in results if isinstance(r, tuple))
    errors = [r if isinstance(r, BaseException) else r[2] for r in results]
    errors = [e for e in errors if e is not None]
    quantiles = statistics.quantiles(firsts, n=100) if len(firsts) > 1 else firsts * 99
    print(f"runs: {len(results)}  wall: {elapsed:.2f}s")
    print(f"first event p50: {statistics.median(firsts):.1f} ms  p95: {quantiles[94]:.1f} ms")
    print(f"events: {events}  events/s: {events / elapsed:.0f}")
    print(f"errors: {len(errors)}")
    for error in errors[:5]:
        print(f"  {error!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--no-memory", action="store_true", help="Serve without memory.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, thread, url = start_server(Path(tmp) / "home", memory=not args.no_memory)
        try:
            asyncio.run(run_bench(url, args.sessions))
        finally:
            server.should_exit = True
            thread.join(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
