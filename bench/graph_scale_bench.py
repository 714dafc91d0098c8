"""The graph, keyword and hybrid paths at scale, on real conversation text.

    python bench/graph_scale_bench.py [../shared/data/locomo-dev.json] [--events 100000]
                                      [--store-dir DIR] [--hybrid]

The 100k scale run of ``memory_bench.py`` stores synthetic lines that name almost nothing
(14 entities), so it cannot show what names and topics cost the graph path.  Here the real
LoCoMo dev turns are imported again and again (each copy a new conversation whose sessions
are shifted a year later, so dates and ids differ) until ``--events`` are stored, linked to
their names and topics by the worker, and then every dev question is asked of the graph path
(entity lookup plus up to two hops) and the keyword path.  Prints the linking rate, the
graph's size, and p50/p95 of each path.  ``--store-dir`` keeps the store for re-runs.

``--hybrid`` also times whole hybrid searches, and the same searches by a user who holds
none of the memories (every path crowded by another's: the widest they are asked again,
:mod:`shiyi.memory.recall.widen`).  Each distinct turn is embedded once (its
contextual text, as the worker embeds it) and its copies get the same vector: embedding 100k
turns would take 13 minutes here, and a scan costs the same whatever the vectors hold.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from memory_bench import percentile, timed

from shiyi.config import load_settings
from shiyi.memory.models import EventRecord
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_texts
from shiyi.memory.transfer.importers import ImportedConversation, detect_and_load

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
YEAR = 365 * 86400.0


def copies(conversations: list[ImportedConversation], count: int) -> list[EventRecord]:
    """``count`` events: the conversations' turns, copy after copy, each copy a year later."""
    turns = [e for c in conversations for e in c.events]
    events: list[EventRecord] = []
    for n in range(count // len(turns) + 1):
        for e in turns:
            if len(events) == count:
                return events
            events.append(
                replace(
                    e,
                    id=f"c{n}:{e.id}",
                    session_id=f"c{n}:{e.session_id}",
                    run_id=f"c{n}:{e.run_id}",
                    ts=e.ts + n * YEAR,
                )
            )
    return events


def build(memory: Memory, events: list[EventRecord]) -> None:
    started = time.perf_counter()
    for at in range(0, len(events), 5000):
        memory.import_events(events[at : at + 5000])
        memory.worker.drain(timeout=3600)
        done = at + min(5000, len(events) - at)
        rate = done / (time.perf_counter() - started)
        eta = (len(events) - done) / rate
        print(f"  {done:,} events stored and linked ({rate:,.0f}/s, ETA {eta:.0f} s)", flush=True)
    counts = memory.store.counts()
    took = time.perf_counter() - started
    print(
        f"stored and linked {len(events):,} events in {took:.0f} s ({len(events) / took:,.0f}/s):"
        f" {counts['entities']:,} entities"
    )


def give_vectors(memory: Memory, conversations: list[ImportedConversation], count: int) -> None:
    """Every stored copy gets the vector of the turn it copies (see the module doc)."""
    if not memory.store.events_missing_embeddings(1):
        return
    assert memory.embedder is not None
    turns = [e for c in conversations for e in c.events]
    started = time.perf_counter()
    texts = indexed_texts(turns)
    vectors = [
        v for at in range(0, len(texts), 64) for v in memory.embedder.embed(texts[at : at + 64])
    ]
    print(f"  embedded {len(turns):,} distinct turns in {time.perf_counter() - started:.0f} s")
    pairs = [
        (f"c{n}:{turn.id}", vector)
        for n in range(count // len(turns) + 1)
        for turn, vector in zip(turns, vectors, strict=True)
    ][:count]
    for at in range(0, len(pairs), 10_000):
        memory.store.set_embeddings("event", pairs[at : at + 10_000])
        print(
            f"  {min(at + 10_000, len(pairs)):,} of {len(pairs):,} copies given vectors", flush=True
        )


def report(name: str, values: list[float]) -> None:
    p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
    print(f"{name:<28} p50 {p50:6.1f} ms   p95 {p95:6.1f} ms")


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--store-dir", type=Path, required=True, help="where the store lives")
    parser.add_argument("--hybrid", action="store_true", help="give vectors, time hybrid too")
    args = parser.parse_args(argv)
    conversations = detect_and_load(Path(args.dataset))
    settings = load_settings(home=args.store_dir, workspace=args.store_dir)
    if not args.hybrid:
        settings.memory.embedder = "none"
    settings.memory.lock_timeout = 0
    settings.memory.lifecycle.extraction = False
    memory = Memory.open(settings, start_worker=False)
    try:
        # the default user's: crowd_bench.py adds other users' conversations to this store
        stored = memory.store.visible_counts(Viewer(), legacy=True).events
        if stored == 0:
            build(memory, copies(conversations, args.events))
        elif stored != args.events:
            raise SystemExit(f"{args.store_dir} holds {stored:,} events; remove it")
        if args.hybrid:
            give_vectors(memory, conversations, args.events)
        questions = [qa.question for c in conversations for qa in c.qa if qa.evidence]
        retriever = memory.retriever
        hybrid: list[float] = []
        elsewhere: list[float] = []
        guest = Viewer(user_id="guest")
        for _ in range(2):  # the second round is what is reported: caches warm, as in use
            graph = timed(lambda q: retriever.search(q, mode="graph", limit=10), questions)
            keyword = timed(lambda q: retriever.search(q, mode="keyword", limit=10), questions)
            lookup = timed(retriever.query_entities, questions)
            if args.hybrid:
                hybrid = timed(lambda q: retriever.search(q, mode="hybrid", limit=10), questions)
                elsewhere = timed(
                    lambda q: retriever.search(q, mode="hybrid", limit=10, viewer=guest), questions
                )
        print(f"{len(questions)} questions over {args.events:,} events:")
        report("graph path (search)", graph)
        report("  of which entity lookup", lookup)
        report("keyword path (search)", keyword)
        if hybrid:
            report("hybrid (all paths)", hybrid)
            report("  as a user who holds none", elsewhere)
    finally:
        memory.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
