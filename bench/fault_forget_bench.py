"""Fault suite: SIGKILL ``shiyi memory forget`` while it deletes, then check that the stores
agree and that nothing forgotten comes back.

    python bench/fault_forget_bench.py [--kills 20] [--turns 150] [--seed 23] [--keep DIR]

A store is seeded with ``--turns`` logged user messages, each with a unique marker
(``fgmark<n>``), recorded into memory the way the agent records them.  Each round runs the
real ``shiyi memory forget`` (a subprocess: three ids, or every fourth round ``--query`` of
one marker) and kills it with SIGKILL: half of the kills as soon as the forget journal
appears (plus 0-40 ms: the deletes are under way), the rest at a random point of a whole
forget's duration (measured by one uninterrupted forget first).  A forget that finished
before its kill counts as completed.  After each kill the SQLite copies (mirror, keyword
index, session log) are read: a marker some of them lack is *touched* (the forget began).

Then ``shiyi memory stats`` opens the store once (a start: it finishes pending forgets),
``shiyi doctor --repair`` runs, and ``shiyi doctor`` must exit 0.  Reading every copy (graph,
mirror, keyword index, session log), the suite prints:

* kills, kills with a forget journal left behind (the kill landed mid-forget), markers left
  half deleted by the kills (some copies had them, some not), completed forgets;
* forgotten (touched or completed markers), came_back (of those, present in any copy at the
  end: must be 0), disagree (markers some copies hold and others not: must be 0), the
  doctor's exit status (must be 0).

Exit status 1 when anything came back, disagrees or the doctor finds a problem.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import kuzu

from shiyi.config import load_settings
from shiyi.llm.types import Message
from shiyi.memory.service import Memory
from shiyi.sessions.log import SessionLog

MARK = "fgmark"
FILLER = ["about the harbour crane", "and the quarterly budget", "near the old mill road"]
JOURNAL_KILL_DELAY = (0.0, 0.04)
"""Seconds after this forget's journal entry appears that a journal-triggered kill lands.
A forget first finishes any a killed one left (that is a start), so those are exercised
under kills too."""


@dataclass
class Tally:
    kills: int = 0
    kills_mid_forget: int = 0
    half_deleted_after_kill: int = 0
    completed_forgets: int = 0
    forgotten: int = 0
    came_back: int = 0
    disagree: int = 0
    kept: int = 0
    doctor_exit: int = -1
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        return self.came_back == 0 and self.disagree == 0 and self.doctor_exit == 0


@dataclass
class Bench:
    workspace: Path
    env: dict[str, str]
    home: Path
    ids: dict[str, str] = field(default_factory=dict)
    """marker -> its event id."""

    @property
    def memory_dir(self) -> Path:
        return self.home / "memory"

    def command(self, *args: str) -> list[str]:
        script = Path(sys.executable).with_name("shiyi")
        base = [str(script)] if script.exists() else [sys.executable, "-m", "shiyi"]
        return [*base, *args]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            cwd=self.workspace,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


def prepare(root: Path, turns: int) -> Bench:
    workspace, home = root / "ws", root / "home"
    workspace.mkdir(parents=True, exist_ok=True)
    script = workspace / "script.json"
    script.write_text(json.dumps([{"text": "Noted."}]), encoding="utf-8")
    (workspace / "shiyi.yaml").write_text(
        f"models:\n  main:\n    provider: scripted\n    model_path: {script}\n"
        "memory:\n  embedder: none\n  lifecycle:\n    extraction: false\n",
        encoding="utf-8",
    )
    env = {**os.environ, "SHIYI_HOME": str(home), "XDG_CONFIG_HOME": str(root / "xdg")}
    bench = Bench(workspace, env, home)
    seed(bench, turns)
    return bench


def seed(bench: Bench, turns: int) -> None:
    """Logged messages recorded into memory as the agent records them."""
    previous = {k: os.environ.get(k) for k in ("SHIYI_HOME", "XDG_CONFIG_HOME")}
    os.environ.update({k: bench.env[k] for k in previous})
    try:
        settings = load_settings(cwd=bench.workspace, workspace=bench.workspace)
    finally:
        for key, value in previous.items():
            os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    memory = Memory.open(settings, start_worker=False)
    log = SessionLog(settings.sessions_db)
    try:
        session = log.create_session()
        for n in range(turns):
            text = f"note {MARK}{n} {FILLER[n % len(FILLER)]}"
            run_id = log.start_run(session, text)
            row = log.append(session, Message("user", text), run_id=run_id)
            memory.record_message(
                Message("user", text), message_id=row, session_id=session, run_id=run_id,
                iteration=0, log_epoch=log.identity.epoch_for(row),
            )  # fmt: skip
        memory.worker.drain(timeout=600)
        for batch in memory.store.recent_events(turns * 2):
            marker = batch.content.split()[1]
            bench.ids[marker] = batch.id
    finally:
        log.close()
        memory.close()


# --- reading the copies ----------------------------------------------------------------------


def sqlite_copies(bench: Bench) -> dict[str, set[str]]:
    """Markers present in the mirror, the keyword index and the session log."""
    by_id = {event_id: marker for marker, event_id in bench.ids.items()}
    with sqlite3.connect(bench.memory_dir / "memory.sqlite3") as db:
        mirror = {str(r[0]) for r in db.execute("SELECT id FROM ev_rows")}
        indexed = {str(r[0]) for r in db.execute("SELECT id FROM kw_docs")}
    with sqlite3.connect(bench.home / "sessions.sqlite3") as db:
        logged = {str(r[0]).split()[1] for r in db.execute(
            "SELECT content FROM messages WHERE content LIKE ?", (f"note {MARK}%",))}  # fmt: skip
    return {
        "mirror": {by_id[i] for i in mirror if i in by_id},
        "index": {by_id[i] for i in indexed if i in by_id},
        "log": logged,
    }


def graph_copy(bench: Bench) -> set[str]:
    db = kuzu.Database(str(bench.memory_dir / "graph.kuzu"), read_only=True)
    conn = kuzu.Connection(db)
    try:
        result = conn.execute("MATCH (e:Event) RETURN e.id")
        assert isinstance(result, kuzu.QueryResult)
        ids = {str(row[0]) for row in result.get_all()}
    finally:
        conn.close()
        db.close()
    return {marker for marker, event_id in bench.ids.items() if event_id in ids}


def pending_journal(bench: Bench) -> list[Path]:
    return sorted((bench.memory_dir / "forgetting").glob("*.json"))


# --- the rounds ------------------------------------------------------------------------------


def forget_args(bench: Bench, markers: list[str], by_query: bool) -> list[str]:
    if by_query:
        return ["memory", "forget", "--query", markers[0], "--limit", "10", "--yes"]
    return ["memory", "forget", *(bench.ids[m] for m in markers), "--yes"]


def timed_forget(bench: Bench, markers: list[str]) -> float:
    started = time.perf_counter()
    done = bench.run(*forget_args(bench, markers, False))
    if done.returncode != 0:
        raise RuntimeError(f"an uninterrupted forget failed: {done.stderr}")
    return time.perf_counter() - started


def killed_forget(
    bench: Bench, markers: list[str], by_query: bool, duration: float, rng: random.Random
) -> bool:
    """Run one forget and SIGKILL it; True when it finished before the kill."""
    before = set(pending_journal(bench))  # a forget killed earlier, not this one's
    proc = subprocess.Popen(
        bench.command(*forget_args(bench, markers, by_query)),
        cwd=bench.workspace,
        env=bench.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if rng.random() < 0.5:
        deadline = time.monotonic() + duration * 3
        while (
            not set(pending_journal(bench)) - before
            and proc.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.0005)
        time.sleep(rng.uniform(*JOURNAL_KILL_DELAY))
    else:
        time.sleep(rng.uniform(0.0, duration))
    finished = proc.poll() == 0
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    return finished


def run_faults(root: Path, *, kills: int = 20, turns: int = 150, seed_: int = 23) -> Tally:
    started = time.perf_counter()
    rng = random.Random(seed_)
    bench = prepare(root, turns)
    tally = Tally()
    queue = list(bench.ids)
    rng.shuffle(queue)
    forgotten: set[str] = set(queue[:3])
    duration = timed_forget(bench, queue[:3])
    del queue[:3]
    for round_ in range(kills):
        by_query = round_ % 4 == 3
        markers, queue = queue[: 1 if by_query else 3], queue[1 if by_query else 3 :]
        if killed_forget(bench, markers, by_query, duration, rng):
            tally.completed_forgets += 1
            forgotten.update(markers)
        tally.kills += 1
        tally.kills_mid_forget += bool(pending_journal(bench))
        copies = sqlite_copies(bench)
        for marker in markers:
            held = [name for name, found in copies.items() if marker in found]
            if len(held) < len(copies):
                forgotten.add(marker)
                tally.half_deleted_after_kill += bool(held)
    restart = bench.run("memory", "stats")
    if restart.returncode != 0:
        tally.problems.append(f"start after the kills failed: {restart.stderr.strip()}")
    repaired = bench.run("doctor", "--repair")
    if repaired.returncode != 0:
        tally.problems.append(f"doctor --repair: {repaired.stdout.strip()}")
    checked = bench.run("doctor")
    tally.doctor_exit = checked.returncode
    if checked.returncode != 0:
        tally.problems.append(f"doctor: {checked.stdout.strip()} {checked.stderr.strip()}")
    final = {**sqlite_copies(bench), "graph": graph_copy(bench)}
    for marker in bench.ids:
        held = [name for name, found in final.items() if marker in found]
        tally.disagree += 0 < len(held) < len(final)
        tally.came_back += marker in forgotten and bool(held)
        tally.kept += len(held) == len(final)
    tally.forgotten = len(forgotten)
    tally.seconds = time.perf_counter() - started
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--keep", type=Path, help="Work in this directory and keep it.")
    args = parser.parse_args()
    if args.turns < 3 * args.kills + 10:
        parser.error("--turns must leave at least 3 markers per kill and 10 to keep")
    with tempfile.TemporaryDirectory(prefix="shiyi-forget-faults-") as scratch:
        root = args.keep or Path(scratch)
        result = run_faults(root, kills=args.kills, turns=args.turns, seed_=args.seed)
    for name, value in asdict(result).items():
        if name != "problems":
            print(f"{name:<26} {value:.1f}" if isinstance(value, float) else f"{name:<26} {value}")
    for problem in result.problems:
        print(f"problem: {problem}")
    print("stores agree, nothing forgotten came back" if result.agree else "FORGET NOT SAFE")
    return 0 if result.agree else 1


if __name__ == "__main__":
    sys.exit(main())
