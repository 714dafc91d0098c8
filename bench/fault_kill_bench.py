"""Fault suite: SIGKILL ``shiyi serve`` under load at random points, then check that the
session log, the graph, its SQLite mirror and the keyword index agree.

    python bench/fault_kill_bench.py [--kills 20] [--clients 8] [--seed 17] [--keep DIR]

Each round starts the real ``shiyi serve`` (subprocess, scripted model, no embedder,
extraction off) on one data dir, streams messages from ``--clients`` concurrent sessions and
kills the server with SIGKILL after a random 0.3-2.5 s; one kill in five lands during
start-up instead (0.1-2 s after the process starts: stores opening, the repair running).
A message is *acknowledged* when its reply stream reached ``run_end`` with status
``completed``.  After the last kill the server starts once more (its start-up repairs what
the kills left), drains its memory worker and stops cleanly; then the files are read
directly and the suite prints:

* acknowledged, found (acknowledged and present in log, graph, mirror and keyword index),
  lost (acknowledged but missing from any of them), duplicated (a message logged or stored
  twice), reconciled (messages the start-ups queued because memory had never stored them);
* log rows memory lacks and memory events the log lacks (both must be 0: the stores agree),
  and runs still 'running' (must be 0).

Exit status 1 when anything is lost, duplicated or disagrees.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx
import kuzu

from shiyi.client.owner import read_owner

TAG = "faultmsg"
RECONCILED = re.compile(r"reconciled (\d+) logged messages")
STARTUP_KILLS = 0.2
"""Share of kills that land during start-up (stores opening, the repair running) instead
of under load."""
SCRIPT_STEPS = 20_000
"""Replies per server lifetime (each restart reads the script from its start)."""


@dataclass
class Tally:
    kills: int = 0
    sent: int = 0
    acknowledged: int = 0
    found: int = 0
    lost: int = 0
    duplicated: int = 0
    reconciled: int = 0
    in_log: int = 0
    in_graph: int = 0
    in_mirror: int = 0
    in_index: int = 0
    log_rows_missing_in_memory: int = 0
    memory_events_missing_in_log: int = 0
    stuck_runs: int = 0
    seconds: float = 0.0

    @property
    def agree(self) -> bool:
        return (
            self.lost == 0
            and self.duplicated == 0
            and self.log_rows_missing_in_memory == 0
            and self.memory_events_missing_in_log == 0
            and self.stuck_runs == 0
        )


@dataclass
class Load:
    """What the clients sent and which messages were acknowledged (shared by threads)."""

    acked: set[str] = field(default_factory=set)
    sent: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


# --- the server ----------------------------------------------------------------------------


def prepare(root: Path) -> tuple[Path, dict[str, str]]:
    """A workspace configured for the scripted model; returns it and the server's env."""
    workspace, home = root / "ws", root / "home"
    workspace.mkdir(parents=True, exist_ok=True)
    script = workspace / "script.json"
    script.write_text(json.dumps([{"text": "Noted, thank you."}] * SCRIPT_STEPS))
    (workspace / "shiyi.yaml").write_text(
        f"models:\n  main:\n    provider: scripted\n    model_path: {script}\n"
        "memory:\n  embedder: none\n  lifecycle:\n    extraction: false\n",
        encoding="utf-8",
    )
    env = {**os.environ, "SHIYI_HOME": str(home), "XDG_CONFIG_HOME": str(root / "xdg")}
    return workspace, env


def shiyi_command() -> list[str]:
    script = Path(sys.executable).with_name("shiyi")
    return [str(script)] if script.exists() else [sys.executable, "-m", "shiyi"]


def spawn(workspace: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            [*shiyi_command(), "serve", "--port", "0"],
            cwd=workspace,
            env=env,
            stdout=sink,
            stderr=sink,
        )


def start_server(
    workspace: Path, env: dict[str, str], log: Path
) -> tuple[subprocess.Popen[bytes], str]:
    proc = spawn(workspace, env, log)
    home = Path(env["SHIYI_HOME"])
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"shiyi serve exited ({proc.returncode}); see {log}")
        owner = read_owner(home)
        if owner is not None and owner.pid == proc.pid:
            try:
                if httpx.get(f"{owner.address}/healthz", timeout=2).status_code == 200:
                    return proc, owner.address
            except httpx.TransportError:
                pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"shiyi serve did not start in 90 s; see {log}")


# --- the load ------------------------------------------------------------------------------


def client_loop(address: str, name: str, load: Load, stop: threading.Event) -> None:
    """One session, one message after another, until the server dies or ``stop``."""
    with httpx.Client(base_url=address, timeout=30) as http:
        try:
            created = http.post("/v1/sessions", json={"title": name})
            session = created.json()["id"]
            i = 0
            while not stop.is_set():
                text = f"{TAG} {name} {i}"
                with load.lock:
                    load.sent += 1
                if send(http, session, text):
                    with load.lock:
                        load.acked.add(text)
                i += 1
        except (httpx.HTTPError, KeyError, ValueError):
            return  # the server was killed: the message in flight is not acknowledged


def send(http: httpx.Client, session: str, text: str) -> bool:
    """Stream one message's reply; True when its run ended 'completed'."""
    kind = ""
    with http.stream("POST", f"/v1/sessions/{session}/messages", json={"text": text}) as resp:
        if resp.status_code != 200:
            return False
        for line in resp.iter_lines():
            if line.startswith("event: "):
                kind = line[len("event: ") :]
            elif line.startswith("data: ") and kind == "run_end":
                return bool(json.loads(line[len("data: ") :]).get("status") == "completed")
    return False


def kill_round(
    workspace: Path, env: dict[str, str], log: Path, clients: int, rng: random.Random, load: Load
) -> None:
    if rng.random() < STARTUP_KILLS:  # while it opens the stores and repairs the last kill
        proc = spawn(workspace, env, log)
        time.sleep(rng.uniform(0.1, 2.0))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        return
    proc, address = start_server(workspace, env, log)
    stop = threading.Event()
    round_id = f"r{rng.randrange(10**9)}"
    threads = [
        threading.Thread(target=client_loop, args=(address, f"{round_id}c{n}", load, stop))
        for n in range(clients)
    ]
    for thread in threads:
        thread.start()
    time.sleep(rng.uniform(0.3, 2.5))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    stop.set()
    for thread in threads:
        thread.join(60)


def final_start(workspace: Path, env: dict[str, str], log: Path) -> None:
    """Start once more (the repair runs on start), drain the worker, stop cleanly."""
    proc, address = start_server(workspace, env, log)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            counts = httpx.get(f"{address}/v1/memory/health", timeout=30).json()["counts"]
            if counts.get("pending_jobs", 0) == 0:
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


# --- the check -----------------------------------------------------------------------------


def logged_messages(home: Path) -> tuple[dict[int, str], int]:
    """Our user messages in the session log (row id -> text) and runs still 'running'."""
    with sqlite3.connect(home / "sessions.sqlite3") as db:
        rows = db.execute(
            "SELECT id, content FROM messages WHERE role='user' AND content LIKE ?", (f"{TAG} %",)
        ).fetchall()
        stuck = db.execute("SELECT COUNT(*) FROM runs WHERE status='running'").fetchone()[0]
    return {int(r[0]): str(r[1]) for r in rows}, int(stuck)


def graph_events(home: Path) -> dict[str, str]:
    """User-message events in the Kuzu graph (id -> text)."""
    db = kuzu.Database(str(home / "memory" / "graph.kuzu"), read_only=True)
    conn = kuzu.Connection(db)
    try:
        result = conn.execute(
            "MATCH (e:Event) WHERE e.segment_type = 'user_message' RETURN e.id, e.content"
        )
        assert isinstance(result, kuzu.QueryResult)
        out: dict[str, str] = {}
        while result.has_next():
            event_id, content = list(result.get_next())
            out[str(event_id)] = str(content)
        return out
    finally:
        conn.close()
        db.close()


def mirror_and_index(home: Path) -> tuple[dict[str, str], set[str]]:
    """(event mirror: id -> text, keyword index: event ids) from memory.sqlite3."""
    with sqlite3.connect(home / "memory" / "memory.sqlite3") as db:
        mirror = db.execute(
            "SELECT id, content FROM ev_rows WHERE segment_type='user_message'"
        ).fetchall()
        indexed = db.execute("SELECT id FROM kw_docs WHERE node='event'").fetchall()
    return {str(r[0]): str(r[1]) for r in mirror}, {str(r[0]) for r in indexed}


def logged_event_id(home: Path) -> Callable[[int], str]:
    """A row's first event id, as the server names it (the log's epoch, see segments)."""
    from shiyi.memory.intake.segments import event_id
    from shiyi.sessions.log import SessionLog

    log = SessionLog(home / "sessions.sqlite3")
    identity = log.identity
    log.close()
    return lambda row: event_id(row, 0, identity.epoch_for(row))


def tally(home: Path, load: Load, server_log: Path, kills: int) -> Tally:
    log_rows, stuck = logged_messages(home)
    logged_id = logged_event_id(home)
    graph = {k: v for k, v in graph_events(home).items() if v.startswith(TAG)}
    mirror, indexed = mirror_and_index(home)
    mirror = {k: v for k, v in mirror.items() if v.startswith(TAG)}
    by_text: dict[str, list[int]] = {}
    for row, text in log_rows.items():
        by_text.setdefault(text, []).append(row)
    graph_texts = Counter(graph.values())
    t = Tally(kills=kills, sent=load.sent, acknowledged=len(load.acked), stuck_runs=stuck)
    for text in load.acked:
        ids = [logged_id(row) for row in by_text.get(text, [])]
        t.in_log += bool(ids)
        t.in_graph += any(i in graph for i in ids)
        t.in_mirror += any(i in mirror for i in ids)
        t.in_index += any(i in indexed for i in ids)
        t.found += any(i in graph and i in mirror and i in indexed for i in ids)
    t.lost = t.acknowledged - t.found
    t.duplicated = sum(len(rows) > 1 for rows in by_text.values())
    t.duplicated += sum(n > 1 for n in graph_texts.values())
    logged_ids = {logged_id(row) for row in log_rows}
    t.log_rows_missing_in_memory = len(
        [i for i in logged_ids if i not in graph or i not in mirror or i not in indexed]
    )
    t.memory_events_missing_in_log = len((set(graph) | set(mirror)) - logged_ids)
    text = server_log.read_text(encoding="utf-8", errors="replace")
    t.reconciled = sum(int(n) for n in RECONCILED.findall(text))
    return t


def run_faults(root: Path, *, kills: int = 20, clients: int = 8, seed: int = 17) -> Tally:
    started = time.perf_counter()
    workspace, env = prepare(root)
    server_log = root / "serve.log"
    rng, load = random.Random(seed), Load()
    for _ in range(kills):
        kill_round(workspace, env, server_log, clients, rng, load)
    final_start(workspace, env, server_log)
    result = tally(Path(env["SHIYI_HOME"]), load, server_log, kills)
    result.seconds = time.perf_counter() - started
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--keep", type=Path, help="Work in this directory and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="shiyi-faults-") as scratch:
        root = args.keep or Path(scratch)
        result = run_faults(root, kills=args.kills, clients=args.clients, seed=args.seed)
    for name, value in asdict(result).items():
        print(f"{name:<30} {value:.1f}" if isinstance(value, float) else f"{name:<30} {value}")
    print("stores agree" if result.agree else "STORES DISAGREE")
    return 0 if result.agree else 1


if __name__ == "__main__":
    sys.exit(main())
