"""The memory hint (prefetch) and a keyword search beside many facts of many users (Kuzu).

    python bench/facts_scale_bench.py [--facts 50000] [--users 50] [--store-dir DIR]

The recall benches' stores hold turns and no facts; a server's store may hold tens of
thousands of facts of many users.  Here ``--facts`` synthetic one-line facts (templates of
likes, homes, jobs and relatives' homes over a few words, each with its own number) are
written for ``--users`` users straight into the store and its keyword index, then one user's
prefetch and keyword search are timed over eight everyday messages, three rounds each:
p50 and p95 in ms.  ``--store-dir`` keeps the store for re-runs.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from shiyi.config import load_settings
from shiyi.memory.models import FactRecord
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory

THINGS = ["coffee", "tea", "jazz", "hiking", "chess", "sushi", "python", "rust", "tennis",
          "yoga", "pottery", "gardening", "baking", "cycling", "opera", "kayaking"]  # fmt: skip
PLACES = ["Leeds", "Porto", "Berlin", "Lyon", "Osaka", "Denver", "Quito", "Hanoi", "Tartu",
          "Cork"]  # fmt: skip
TEMPLATES = (
    "I like {t}",
    "I love {t} on weekends",
    "My favourite hobby is {t}",
    "I live in {p}",
    "I work at {p} Labs",
    "My sister lives in {p}",
    "I am learning {t}",
    "I stopped {t} last year",
)
MESSAGES = (
    "what tea do I like",
    "where do I live",
    "tell me about hiking",
    "I want to try pottery this weekend",
    "any jazz concerts?",
    "my sister in Lyon",
    "should I keep learning rust",
    "what about chess",
)
BATCH = 2000


def fill(memory: Memory, facts: int, users: int) -> None:
    rng = random.Random(7)
    now = time.time()
    batch: list[FactRecord] = []
    started = time.monotonic()
    for i in range(facts):
        text = rng.choice(TEMPLATES).format(t=rng.choice(THINGS), p=rng.choice(PLACES))
        batch.append(
            FactRecord(
                id=f"f{i:07d}",
                key=f"note {i}",
                value=f"{text} ({i})",
                user_id=f"u{i % users}",
                created_at=now,
                updated_at=now,
            )
        )
        if len(batch) == BATCH or i == facts - 1:
            memory.store.upsert_facts(batch)
            memory.store.index_keywords([(f.id, "fact", f.value) for f in batch])
            batch = []
            done = i + 1
            eta = (time.monotonic() - started) / done * (facts - done)
            print(f"  [{done}/{facts} facts] ETA {eta:.0f} s", flush=True)


def timed(run: Callable[[str], object], rounds: int = 3) -> str:
    times: list[float] = []
    for _ in range(rounds):
        for message in MESSAGES:
            began = time.perf_counter()
            run(message)
            times.append((time.perf_counter() - began) * 1000)
    times.sort()
    p95 = times[max(0, round(0.95 * len(times)) - 1)]
    return f"p50 {statistics.median(times):6.1f} ms   p95 {p95:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=50_000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--store-dir", type=Path, help="keep the store here for re-runs")
    args = parser.parse_args()
    home = args.store_dir or Path(tempfile.mkdtemp(prefix="shiyi-facts-scale-"))
    os.environ["SHIYI_HOME"] = str(home)
    memory = Memory.open(load_settings(), start_worker=False)
    try:
        if memory.store.counts().get("facts", 0) < args.facts:
            fill(memory, args.facts, args.users)
        counts = memory.store.counts()
        print(f"{counts['facts']} facts of {args.users} users in {home}")
        one = memory.scoped(Viewer("u7", memory.viewer.agent_id, memory.viewer.workspace_id))
        one.prefetch("warm up")
        print(f"prefetch (memory hint)   {timed(one.prefetch)}")
        print(f"keyword search           {timed(lambda m: one.search(m, mode='keyword'))}")
    finally:
        memory.close()


if __name__ == "__main__":
    main()
