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
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
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
    app = create_app(AgentService(settings, model=model, freeze_gc=True))
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


async def one_run(host: str, port: int, session_id: str, go: asyncio.Event) -> Result:
    """(seconds to the first event, to run_start, events, error or None).

    A raw HTTP/1.1 client on an already open connection: 50 concurrent httpx streams cost
    the load generator itself ~10 ms of CPU each to start, so httpx measured the client
    (first event p50 0.6 s) rather than the server (p50 30 ms seen inside it).
    """
    reader, writer = await asyncio.open_connection(host, port)
    body = json.dumps({"text": "list the files"}).encode()
    head = (
        f"POST /v1/sessions/{session_id}/messages HTTP/1.1\r\nHost: {host}\r\n"
        "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    await go.wait()
    started = time.perf_counter()
    writer.write(head.encode() + body)
    first = run_start = 0.0
    events = 0
    status = ""
    try:
        status_line = await reader.readline()
        if b" 200 " not in status_line:
            return 0.0, 0.0, 0, f"HTTP {status_line.decode(errors='replace').strip()}"
        while (await reader.readline()) not in (b"\r\n", b""):
            pass  # headers
        async for line in _chunked_lines(reader):
            if not line.startswith("data: "):
                continue
            events += 1
            if events == 1:
                first = time.perf_counter() - started
            if '"type":"run_start"' in line:
                run_start = time.perf_counter() - started
            if '"type":"run_end"' in line:
                status = line
                break
    finally:
        writer.close()
    if '"status":"completed"' not in status:
        return first, run_start, events, f"run did not complete: {status[:200]}"
    return first, run_start, events, None


async def _chunked_lines(reader: asyncio.StreamReader) -> AsyncIterator[str]:
    """Lines of a chunked HTTP body as they arrive."""
    pending = b""
    while True:
        size = int((await reader.readline()).strip() or b"0", 16)
        if size == 0:
            return
        pending += await reader.readexactly(size)
        await reader.readexactly(2)  # the CRLF after each chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode(errors="replace").rstrip("\r")


async def run_bench(url: str, sessions: int) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        created = [await client.post("/v1/sessions", json={}) for _ in range(sessions)]
    ids = [response.json()["id"] for response in created]
    host, port = url.removeprefix("http://").rsplit(":", 1)
    go = asyncio.Event()
    runs = [asyncio.create_task(one_run(host, int(port), i, go)) for i in ids]
    await asyncio.sleep(0.5)  # every connection open before the clock starts
    began = time.perf_counter()
    go.set()
    results = await asyncio.gather(*runs, return_exceptions=True)
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
