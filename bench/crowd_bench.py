"""Recall of one user's own memories on a store another user has filled with the same words.

    python bench/crowd_bench.py --crowd-store DIR --alone-dir DIR [../shared/data/locomo-dev.json]
        [--postgres URL]

``--crowd-store`` is ``graph_scale_bench.py --hybrid``'s store: 100,000 turns of the default
user, copies of the LoCoMo dev turns, so every question's words are in thousands of another
user's turns.  Each dev conversation is imported into it again under a user of its own
(``guest-<n>``, its original ids), embedded by the worker, and every question asked as that
user.  Beside it, the same questions on each conversation alone in its own store
(``--alone-dir``: ``recall_bench.py --store-dir``'s stores, built if missing).  Prints
recall@5/10/20 of the hybrid, keyword and semantic modes both ways, and hybrid p50/p95.

The crowd store keeps the guests' turns: a re-run asks again without importing them.
``--postgres URL``: the crowded questions are asked of that PostgreSQL database instead, a
copy of the crowd store (``shiyi memory migrate --to URL`` run in ``--crowd-store`` with
``SHIYI_HOME`` set to it, after a first run has imported the guests).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from memory_bench import percentile
from recall_bench import DEFAULT_DATA, evidence_ids, open_memory, questions

from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from shiyi.memory.transfer.importers import ImportedConversation, detect_and_load

KS = (5, 10, 20)
MODES = ("hybrid", "keyword", "semantic")


def import_guest(memory: Memory, conversation: ImportedConversation, guest: Viewer) -> None:
    """The conversation's turns as ``guest``'s, unless a re-run finds them stored."""
    first = conversation.events[0].id
    if memory.store.get_events([first]):
        return
    started = time.perf_counter()
    turns = [replace(e, user_id=guest.user_id) for e in conversation.events]
    memory.import_events(turns)
    memory.worker.drain(timeout=3600)
    took = time.perf_counter() - started
    print(f"  {guest.user_id}: {len(turns)} turns imported and embedded in {took:.0f} s")


def ask(
    memory: Memory, conversation: ImportedConversation, viewer: Viewer
) -> tuple[dict[str, dict[int, list[float]]], list[float]]:
    """Recall at each k per mode, and hybrid latencies (ms), of every question."""
    recalls: dict[str, dict[int, list[float]]] = {m: {k: [] for k in KS} for m in MODES}
    latencies: list[float] = []
    for qa in questions(conversation):
        evidence = evidence_ids(conversation, qa)
        for mode in MODES:
            started = time.perf_counter()
            hits = memory.retriever.search(
                qa.question,
                mode=mode,  # type: ignore[arg-type]
                limit=max(KS),
                viewer=viewer,
                touch=False,
            )
            if mode == "hybrid":
                latencies.append((time.perf_counter() - started) * 1000)
            found = [hit.id for hit in hits]
            for k in KS:
                recalls[mode][k].append(len(evidence & set(found[:k])) / len(evidence))
    return recalls, latencies


def merge(into: dict[str, dict[int, list[float]]], more: dict[str, dict[int, list[float]]]) -> None:
    for mode, per_k in more.items():
        for k, values in per_k.items():
            into[mode][k] += values


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--crowd-store", type=Path, required=True)
    parser.add_argument("--alone-dir", type=Path, required=True)
    parser.add_argument("--postgres", help="ask the crowd store's copy in this database")
    args = parser.parse_args(argv)
    conversations = detect_and_load(Path(args.dataset))
    crowd = open_memory(args.crowd_store, args.postgres)
    results: dict[str, dict[str, dict[int, list[float]]]] = {
        way: {m: {k: [] for k in KS} for m in MODES} for way in ("alone", "crowded")
    }
    times: dict[str, list[float]] = {"alone": [], "crowded": []}
    try:
        others = crowd.stats()["events"]
        for n, conversation in enumerate(conversations):
            guest = Viewer(user_id=f"guest-{n}")
            import_guest(crowd, conversation, guest)
            alone = open_memory(args.alone_dir / conversation.session_id)
            try:
                if not alone.store.get_events([conversation.events[0].id]):
                    alone.import_events(conversation.events)
                    alone.worker.drain(timeout=3600)
                for way, memory, viewer in (("alone", alone, Viewer()), ("crowded", crowd, guest)):
                    ask(memory, conversation, viewer)  # warm caches, as in use
                    recalls, latencies = ask(memory, conversation, viewer)
                    merge(results[way], recalls)
                    times[way] += latencies
            finally:
                alone.close()
    finally:
        crowd.close()
    count = len(results["alone"]["hybrid"][KS[0]])
    where = "PostgreSQL" if args.postgres else "the embedded store"
    print(f"{count} questions; crowded: each user among {others:,} turns, all but theirs another's")
    print(f"crowded store: {where}")
    print(f"{'':<22}" + "".join(f"  R@{k:<4}" for k in KS) + "  hybrid p50   p95")
    for way in ("alone", "crowded"):
        for mode in MODES:
            cells = "".join(f"  {sum(v) / len(v):.3f}" for v in (results[way][mode][k] for k in KS))
            timing = ""
            if mode == "hybrid":
                p50, p95 = percentile(times[way], 0.5), percentile(times[way], 0.95)
                timing = f"  {p50:7.1f} ms {p95:5.1f} ms"
            print(f"{way + ' ' + mode:<22}{cells}{timing}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
