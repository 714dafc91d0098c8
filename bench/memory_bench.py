"""Memory benchmark: evidence recall per retrieval mode, latency, ingest rate, disk, scale.

    python bench/memory_bench.py [DATASET.json] [--scale 100000] [--no-scale] [--no-recall]
                                 [--scale-dir DIR]

DATASET is in the LoCoMo format (default: a generated synthetic one, see
``bench/synthetic.py``).  Every QA item with evidence is asked in each mode; recall@k is
the share of its evidence turns found in the top k.  ``keyword`` is the BM25-only baseline
and ``semantic`` the vector-only baseline.

The scale run embeds ``--scale`` events for real (about 15 minutes for 100k on two idle
cores); ``--scale-dir`` keeps that store, so later runs reopen it and only measure queries.
shiyi runs BLAS on one thread (``shiyi.index.blas``: two threads doubled the p95 on two
cores); ``SHIYI_BLAS_THREADS=2`` or ``OPENBLAS_NUM_THREADS`` compares; the run prints which.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from synthetic import generate

from shiyi.config import load_settings
from shiyi.config.settings import Settings
from shiyi.index.blas import wanted_threads
from shiyi.llm.types import Message
from shiyi.memory.intake.worker import ENTITIES
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory
from shiyi.memory.transfer.importers import ImportedConversation, QAItem, detect_and_load

MODES = ("hybrid", "semantic", "keyword", "graph", "recent")
KS = (5, 10, 20)


def settings_for(home: Path, embedder: str = "local") -> Settings:
    settings = load_settings(home=home, workspace=home)
    settings.memory.embedder = embedder  # type: ignore[assignment]
    settings.memory.lock_timeout = 0
    return settings


def load_dataset(path: str | None) -> list[ImportedConversation]:
    if path:
        return detect_and_load(Path(path))
    tmp = Path(tempfile.mkdtemp()) / "synthetic_locomo.json"
    tmp.write_text(json.dumps(generate()), encoding="utf-8")
    return detect_and_load(tmp)


def ingest(memory: Memory, events: list[EventRecord]) -> float:
    started = time.perf_counter()
    memory.import_events(events)
    memory.worker.drain(timeout=7200)
    return len(events) / (time.perf_counter() - started)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def evaluate(memory: Memory, conversations: list[ImportedConversation]) -> None:
    questions: list[tuple[str, QAItem]] = [
        (c.session_id, qa) for c in conversations for qa in c.qa if qa.evidence
    ]
    print(f"\n{len(questions)} questions with evidence")
    header = "mode      " + "".join(f"  R@{k:<4}" for k in KS) + "   p50 ms  p95 ms"
    print(header)
    per_category: dict[str, dict[int | str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for mode in MODES:
        recalls: dict[int, list[float]] = {k: [] for k in KS}
        latencies: list[float] = []
        for session_id, qa in questions:
            started = time.perf_counter()
            hits = memory.retriever.search(qa.question, mode=mode, limit=max(KS), touch=False)  # type: ignore[arg-type]
            latencies.append((time.perf_counter() - started) * 1000)
            evidence = {f"{session_id}:{dia}" for dia in qa.evidence}
            ids = [hit.id for hit in hits]
            for k in KS:
                recalls[k].append(len(evidence & set(ids[:k])) / len(evidence))
            per_category[mode][qa.category].append(len(evidence & set(ids[:10])) / len(evidence))
        row = "".join(f"  {statistics.mean(recalls[k]):.3f} " for k in KS)
        p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
        print(f"{mode:<10}{row}  {p50:6.1f}  {p95:6.1f}")
    categories = sorted({c for m in per_category.values() for c in m}, key=str)
    print("\nrecall@10 per QA category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)")
    print("mode      " + "".join(f"  cat {c:<3}" for c in categories))
    for mode in MODES:
        cells = "".join(f"  {statistics.mean(per_category[mode][c]):.3f}  " for c in categories)
        print(f"{mode:<10}{cells}")


def disk_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def recall_run(dataset: str | None) -> None:
    conversations = load_dataset(dataset)
    events = [e for c in conversations for e in c.events]
    print(f"dataset: {len(conversations)} conversations, {len(events)} turns")
    with tempfile.TemporaryDirectory() as tmp:
        plain = Memory.open(settings_for(Path(tmp) / "plain", "none"), start_worker=False)
        rate = ingest(plain, events)
        plain.close()
        print(f"ingest without embedding: {rate:,.0f} events/s")
        settings = settings_for(Path(tmp) / "full")
        memory = Memory.open(settings, start_worker=False)
        rate = ingest(memory, events)
        print(f"ingest with embedding:    {rate:,.0f} events/s")
        evaluate(memory, conversations)
        memory.close()
        print(f"\ndisk: {disk_size(settings.memory_dir) / 1e6:.1f} MB for {len(events)} events")


def build_scale_store(memory: Memory, count: int) -> None:
    """Insert ``count`` synthetic events in bulk and embed them all (the slow part)."""
    from synthetic import FILLER

    topics = [f"{line} (topic {i % 997}, ticket #{i})" for i, line in enumerate(FILLER * 200)]
    started = time.perf_counter()
    batch: list[EventRecord] = []
    for i in range(count):
        text = f"{topics[i % len(topics)]} user{i % 5000} said item {i}"
        batch.append(
            EventRecord(
                f"s{i}",
                f"ses{i // 500}",
                f"run{i // 50}",
                1.6e9 + i * 60,
                "user",
                text,
                "imported",
                iteration=i % 50,
            )
        )
        if len(batch) == 5000:
            memory.store.add_events(batch)
            batch = []
    if batch:
        memory.store.add_events(batch)
    print(f"bulk insert: {count / (time.perf_counter() - started):,.0f} events/s")
    link_entities(memory)
    embed_all(memory)


def link_entities(memory: Memory) -> None:
    """Link every event to its names and topics through the worker's entity jobs, as a live
    store would be (a bulk insert skips them, and the graph path would then find nothing).
    The scale run uses the embedded store, whose Kuzu graph can list every event."""
    if memory.store.counts()["entities"]:
        return
    started = time.perf_counter()
    linked = 0
    for events in memory.store.graph.all_events():  # type: ignore[attr-defined]
        ids = [e.id for e in events]
        for at in range(0, len(ids), memory.worker.batch):
            memory.jobs.enqueue(ENTITIES, {"ids": ids[at : at + memory.worker.batch]})
        memory.worker.drain(timeout=3600)
        linked += len(ids)
        print(f"  entities linked: {linked:,} events", end="\r", flush=True)
    took = time.perf_counter() - started
    entities = memory.store.counts()["entities"]
    print(f"entities linked: {linked:,} events, {entities:,} entities: {linked / took:,.0f}/s")


def embed_all(memory: Memory) -> None:
    """Embed every event still without a vector (all of them, or the rest after a kill)."""
    started = time.perf_counter()
    embedded = memory.reindex()
    print(f"embedded {embedded:,} events: {embedded / (time.perf_counter() - started):,.0f}/s")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS after building: {rss:.0f} MB")


def timed(run: Callable[[str], object], queries: list[str]) -> list[float]:
    latencies = []
    for query in queries:
        t0 = time.perf_counter()
        run(query)
        latencies.append((time.perf_counter() - t0) * 1000)
    return latencies


def report(name: str, latencies: list[float], target: str) -> None:
    p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
    print(f"{name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms ({target})")


def forget_query_vectors(memory: Memory, queries: list[str]) -> None:
    """Drop cached query vectors: on a kept store, a re-run would otherwise skip embedding."""
    cache = getattr(memory.embedder, "cache", None)
    if cache is not None:
        cache.delete_texts(queries)


def path_breakdown(memory: Memory, queries: list[str]) -> None:
    """Each step of a hybrid query on its own (sequentially), for finding what is slow."""
    store, retriever, embedder = memory.store, memory.retriever, memory.embedder
    assert embedder is not None
    steps: dict[str, list[float]] = defaultdict(list)

    @contextmanager
    def step(name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        steps[name].append((time.perf_counter() - t0) * 1000)

    for query in queries:
        with step("embed query"):
            vector = embedder.embed([query])[0]
        with step("vector scan"):
            found = store.vector_search("event", vector, 20)
            found += store.vector_search("fact", vector, 20)
        with step("keyword (FTS5)"):
            found += store.keyword_search(query, 20)
        with step("graph"):
            names = retriever.query_entities(query)
            if names:
                around = store.neighbourhood(names, 2, 20)
                found += [*around.event_ids, *around.fact_ids]
        with step("recent"):
            store.recent_events(5)
        ids = list(dict.fromkeys(s.id for s in found))
        with step("get_events"):
            store.get_events(ids)
        with step("get_facts"):
            store.get_facts(ids)
        with step("touch (10 ids)"):
            store.touch(ids[:10], at=time.time())
    print("per step, run one after another:")
    for name, values in steps.items():
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        print(f"  {name:15} p50 {p50:5.1f} ms, p95 {p95:5.1f} ms")


def scale_run(count: int, scale_dir: Path | None = None) -> None:
    """Hybrid query latency and reply-path write latency with ``count`` stored events.

    With ``scale_dir`` the store is kept there: built on the first run, reopened (no insert,
    no embedding) on later ones, so query-side work can be re-measured in seconds.
    """
    threads = wanted_threads()
    blas = "set by OPENBLAS_NUM_THREADS etc." if threads is None else str(threads)
    print(f"\nscale run: {count:,} synthetic events (BLAS threads: {blas})")
    with tempfile.TemporaryDirectory() as tmp:
        home = scale_dir or Path(tmp) / "scale"
        settings = settings_for(home)
        memory = Memory.open(settings, start_worker=False)
        stored = memory.stats()["events"]
        if stored == 0:
            build_scale_store(memory, count)
        elif stored != count:
            memory.close()
            raise SystemExit(f"{home} holds {stored:,} events, not {count:,}; remove it")
        else:
            print(f"reusing the store in {home} ({stored:,} events)")
            link_entities(memory)  # a store kept from before the graph linked topics
            embed_all(memory)  # finishes a build that was interrupted while embedding
        started = time.perf_counter()
        memory.search("warm up", mode="hybrid", limit=10)
        first = (time.perf_counter() - started) * 1000
        print(f"first query (loads the vector matrix): {first:.0f} ms")
        queries = [f"what did user{i * 37 % 5000} say about topic {i}" for i in range(60)]
        forget_query_vectors(memory, queries)
        report(
            "hybrid query",
            timed(lambda q: memory.search(q, mode="hybrid", limit=10), queries),
            "target p95 < 50 ms",
        )
        report("prefetch", timed(memory.prefetch, queries), "target p95 < 20 ms")
        forget_query_vectors(memory, queries)
        path_breakdown(memory, queries)
        forget_query_vectors(memory, queries)
        writes = []
        for i in range(500):
            t0 = time.perf_counter()
            memory.record_message(
                Message("user", f"reply-path message {i}"),
                message_id=10**7 + i,
                session_id="live",
                run_id="live-run",
                iteration=i,
            )
            writes.append((time.perf_counter() - t0) * 1000)
        print(
            f"reply-path write: p50 {percentile(writes, 0.5):.2f} ms, "
            f"p95 {percentile(writes, 0.95):.2f} ms (target p95 < 10 ms)"
        )
        # Drop the queued live messages so a kept store stays at ``count`` events (close()
        # would otherwise ingest them).
        while queued := memory.jobs.claim(["ingest"], limit=1000):
            memory.jobs.complete([job.id for job in queued])
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS: {rss:.0f} MB; disk: {disk_size(settings.memory_dir) / 1e6:.0f} MB")
        memory.close()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset", nargs="?", help="LoCoMo-format JSON (default: generated)")
    parser.add_argument("--scale", type=int, default=100_000, help="events in the scale run")
    parser.add_argument("--no-scale", action="store_true", help="skip the scale run")
    parser.add_argument(
        "--scale-dir",
        type=Path,
        help="keep the scale store here: built if empty, reused (not rebuilt) otherwise",
    )
    parser.add_argument("--no-recall", action="store_true", help="skip the recall run")
    args = parser.parse_args(argv)
    if not args.no_recall:
        recall_run(args.dataset)
    if not args.no_scale:
        scale_run(args.scale, args.scale_dir)


if __name__ == "__main__":
    main(sys.argv[1:])
