"""Memory of ``shiyi serve`` under load and after it: does RSS come back down, or stay?

    python bench/server_rss_bench.py [--clients 30] [--messages 20] [--rounds 2]
                               [--per-session 5] [--drain 20] [--env MALLOC_ARENA_MAX=2]

Starts the real ``shiyi serve`` (subprocess, loopback, scripted model, memory on with no
embedder and no extraction) and, ``--rounds`` times, runs ``--clients`` concurrent clients
that each send ``--messages`` messages, opening a new session every ``--per-session``
messages; after each round the server idles for ``--drain`` seconds.  The server's RSS
(``/proc/<pid>/status``) is sampled every half second throughout.  Prints the RSS at start,
the peak and the last sample of each round and of each drain, and how much the server kept
per message.

Issue 29 measured 282 MB -> 2,149 MB after 4,225 messages in two 30-client rounds, unchanged
at idle.  The machine this runs on is noisy: run it twice and compare medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from fault_kill_bench import send, start_server

SAMPLE_EVERY = 0.5


@dataclass
class Samples:
    """RSS samples (MB) of one process, tagged with the phase they were taken in."""

    pid: int
    phase: str = "start"
    taken: list[tuple[str, float]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            rss = rss_mb(self.pid)
            if rss is not None:
                self.taken.append((self.phase, rss))
            self.stop.wait(SAMPLE_EVERY)

    def of(self, phase: str) -> list[float]:
        return [mb for tag, mb in self.taken if tag == phase]


def rss_mb(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def prepare(root: Path, steps: int, extra_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """A workspace configured for the scripted model (``steps`` replies); its server env."""
    workspace, home = root / "ws", root / "home"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "notes.txt").write_text("the notes\n", encoding="utf-8")
    script = root / "script.json"
    script.write_text(json.dumps([{"text": "Noted, thank you. " * 8}] * steps))
    (workspace / "shiyi.yaml").write_text(
        f"models:\n  main:\n    provider: scripted\n    model_path: {script}\n"
        "memory:\n  embedder: none\n  lifecycle:\n    extraction: false\n",
        encoding="utf-8",
    )
    env = {**os.environ, "SHIYI_HOME": str(home), "XDG_CONFIG_HOME": str(root / "xdg")}
    return workspace, {**env, **extra_env}


def client(address: str, name: str, messages: int, per_session: int, failed: list[str]) -> None:
    """``messages`` messages, a new session every ``per_session``, each reply read whole."""
    with httpx.Client(base_url=address, timeout=120) as http:
        session = ""
        for i in range(messages):
            if i % per_session == 0:
                session = http.post("/v1/sessions", json={"title": name}).json()["id"]
            text = f"{name} message {i}: please remember that the kettle is number {i}. " * 4
            if not send(http, session, text):
                failed.append(f"{name} {i}")


def one_round(address: str, args: argparse.Namespace, number: int, failed: list[str]) -> float:
    threads = [
        threading.Thread(
            target=client,
            args=(address, f"r{number}c{n}", args.messages, args.per_session, failed),
        )
        for n in range(args.clients)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


def report(samples: Samples, args: argparse.Namespace, failed: list[str], walls: list[float]):
    start = statistics.median(samples.of("start") or [0.0])
    total = args.clients * args.messages * args.rounds
    sessions = args.clients * -(-args.messages // args.per_session) * args.rounds
    print(
        f"clients {args.clients} x messages {args.messages} x rounds {args.rounds} = "
        f"{total} messages in {sessions} sessions; failed: {len(failed)}"
    )
    print(f"RSS at start: {start:.0f} MB")
    for number in range(1, args.rounds + 1):
        load, drain = samples.of(f"load{number}"), samples.of(f"drain{number}")
        wall = walls[number - 1]
        if load:
            print(f"round {number}: {wall:.1f} s, peak {max(load):.0f} MB, last {load[-1]:.0f} MB")
        if drain:
            print(
                f"  drain {number}: first {drain[0]:.0f} MB, last {drain[-1]:.0f} MB "
                f"after {args.drain:g} s idle"
            )
    final = samples.taken[-1][1] if samples.taken else start
    print(
        f"kept after the load: {final - start:+.0f} MB "
        f"({(final - start) * 1024 / max(total, 1):.1f} KB a message)"
    )
    for line in failed[:5]:
        print(f"  failed: {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--messages", type=int, default=20, help="per client and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--per-session", type=int, default=5, help="messages per session")
    parser.add_argument("--drain", type=float, default=20.0, help="idle seconds per round")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for serve")
    args = parser.parse_args()
    extra = dict(item.split("=", 1) for item in args.env)
    steps = args.clients * args.messages * args.rounds + 100
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace, env = prepare(root, steps, extra)
        log = root / "serve.log"
        proc, address = start_server(workspace, env, log)
        samples = Samples(proc.pid)
        sampler = threading.Thread(target=samples.run, daemon=True)
        failed: list[str] = []
        walls: list[float] = []
        try:
            time.sleep(2)  # settle: the start-up's own allocations
            sampler.start()
            time.sleep(2)
            for number in range(1, args.rounds + 1):
                samples.phase = f"load{number}"
                walls.append(one_round(address, args, number, failed))
                samples.phase = f"drain{number}"
                time.sleep(args.drain)
        finally:
            samples.stop.set()
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        report(samples, args, failed, walls)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
