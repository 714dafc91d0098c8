"""The memory benchmark on PostgreSQL next to the embedded store (Kuzu + SQLite).

    python bench/postgres_bench.py [DATASET.json] [--url postgresql://...] [--bulk N]

Both backends ingest the same dataset (default: the generated synthetic LoCoMo set, 1,200
turns) with the same embedder; every QA item with evidence is then asked in each mode, and
the table shows recall@k and latency per backend, plus how many result lists are identical.
Without ``--url`` a throwaway PostgreSQL 18 + pgvector is started on loopback.

Also measured on PostgreSQL: HNSW's recall@20 (``hnsw.ef_search`` = 200) against exact
search (the store scans exactly below 10,000 rows, so the recall table uses exact search),
and, with ``--bulk N``, how fast N events load through ``COPY`` (no embedding).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from memory_bench import KS, MODES, ingest, load_dataset, percentile, settings_for

from shiyi.memory.models import EventRecord
from shiyi.memory.postgres import reads
from shiyi.memory.postgres.rows import vector_literal
from shiyi.memory.postgres.server import start_local_postgres
from shiyi.memory.postgres.store import PostgresStore
from shiyi.memory.service import Memory
from shiyi.memory.transfer.importers import ImportedConversation, QAItem

Results = dict[tuple[str, int], list[str]]


def questions_of(conversations: list[ImportedConversation]) -> list[tuple[str, QAItem]]:
    return [(c.session_id, qa) for c in conversations for qa in c.qa if qa.evidence]


def run_backend(
    name: str, store: str, home: Path, conversations: list[ImportedConversation]
) -> tuple[dict[str, dict[str, float]], Results, float]:
    """Ingest, then ask every question in every mode: (metrics per mode, ids, ingest rate)."""
    settings = settings_for(home)
    settings.memory.store = store
    memory = Memory.open(settings, start_worker=False)
    try:
        rate = ingest(memory, [e for c in conversations for e in c.events])
        metrics: dict[str, dict[str, float]] = {}
        results: Results = {}
        questions = questions_of(conversations)
        for mode in MODES:
            recalls: dict[int, list[float]] = {k: [] for k in KS}
            latencies: list[float] = []
            for index, (session_id, qa) in enumerate(questions):
                started = time.perf_counter()
                hits = memory.retriever.search(
                    qa.question,
                    mode=mode,  # type: ignore[arg-type]
                    limit=max(KS),
                    touch=False,
                )
                latencies.append((time.perf_counter() - started) * 1000)
                evidence = {f"{session_id}:{dia}" for dia in qa.evidence}
                ids = [hit.id for hit in hits]
                results[(mode, index)] = ids
                for k in KS:
                    recalls[k].append(len(evidence & set(ids[:k])) / len(evidence))
            metrics[mode] = {f"R@{k}": statistics.mean(recalls[k]) for k in KS}
            metrics[mode]["p50"] = percentile(latencies, 0.5)
            metrics[mode]["p95"] = percentile(latencies, 0.95)
        if name == "postgres":
            hnsw_agreement(memory, [qa.question for _, qa in questions])
        return metrics, results, rate
    finally:
        memory.close()


def hnsw_agreement(memory: Memory, queries: list[str]) -> None:
    """HNSW's recall@20 against exact search over ``queries``: the share of its hits that
    are as similar as the exact 20th (by score, since duplicate texts tie and exact search
    picks the earliest embedded among them)."""
    assert memory.embedder is not None and isinstance(memory.store, PostgresStore)
    vectors = memory.embedder.embed(queries)
    good = total = 0
    timings: dict[bool, list[float]] = {True: [], False: []}
    with memory.store._tx() as conn:
        for vector in vectors:
            literal = vector_literal(vector)
            found = {}
            for exact in (True, False):
                started = time.perf_counter()
                found[exact] = reads.nearest(conn, "events", "id", literal, 20, exact=exact)
                timings[exact].append((time.perf_counter() - started) * 1000)
            if not found[True]:
                continue
            cut = found[True][-1].score
            good += sum(1 for hit in found[False] if hit.score >= cut)
            total += len(found[True])
    print(
        f"\nHNSW (ef_search {reads.HNSW_EF_SEARCH}) recall@20 against exact search on "
        f"PostgreSQL: {good / max(total, 1):.1%}; p50 {percentile(timings[False], 0.5):.1f} ms"
        f" (exact: {percentile(timings[True], 0.5):.1f} ms)"
    )


def print_table(
    metrics: dict[str, dict[str, dict[str, float]]], rates: dict[str, float], same: dict[str, float]
) -> None:
    print(
        "\ningest with embedding: " + ", ".join(f"{b} {r:,.0f} events/s" for b, r in rates.items())
    )
    columns = [f"R@{k}" for k in KS]
    print(f"\n{'mode':<9}{'backend':<10}" + "".join(f"{c:>7}" for c in columns)
          + f"{'p50 ms':>9}{'p95 ms':>9}   identical lists")  # fmt: skip
    for mode in MODES:
        for backend, per_mode in metrics.items():
            row = per_mode[mode]
            cells = "".join(f"{row[c]:>7.3f}" for c in columns)
            tail = f"   {same[mode]:.1%}" if backend == "postgres" else ""
            print(f"{mode:<9}{backend:<10}{cells}{row['p50']:>9.1f}{row['p95']:>9.1f}{tail}")


def bulk_load(url: str, count: int) -> None:
    """Events through ``COPY`` (the migration and large imports), without embedding."""
    store = PostgresStore(url)
    try:
        events = [
            EventRecord(f"b{i}", f"bulk{i // 500}", f"run{i // 50}", 1.6e9 + i * 60, "user",
                        f"bulk note {i} about topic {i % 997} for user{i % 5000}", "imported",
                        iteration=i % 50)
            for i in range(count)
        ]  # fmt: skip
        started = time.perf_counter()
        for start in range(0, count, 20_000):
            store.bulk_add_events(events[start : start + 20_000])
        seconds = time.perf_counter() - started
        print(f"\nbulk COPY: {count:,} events in {seconds:.1f} s ({count / seconds:,.0f}/s)")
    finally:
        store.close()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dataset", nargs="?", help="LoCoMo-format JSON (default: generated)")
    parser.add_argument("--url", help="an existing PostgreSQL database (default: a throwaway)")
    parser.add_argument("--bulk", type=int, default=0, help="also COPY this many events")
    args = parser.parse_args(argv)
    conversations = load_dataset(args.dataset)
    events = sum(len(c.events) for c in conversations)
    print(f"dataset: {len(conversations)} conversations, {events} turns, "
          f"{len(questions_of(conversations))} questions with evidence")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # as root the server runs as `nobody`
        server = None if args.url else start_local_postgres(root / "pg")
        url = args.url or (server.url if server else "")
        try:
            metrics, results, rates = {}, {}, {}
            for name, store in (("embedded", "embedded"), ("postgres", url)):
                metrics[name], results[name], rates[name] = run_backend(
                    name, store, root / name, conversations
                )
            same = {
                mode: statistics.mean(
                    results["embedded"][key] == results["postgres"][key]
                    for key in results["embedded"]
                    if key[0] == mode
                )
                for mode in MODES
            }
            print_table(metrics, rates, same)
            if args.bulk:
                bulk_load(url, args.bulk)
        finally:
            if server is not None:
                server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
