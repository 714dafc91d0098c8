"""Memory benchmark: evidence recall per retrieval mode, latency, ingest rate, disk, scale.

    python bench/memory_bench.py [DATASET.json] [--scale 100000] [--no-scale]

DATASET is in the LoCoMo format (default: a generated synthetic one, see
``shiyi.memory.synthetic``).  Every QA item with evidence is asked in each mode; recall@k is
the share of its evidence turns found in the top k.  ``keyword`` is the BM25-only baseline
and ``semantic`` the vector-only baseline.
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
from pathlib import Path

from shiyi.config import load_settings
from shiyi.config.settings import Settings
from shiyi.llm.types import Message
from shiyi.memory.importers import ImportedConversation, QAItem, detect_and_load
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory
from shiyi.memory.synthetic import generate

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
    print("\nrecall@10 per QA category (1 single-hop, 2 multi-hop, 3 temporal, 4 open-domain)")
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


def scale_run(count: int) -> None:
    """Hybrid query latency and reply-path write latency with ``count`` stored events."""
    from shiyi.memory.synthetic import FILLER

    print(f"\nscale run: {count:,} synthetic events")
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(Path(tmp) / "scale")
        memory = Memory.open(settings, start_worker=False)
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
        started = time.perf_counter()
        embedded = memory.reindex()
        print(f"embedded {embedded:,} events: {embedded / (time.perf_counter() - started):,.0f}/s")
        queries = [f"what did user{i * 37 % 5000} say about topic {i}" for i in range(60)]
        latencies = []
        for query in queries:
            t0 = time.perf_counter()
            memory.search(query, mode="hybrid", limit=10)
            latencies.append((time.perf_counter() - t0) * 1000)
        print(
            f"hybrid query: p50 {percentile(latencies, 0.5):.1f} ms, "
            f"p95 {percentile(latencies, 0.95):.1f} ms (target p95 < 50 ms)"
        )
        prefetch = []
        for query in queries:
            t0 = time.perf_counter()
            memory.prefetch(query)
            prefetch.append((time.perf_counter() - t0) * 1000)
        print(
            f"prefetch: p50 {percentile(prefetch, 0.5):.1f} ms, "
            f"p95 {percentile(prefetch, 0.95):.1f} ms (target < 20 ms)"
        )
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
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS: {rss:.0f} MB; disk: {disk_size(settings.memory_dir) / 1e6:.0f} MB")
        memory.close()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset", nargs="?", help="LoCoMo-format JSON (default: generated)")
    parser.add_argument("--scale", type=int, default=100_000, help="events in the scale run")
    parser.add_argument("--no-scale", action="store_true", help="skip the scale run")
    args = parser.parse_args(argv)
    recall_run(args.dataset)
    if not args.no_scale:
        scale_run(args.scale)


if __name__ == "__main__":
    main(sys.argv[1:])
