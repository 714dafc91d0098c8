"""Belief benchmark: what shiyi *believes* after real conversations, not what it finds.

    python bench/beliefs_bench.py [--sessions 12] [--persona Kenta] [--datasets realmem,locomo]
                                  [--planted 12] [--seed 7[,11,13]] [--json out.json]

Real conversation text (the RealMem dev personas, LoCoMo dev) goes through shiyi's real
pipeline: a real ``Memory`` on the embedded Kuzu+SQLite store in a temporary directory, the
MiniLM embedder, turns recorded as the agent records them (RealMem: ``record_message`` of
user and assistant messages; LoCoMo: each speaker's turn as a user message under the
speaker's name, since shiyi's own LoCoMo import writes ``imported`` turns, which are never
extracted), extraction and end-of-session consolidation jobs run by the memory worker.

The ``fast`` model is ``beliefs_model.ExtractionDouble``: rule-based, seeded, varying what
real models vary (``about`` lists, key wordings, hedges, re-reports from sliding windows).
The driver adds what a job queue does: sessions arrive in chunks whose extraction jobs run
out of order (a backlog, several workers) and some jobs are delivered twice.  Statements of
changing attributes are planted in real turns (``beliefs_data``); the ground truth is the
double's canonical reader applied to every turn fed in: per slot, the newest plain value.

Reported per dataset, for shiyi and for a trivial baseline (a dictionary keyed by the exact
(key, about) each extraction wrote, last write wins, fed the same extraction output):
share of slots whose active value is the newest stated one; slots with a stale active
value; stale overwrites (a value said earlier replacing one said later); hedges said once
and promoted to active; live facts per slot and duplicates; and, after a few agent turns
(a weak scripted main model that calls ``query_memory`` and quotes what it found), the
share of echo turns (the bench's agent runs: tool calls, tool results, quoting replies, run
archives) among the top-10 hits of the slots' questions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from beliefs_data import Conversation, Session, Turn, load_locomo, load_realmem, plant
from beliefs_metrics import (
    Belief,
    EchoScores,
    Scores,
    Truth,
    Written,
    canonical,
    last_write_wins,
    score,
    true_slot,
)
from beliefs_model import ExtractionDouble, Statement, minute, read_statements

from shiyi.app import App
from shiyi.config import load_settings
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call, reply
from shiyi.llm.types import Message
from shiyi.memory.lifecycle.pipeline import CONSOLIDATE, EXTRACT
from shiyi.memory.lifecycle.slots import normalize_key
from shiyi.memory.models import EventRecord, FactRecord, MemoryHit
from shiyi.memory.service import Memory

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ALL_SEGMENTS = ("user_message", "reasoning", "tool_call", "tool_result", "response", "imported")
STATUSES = ("active", "pending", "superseded", "expired")
FOLLOW_UP = "Thanks, that helps."


class Progress:
    def __init__(self, total: int) -> None:
        self.total, self.done, self.started = total, 0, time.perf_counter()

    def step(self, turns: int, label: str) -> None:
        self.done += turns
        elapsed = time.perf_counter() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        print(
            f"  [{self.done}/{self.total} turns] {label}: {elapsed / 60:.1f} min elapsed,"
            f" ETA {eta / 60:.1f} min",
            flush=True,
        )


# --- feeding the pipeline ---------------------------------------------------------------------


def open_memory(home: Path, double: ExtractionDouble) -> Memory:
    settings = load_settings(home=home, workspace=home, cwd=home)
    settings.memory.lock_timeout = 0
    model = double.model()
    return Memory.open(settings, start_worker=False, extraction_model=lambda: model)


class Feeder:
    """Writes sessions the way shiyi does and runs the lifecycle's jobs, chunk by chunk."""

    def __init__(self, memory: Memory, conversation: Conversation, args: argparse.Namespace):
        self.memory = memory
        self.conversation = conversation
        self.rng = random.Random(f"{args.seed}:{conversation.name}:queue")
        self.args = args
        self.row = 0
        self.written: set[str] = set()
        """Ids of the turns written since the last batch of jobs."""

    def session_id(self, session: Session) -> str:
        return f"ses_{self.conversation.dataset}_{session.id}".replace("-", "_").lower()

    def write(self, session: Session) -> None:
        sid = self.session_id(session)
        if not self.conversation.named_speakers:
            for turn in session.turns:
                self.row += 1
                self.written.add(f"ev_bench_{self.row}_0")  # the id record_message gives it
                self.memory.record_message(
                    Message("user" if turn.role == "user" else "assistant", turn.text),
                    message_id=self.row,
                    session_id=sid,
                    run_id=f"run_{sid}",
                    iteration=self.row,
                    ts=turn.ts,
                    log_epoch="bench",
                )
            return
        events = []
        for turn in session.turns:
            self.row += 1
            event_id = f"{sid}:{self.row}"
            events.append(
                EventRecord(
                    event_id, sid, f"run_{sid}", turn.ts, turn.role, turn.text, "user_message"
                )
            )
            self.written.add(event_id)
        self.memory.import_events(events)

    def chunk(self, sessions: Sequence[Session], old: Sequence[Session] = ()) -> None:
        """Write ``sessions`` (new turns of the ``old`` ones, if given) and run their jobs."""
        memory, config = self.memory, self.memory.lifecycle.config
        config.extraction = False  # ingest and embed first; the jobs are queued below
        for session in sessions:
            self.write(session)
        memory.worker.drain(timeout=3600)
        config.extraction = True
        new = set(self.written)
        said = [
            e
            for s in sessions
            for e in memory.store.session_window(
                self.session_id(s), float("inf"), ["user_message"], 100_000
            )
            if e.id in new
        ]
        self.written.clear()
        if self.rng.random() < self.args.shuffle:
            self.rng.shuffle(said)  # a backlog worked off out of order
        memory.lifecycle.queue_extraction(said)
        for session in old or sessions:
            memory.consolidate(self.session_id(session))
        self.deliver_twice(EXTRACT, self.args.duplicate)
        self.deliver_twice(CONSOLIDATE, self.args.duplicate * 3)
        if not memory.worker.drain(timeout=3600):
            print(f"    warning: jobs left after draining: {memory.jobs.summary()}")

    def follow_ups(self, count: int) -> None:
        """The user comes back to a few earlier sessions with a short reply ("Thanks, that
        helps."), later than everything else: its extraction re-reads the old session's last
        turns and, at the session's end, its consolidation re-reads the whole session."""
        sessions = self.conversation.sessions[:-1]
        chosen = self.rng.sample(sessions, min(count, len(sessions)))
        last = max(t.ts for s in self.conversation.sessions for t in s.turns)
        for index, session in enumerate(chosen):
            role = next(t.role for t in session.turns if t.role != "assistant")
            turn = Turn(role, FOLLOW_UP, last + (index + 1) * 3600)
            session.turns.append(turn)
            self.chunk([Session(session.id, [turn])], old=[session])

    def deliver_twice(self, kind: str, share: float) -> None:
        """At-least-once delivery: some jobs run again (a worker died before completing)."""
        for payload in self.memory.jobs.open_payloads(kind):
            if self.rng.random() < share:
                self.memory.jobs.enqueue(kind, payload)


def feed(
    memory: Memory, conversation: Conversation, args: argparse.Namespace, progress: Progress
) -> None:
    feeder = Feeder(memory, conversation, args)
    sessions = conversation.sessions
    for start in range(0, len(sessions), args.chunk):
        chunk = sessions[start : start + args.chunk]
        feeder.chunk(chunk)
        turns = sum(len(s.turns) for s in chunk)
        progress.step(turns, f"{conversation.dataset} {conversation.name}")
    feeder.follow_ups(args.follow_ups)


# --- agent turns (echoes) ---------------------------------------------------------------------


def weak_main_model(questions: list[str]) -> ScriptedModel:
    """A weak main model: looks the question up, then quotes what it found."""

    def step(request: ScriptedRequest) -> ScriptedReply:
        last = request.last
        if last.role == "tool":
            found = [line.strip() for line in last.content.splitlines() if line.strip()]
            return reply("From what I remember: " + " / ".join(found[:3]))
        return reply("", call("query_memory", query=questions[0]))

    return ScriptedModel([step], repeat_last=True, model_name="weak-main")


def agent_turns(memory: Memory, home: Path, asked: list[str]) -> set[str]:
    """Ask ``asked`` through the real agent; returns the agent's session ids."""
    current: list[str] = [""]
    settings = load_settings(home=home, workspace=home, cwd=home)

    async def run(app: App) -> str:
        agent = app.agent()
        for question in asked:
            current[0] = question
            async for _ in agent.send(question):
                pass
        session = agent.session_id
        agent.close()
        return session

    with App.open(
        settings, model=weak_main_model(current), memory=memory, start_worker=False
    ) as app:
        session = asyncio.run(run(app))
    memory.worker.drain(timeout=600)
    return {session}


def echo_ids(memory: Memory, sessions: set[str]) -> tuple[set[str], set[str]]:
    """(event ids, run ids) of what the agent's runs added beyond the user's questions.
    Runs are found by their questions (a segment type every version has), so a hit anchored
    in one of them is an echo whatever segment type newer code gives tool output."""
    events: list[EventRecord] = []
    for session in sessions:
        events += memory.store.session_window(session, float("inf"), ALL_SEGMENTS, 100_000)
    echoes = [e for e in events if e.segment_type != "user_message"]
    return {e.id for e in echoes}, {e.run_id for e in events}


def is_echo(hit: MemoryHit, events: set[str], runs: set[str]) -> bool:
    """A tool call or result, a reply or a run archive of the bench's agent runs (the
    questions the user typed are not echoes)."""
    if hit.node == "event" and hit.id in events:
        return True
    anchor = hit.anchor
    if anchor is None or anchor.run_id not in runs:
        return False
    return hit.node == "fact" or anchor.segment_type != "user_message"


# --- reading the beliefs back -------------------------------------------------------------------


def all_facts(memory: Memory) -> list[FactRecord]:
    ids = memory.store.facts_by_status(list(STATUSES), 10**7)
    return [f for f in memory.store.get_facts(ids) if f.source != "archive"]


def slot_of(fact: FactRecord, double: ExtractionDouble) -> tuple[Hashable | None, str]:
    """The slot and canonical value a stored fact holds, whatever key and ``about`` it was
    stored under (a writer that rewrites the text is matched by the value inside it)."""
    value = canonical(fact.value)
    slots = double.values.get(value, set())
    if not slots:
        text = f" {canonical(fact.text)} "
        for known, owners in double.values.items():
            if known and f" {known} " in text:
                value, slots = known, owners
                break
    if not slots:
        return None, value
    key = normalize_key(fact.key)
    keyed = {s for s in slots if key in {normalize_key(k) for k in double.keys[s]}}
    named = {s for s in keyed or slots if s[0].lower() in {e.lower() for e in fact.entities}}
    return sorted(named or keyed or slots)[0], value


def shiyi_beliefs(
    memory: Memory, double: ExtractionDouble
) -> tuple[list[Belief], list[tuple[Belief, Belief]]]:
    facts = all_facts(memory)
    beliefs = {}
    for fact in facts:
        slot, value = slot_of(fact, double)
        beliefs[fact.id] = Belief(fact.id, slot, value, getattr(fact, "status", "active"))
    replaced = memory.store.superseded_by([f.id for f in facts])
    overwrites = [
        (beliefs[new], beliefs[old])
        for old, new in replaced.items()
        if old in beliefs and new in beliefs
    ]
    return list(beliefs.values()), overwrites


def statements(conversation: Conversation) -> list[Statement]:
    return [
        s
        for session in conversation.sessions
        for turn in session.turns
        for s in read_statements(turn.text, turn.role, minute(turn.ts))
    ]


# --- one store, the run, the report -------------------------------------------------------------


def evaluate(
    conversation: Conversation, home: Path, args: argparse.Namespace, progress: Progress
) -> tuple[dict[str, Scores], EchoScores]:
    double = ExtractionDouble(args.seed)
    memory = open_memory(home, double)
    try:
        feed(memory, conversation, args, progress)
        truth = Truth.of(statements(conversation))
        beliefs, overwrites = shiyi_beliefs(memory, double)
        shiyi = score(truth, beliefs, overwrites)
        written = [Written(slot, value, key, about) for slot, value, key, about in double.written]
        baseline = score(truth, *last_write_wins(written))
        by_slot = score(truth, *last_write_wins(written, true_slot))
        questions = list(conversation.questions.values())
        rng = random.Random(f"{args.seed}:{conversation.name}:ask")
        asked = rng.sample(questions, min(args.agent_turns, len(questions)))
        echoes = EchoScores()
        if asked:
            events, runs = echo_ids(memory, agent_turns(memory, home, asked))
            for question in questions:
                hits = memory.retriever.search(question, limit=10, touch=False)
                echoes.count([is_echo(h, events, runs) for h in hits])
    finally:
        memory.close()
    print(
        f"    {conversation.name}: {len(truth.newest)} slots ({len(truth.changed)} changed,"
        f" {conversation.planted} planted),"
        f" {double.calls} extraction calls, {len(beliefs)} facts",
        flush=True,
    )
    return {"shiyi": shiyi, "LWW (key, about)": baseline, "LWW true slot": by_slot}, echoes


def conversations(args: argparse.Namespace) -> list[Conversation]:
    found: list[Conversation] = []
    if "realmem" in args.datasets:
        found += load_realmem(Path(args.realmem), args.persona, args.sessions)
    if "locomo" in args.datasets:
        locomo = load_locomo(Path(args.locomo), args.locomo_sessions)
        found += [c for c in locomo if not args.persona or args.persona in c.name]
    for conversation in found:
        plant(conversation, args.planted, random.Random(f"{args.seed}:{conversation.name}"))
    return found


COLUMNS = (
    ("slots", "slots"), ("changed", "chg"), ("current=newest", "cur=new"),
    ("current=newest (changed)", "cur=new chg"), ("stale active slots", "stale act"),
    ("stale overwrites", "stale ovw"), ("hedges promoted", "hedge prom"),
    ("live facts/slot", "live/slot"), ("duplicate live facts", "dups"),
)  # fmt: skip


SYSTEMS = ("shiyi", "LWW (key, about)", "LWW true slot")


def table(results: dict[str, dict[str, Any]]) -> None:
    head = f"{'dataset':<9}{'system':<18}" + "".join(f"{short:>12}" for _, short in COLUMNS)
    print("\n" + head + f"{'echo@10':>10}{'q w/ echo':>11}")
    for dataset, rows in results.items():
        for system in SYSTEMS:
            row = rows[system]
            cells = "".join(f"{_cell(row[name]):>12}" for name, _ in COLUMNS)
            echo = rows["echo"] if system == "shiyi" else {}
            tail = f"{_cell(echo.get('echo share of top-10', '')):>10}"
            tail += f"{_cell(echo.get('queries with an echo', '')):>11}"
            print(f"{dataset:<9}{system:<18}{cells}{tail}")


def _cell(value: object) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="realmem,locomo")
    parser.add_argument("--realmem", default=str(DATA / "realmem-dev"))
    parser.add_argument("--locomo", default=str(DATA / "locomo-dev.json"))
    parser.add_argument("--persona", help="only the persona / LoCoMo sample whose name has this")
    parser.add_argument("--sessions", type=int, default=30, help="RealMem sessions per persona")
    parser.add_argument("--locomo-sessions", type=int, default=8, help="LoCoMo sessions each")
    parser.add_argument("--planted", type=int, default=12, help="planted slots per speaker")
    parser.add_argument("--chunk", type=int, default=4, help="sessions per job batch")
    parser.add_argument(
        "--shuffle", type=float, default=0.5, help="share of batches run out of order"
    )
    parser.add_argument("--duplicate", type=float, default=0.1, help="share of jobs run twice")
    parser.add_argument("--follow-ups", type=int, default=3, help="old sessions resumed")
    parser.add_argument("--agent-turns", type=int, default=4, help="agent questions per store")
    parser.add_argument("--seed", default="7", help="one seed, or several summed: 7,11,13")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    seeds = [int(seed) for seed in str(args.seed).split(",")]
    found = []
    for seed in seeds:
        args.seed = seed  # planting and every RNG below derive from it
        found += [(seed, c) for c in conversations(args)]
    args.seed = ",".join(map(str, seeds))
    progress = Progress(sum(len(s.turns) for _, c in found for s in c.sessions))
    print(f"{len(found)} stores, {progress.total} turns, seeds {args.seed}", flush=True)
    totals: dict[str, dict[str, Scores]] = {}
    echoes: dict[str, EchoScores] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for seed, conversation in found:
            home = Path(tmp) / f"{seed}-{conversation.dataset}-{conversation.name}"
            one = argparse.Namespace(**(vars(args) | {"seed": seed}))
            systems, echo = evaluate(conversation, home, one, progress)
            total = totals.setdefault(conversation.dataset, {})
            for system, scores in systems.items():
                total.setdefault(system, Scores()).add(scores)
            echoes.setdefault(conversation.dataset, EchoScores()).add(echo)
    results = {
        dataset: {system: s.row() for system, s in systems.items()}
        | {"echo": echoes[dataset].row()}
        for dataset, systems in totals.items()
    }
    table(results)
    wall = time.perf_counter() - started
    print(f"\nwall time {wall / 60:.1f} min")
    if args.json:
        payload = {"args": vars(args), "wall_seconds": round(wall, 1), "results": results}
        Path(args.json).write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
