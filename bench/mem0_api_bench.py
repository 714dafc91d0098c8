"""Recall through the mem0-shaped API beside shiyi's native recall, in the same run.

    python bench/mem0_api_bench.py [../shared/data/locomo-dev.json] [--ks 5,10,20]

Each LoCoMo-format conversation goes into two stores: natively (imported
with ``shiyi.memory.transfer.importers`` and searched with the retriever, as
``recall_bench.py`` does) and
through ``shiyi.compat.mem0.Memory``, as code written for mem0 would: each turn is one
``add(..., infer=False)`` with the conversation as ``user_id``, its session as ``run_id``,
the speaker as the message's ``name`` and ``metadata`` carrying the turn's time, speaker and
dialogue id; each question is one ``search(question, user_id=..., limit=max k)``, its hits
mapped back to dialogue ids through their metadata.  Recall@k is computed the same way for
both (``recall_bench.Tally``): the goal is the same numbers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from recall_bench import (
    DEFAULT_DATA,
    Tally,
    evidence_ids,
    open_memory,
    percentile,
    questions,
    shiyi_ranker,
)

from shiyi.compat.mem0 import Memory as Mem0Memory
from shiyi.memory.recall.query_signals import understand
from shiyi.memory.transfer.importers import ImportedConversation, detect_and_load


def native_tally(conversation: ImportedConversation, home: Path, tally: Tally) -> float:
    memory = open_memory(home)
    try:
        started = time.perf_counter()
        memory.import_events(conversation.events)
        memory.worker.drain(timeout=3600)
        took = time.perf_counter() - started
        rank = shiyi_ranker(memory.retriever, "hybrid", max(tally.ks))
        now = memory.retriever._now
        for qa in questions(conversation):
            began = time.perf_counter()
            found = rank(qa)
            tally.latencies.append((time.perf_counter() - began) * 1000)
            tally.add(
                found, evidence_ids(conversation, qa), qa, understand(qa.question, now).intent
            )
    finally:
        memory.close()
    return took


def mem0_tally(conversation: ImportedConversation, home: Path, tally: Tally) -> float:
    sample = conversation.session_id
    with Mem0Memory(memory=open_memory(home)) as m:
        try:
            started = time.perf_counter()
            for event in conversation.events:
                dia_id = event.id.split(":", 1)[1]  # "conv-26:D1:3" -> "D1:3"
                m.add(
                    [{"role": "user", "content": event.content, "name": event.role}],
                    user_id=sample,
                    run_id=event.run_id.split(":", 1)[1],  # "conv-26:session_1" -> "session_1"
                    metadata={"timestamp": event.ts, "speaker": event.role, "dia_id": dia_id},
                    infer=False,
                )
            took = time.perf_counter() - started
            now = m.native.retriever._now
            for qa in questions(conversation):
                began = time.perf_counter()
                hits = m.search(qa.question, user_id=sample, limit=max(tally.ks))["results"]
                tally.latencies.append((time.perf_counter() - began) * 1000)
                found = [f"{sample}:{hit['metadata']['dia_id']}" for hit in hits]
                tally.add(
                    found, evidence_ids(conversation, qa), qa, understand(qa.question, now).intent
                )
        finally:
            m.native.close()
    return took


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--ks", default="5,10,20", help="recall cut-offs (default 5,10,20)")
    args = parser.parse_args(argv)
    ks = tuple(int(k) for k in args.ks.split(","))
    conversations = detect_and_load(Path(args.dataset))
    count = sum(len(questions(c)) for c in conversations)
    turns = sum(len(c.events) for c in conversations)
    print(f"{args.dataset}: {len(conversations)} conversations, {turns} turns, {count} questions")
    native, mem0 = Tally(ks), Tally(ks)
    with tempfile.TemporaryDirectory() as tmp:
        for conversation in conversations:
            name = conversation.session_id
            took_native = native_tally(conversation, Path(tmp) / f"native-{name}", native)
            took_mem0 = mem0_tally(conversation, Path(tmp) / f"mem0-{name}", mem0)
            print(
                f"  {name}: {len(conversation.events)} turns stored natively in"
                f" {took_native:.1f} s (one import), through the mem0 API in {took_mem0:.1f} s"
                f" (one add per turn, each settled)",
                flush=True,
            )
    head = "".join(f"  R@{k:<4}" for k in ks)
    print(f"\n{'system':<28}{head}   p50 ms  p95 ms")
    for label, tally in (("shiyi native hybrid", native), ("shiyi via mem0 API", mem0)):
        row = "".join(f"  {tally.mean(k):.3f} " for k in ks)
        p50, p95 = percentile(tally.latencies, 0.5), percentile(tally.latencies, 0.95)
        print(f"{label:<28}{row}  {p50:7.1f} {p95:7.1f}")
    differing = sum(
        1
        for k in ks
        for a, b in zip(native.recalls[k], mem0.recalls[k], strict=True)
        if abs(a - b) > 1e-9
    )
    gaps = ", ".join(f"R@{k} {mem0.mean(k) - native.mean(k):+.3f}" for k in ks)
    print(
        f"\nmem0 API - native: {gaps}; per-question recall differs in {differing} of"
        f" {len(ks) * count} (question, k) pairs"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
