"""Load test of ``shiyi serve``: N concurrent sessions, each streaming one tool-using run.

    python bench/server_bench.py [--sessions 50] [--no-memory] [--in-process]

Starts the server on a free loopback port with a scripted model (a short text and one cheap
``list_dir`` call, then a final answer) in its own process (``--in-process``: in a thread of
the load generator, sharing its GIL), opens N sessions, sends one message to each at once and
prints time to the first event (``routed``) and to ``run_start`` (p50/p95), events per second
and errors. Targets: zero errors, p95 first event < 100 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


def make_server(home: Path, port: int, *, memory: bool) -> uvicorn.Server:
    os.environ["SHIYI_HOME"] = str(home)
    workspace = home / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "a.txt").write_text("a\n")
    settings = load_settings(cwd=workspace, workspace=workspace)
    settings = settings.model_copy(
        update={
            "memory": settings.memory.model_copy(update={"embedder": "none", "enabled": memory}),
            "server": settings.server.model_copy(update={"port": port}),
        }
    )
    model = ScriptedModel([scripted_step], repeat_last=True, chunk_size=16)
    app = create_app(AgentService(settings, model=model))
    return uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))


@contextmanager
def server_thread(home: Path, *, memory: bool) -> Iterator[str]:
    port = free_port()
    server = make_server(home, port, memory=memory)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def server_process(home: Path, *, memory: bool) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, __file__, "--serve", str(home), "--port", str(port)]
    child = subprocess.Popen([*command, *([] if memory else ["--no-memory"])])
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server process did not start")
            time.sleep(0.05)
        yield url
    finally:
        child.terminate()
        child.wait(20)


Result = tuple[float, float, int, str | None]


async def one_run(client: httpx.AsyncClient, session_id: str) -> Result:
    """(seconds to the first event, to run_start, events, error or None)."""
    started = time.perf_counter()
    first = run_start = 0.0
    events = 0
    status = ""
    url = f"/v1/sessions/{session_id}/messages"
    async with client.stream("POST", url, json={"text": "list the files"}) as response:
        if response.status_code != 200:
            return 0.0, 0.0, 0, f"HTTP {response.status_code}"
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            events += 1
            if events == 1:
                first = time.perf_counter() - started
            if '"type":"run_start"' in line:
                run_start = time.perf_counter() - started
            if '"type":"run_end"' in line:
                status = line
    if '"status":"completed"' not in status:
        return first, run_start, events, f"run did not complete: {status[:200]}"
    return first, run_start, events, None


async def run_bench(url: str, sessions: int) -> None:
    limits = httpx.Limits(max_connections=sessions + 10)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        # Sessions are created concurrently, which also opens one keep-alive connection per
        # session: the runs below then measure the server, not TCP connection set-up.
        created = await asyncio.gather(
            *(client.post("/v1/sessions", json={}) for _ in range(sessions))
        )
        ids = [response.json()["id"] for response in created]
        began = time.perf_counter()
        results = await asyncio.gather(*(one_run(client, i) for i in ids), return_exceptions=True)
        elapsed = time.perf_counter() - began
    report(results, elapsed)


def report(results: list[Result | BaseException], elapsed: float) -> None:
    done = [r for r in results if isinstance(r, tuple)]
    events = sum(r[2] for r in done)
    errors = [r if isinstance(r, BaseException) else r[3] for r in results]
    errors = [e for e in errors if e is not None]
    print(f"runs: {len(results)}  wall: {elapsed:.2f}s")
    for name, index in (("first event", 0), ("run_start", 1)):
        times = [r[index] * 1000 for r in done if r[3] is None]
        if times:
            p95 = statistics.quantiles(times, n=100)[94] if len(times) > 1 else times[0]
            print(f"{name} p50: {statistics.median(times):.1f} ms  p95: {p95:.1f} ms")
    print(f"events: {events}  events/s: {events / elapsed:.0f}")
    print(f"errors: {len(errors)}")
    for error in errors[:5]:
        print(f"  {error!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--no-memory", action="store_true", help="Serve without memory.")
    parser.add_argument("--in-process", action="store_true", help="Server in a thread here.")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the child process
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        make_server(args.serve, args.port, memory=not args.no_memory).run()
        return 0
    where = "in-process" if args.in_process else "own process"
    print(f"server: {where}, memory {'off' if args.no_memory else 'on'}")
    start = server_thread if args.in_process else server_process
    with (
        tempfile.TemporaryDirectory() as tmp,
        start(Path(tmp) / "home", memory=not args.no_memory) as url,
    ):
        asyncio.run(run_bench(url, args.sessions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
