"""Memory lifecycle benchmark with a scripted extraction model (no network, no LLM cost).

    python bench/lifecycle_bench.py [--facts 60] [--repeats 4] [--slots 60]

* extraction throughput: extraction jobs per second through the real worker, store and
  embedder (the scripted model answers instantly, so this measures shiyi's own cost);
* duplicate rate: a corpus that states each fact ``--repeats`` times in different words
  (key spelling, value paraphrase, entity aliases); target < 5% duplicate facts;
* knowledge update: ``--slots`` attributes whose value changes 1-3 times; the current value
  must rank first among fact hits for >= 95% of queries.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shiyi.config import load_settings
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory

START = 1_795_428_000.0
KEY_SPELLINGS = ("{k}", "{K}", "{k_}", " {k} ")
PARAPHRASES = ("{v}", "{v}.", "{V}", "really {v}")
ATTRIBUTES = ["favourite colour", "home city", "employer", "editor", "pet name", "shoe brand",
              "coffee order", "gym", "bank", "laptop", "car", "dentist", "team", "manager",
              "language", "band", "book", "podcast", "airline", "phone"]  # fmt: skip
VALUES = ["teal", "Lisbon", "Acme", "Helix", "Tofu", "Asics", "flat white", "Iron Temple",
          "Monzo", "ThinkPad", "Civic", "Dr. Wu", "payments", "Priya", "Rust", "Low",
          "Dune", "Hard Fork", "KLM", "Pixel", "Porto", "Globex", "Zed", "Biscuit",
          "Hoka", "cortado", "Vault", "N26", "Framework", "Corolla"]  # fmt: skip


def extraction_model(truth: dict[str, dict[str, Any]]) -> ScriptedModel:
    """Answers each extraction with the facts planted in its newest message."""

    def answer(request: ScriptedRequest) -> ScriptedReply:
        last = re.findall(r"\] user: (.*)", request.last.content)[-1].strip()
        payload = truth.get(last, {"entities": [], "relations": [], "facts": []})
        return ScriptedReply(tool_calls=(call("record_memories", payload),))

    return ScriptedModel([answer], repeat_last=True)


def open_memory(home: Path, truth: dict[str, dict[str, Any]]) -> Memory:
    settings = load_settings(home=home, workspace=home, cwd=home)
    model = extraction_model(truth)
    return Memory.open(settings, start_worker=False, extraction_model=lambda: model)


def event(i: int, text: str, session: str) -> EventRecord:
    return EventRecord(f"b{session}{i}", session, f"r{session}{i}", START + i * 60, "user",
                       text, "user_message")  # fmt: skip


def run_corpus(home: Path, messages: list[tuple[str, dict[str, Any]]], session: str) -> Memory:
    truth = dict(messages)
    memory = open_memory(home, truth)
    events = [event(i, text, session) for i, (text, _) in enumerate(messages)]
    memory.lifecycle.config.extraction = False  # ingest and embed first, then time extraction
    memory.import_events(events)
    memory.worker.drain(timeout=600)
    memory.lifecycle.config.extraction = True
    memory.lifecycle.queue_extraction(events)
    started = time.perf_counter()
    memory.worker.drain(timeout=1800)
    elapsed = time.perf_counter() - started
    print(f"  {len(events)} extraction jobs in {elapsed:.1f} s: {len(events) / elapsed:.1f} jobs/s")
    return memory


def duplicate_corpus(
    facts: int, repeats: int, rng: random.Random
) -> list[tuple[str, dict[str, Any]]]:
    messages = []
    for i in range(facts):
        key = f"{ATTRIBUTES[i % len(ATTRIBUTES)]} {i // len(ATTRIBUTES)}".strip()
        value = f"likes {VALUES[i % len(VALUES)]} {i}"
        for r in range(repeats):
            spelled = KEY_SPELLINGS[r % 4].format(k=key, K=key.title(), k_=key.replace(" ", "_"))
            said = PARAPHRASES[(r + i) % 4].format(v=value, V=value.upper())
            who = ["Sam Lee", "sam lee", "Sam Lee", "SAM LEE"][r % 4]
            payload = {
                "entities": [{"name": who, "type": "person"}],
                "facts": [{"key": spelled, "value": said, "confidence": 0.9, "about": [who]}],
            }
            messages.append((f"fact {i} said for the {r + 1}. time: {said}", payload))
    rng.shuffle(messages)
    return messages


def update_corpus(
    slots: int, rng: random.Random
) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, str]]:
    messages, current = [], {}
    for i in range(slots):
        key = f"{ATTRIBUTES[i % len(ATTRIBUTES)]} of project {i}"
        values = rng.sample(VALUES, rng.randint(2, 4))
        for step, value in enumerate(values):
            payload = {"facts": [{"key": key, "value": value, "confidence": 0.9}]}
            messages.append((f"update {step} for {key}: now {value}", payload))
        current[key] = values[-1]
    return messages, current  # in order: each slot's values change over time


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--slots", type=int, default=60)
    args = parser.parse_args(argv)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        print(f"duplicate corpus: {args.facts} facts x {args.repeats} wordings")
        memory = run_corpus(Path(tmp) / "dup", duplicate_corpus(args.facts, args.repeats, rng), "d")
        live = memory.store.facts_by_status(["active", "pending"], 100_000)
        duplicates = max(0, len(live) - args.facts)
        print(f"  live facts: {len(live)} for {args.facts} true facts; duplicate rate "
              f"{duplicates / max(1, len(live)):.1%} (target < 5%)")  # fmt: skip
        memory.close()

        messages, current = update_corpus(args.slots, rng)
        print(f"knowledge update: {args.slots} slots, {len(messages)} statements")
        memory = run_corpus(Path(tmp) / "upd", messages, "u")
        right, latencies = 0, []
        for key, value in current.items():
            started = time.perf_counter()
            hits = memory.search(f"what is the {key}?", limit=5)
            latencies.append((time.perf_counter() - started) * 1000)
            facts = [h for h in hits if h.node == "fact"]
            right += bool(facts) and facts[0].text.endswith(f": {value}")
        print(f"  current value ranked first: {right}/{len(current)} = "
              f"{right / len(current):.1%} (target >= 95%); query p50 "
              f"{sorted(latencies)[len(latencies) // 2]:.1f} ms")  # fmt: skip
        history = memory.history(key=next(iter(current)))
        print(f"  history of one slot: {[(f.value, f.status) for f in history]}")
        memory.close()


if __name__ == "__main__":
    main(sys.argv[1:])
