"""Recall when people chat in pieces: LoCoMo with each turn sent as its sentences.

    python bench/pieces_bench.py [../shared/data/locomo-dev.json] [--store-dir DIR]

LoCoMo's turns are whole paragraphs and no speaker ever sends two in a row; in real chats
people send one thing in several messages ("we went to the lake" / "caught 3 trout!!"), and
the message that answers a question may share none of its words.  This bench rewrites each
LoCoMo turn as its sentences, each a message of its own by the same speaker (an attached
picture goes with the last), imports them with shiyi's importer, and asks every question of
categories 1-4.  Two recalls at k, in one run beside BM25, MiniLM and RRF over the same
messages:

* **messages**: the share of the evidence turns' messages among the first k hits (an
  annotator of a chat marks the messages that say the answer: this counts them all; a hit
  that shows its burst's pieces with it counts each of them);
* **turns**: the share of evidence turns with any of their messages among the first k.

A hit showing a burst is more text to read, so the messages the first 10 hits show are
printed beside them (mean per question).

shiyi hybrid runs with and without bursts (:data:`~shiyi.memory.recall.boosts.BURST_SHARE`:
a message takes a share of the best other message its speaker sent in the same row), and
with bursts not grouped (:mod:`~shiyi.memory.recall.burst_hits`: a burst's pieces among the
hits are shown as one hit, so each takes a place of the top k), and shiyi's own keyword
and semantic paths alone (hybrid should stand above the better of them at every k).  The
rewrite is mechanical (a sentence split), not data written for shiyi: the words, questions
and evidence are LoCoMo's.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from recall_bench import (
    DEFAULT_DATA,
    Ranker,
    bm25_ranker,
    minilm_ranker,
    open_memory,
    questions,
    rrf_ranker,
)

from shiyi.memory.recall.config import Boosts, Mode
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.text.contextual import indexed_texts
from shiyi.memory.transfer.importers import ImportedConversation, QAItem, detect_and_load

HitRanker = Callable[[QAItem], list[list[str]]]
"""The messages of each of the first hits (a hit shows its burst's pieces with it)."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")
KS = (5, 10, 20)


def in_pieces(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The LoCoMo samples with every turn split into its sentences (dia_id ``D1:3`` ->
    ``D1:3.0``, ``D1:3.1``, ...); a question's evidence becomes every piece of its turns."""
    out: list[dict[str, Any]] = json.loads(json.dumps(data))  # a deep copy
    for sample in out:
        conversation = sample["conversation"]
        pieces: dict[str, list[str]] = {}
        for key, turns in list(conversation.items()):
            if key.startswith("session_") and isinstance(turns, list):
                conversation[key] = [p for turn in turns for p in _split(turn, pieces)]
        for qa in sample["qa"]:
            evidence = [e.strip() for e in qa.get("evidence") or []]
            qa["evidence"] = [p for e in evidence for p in pieces.get(e, [e])]
    return out


def _split(turn: dict[str, Any], pieces: dict[str, list[str]]) -> list[dict[str, Any]]:
    sentences = [s for s in SENTENCE_END.split(str(turn["text"]).strip()) if s.strip()]
    messages = []
    for index, sentence in enumerate(sentences or [str(turn["text"])]):
        message = dict(turn, text=sentence, dia_id=f"{turn['dia_id']}.{index}")
        if index < len(sentences) - 1:
            message.pop("blip_caption", None)  # the picture goes with the last message
        messages.append(message)
    pieces[turn["dia_id"]] = [m["dia_id"] for m in messages]
    return messages


def turn_of(message_id: str) -> str:
    """``conv-26:D1:3.1`` -> ``conv-26:D1:3``."""
    return message_id.rsplit(".", 1)[0]


def rankers(conversation: ImportedConversation, home: Path) -> tuple[dict[str, HitRanker], Any]:
    memory = open_memory(home)
    if not (home / ".imported").exists():
        memory.import_events(conversation.events)
        memory.worker.drain(timeout=3600)
        (home / ".imported").touch()
    ids = [e.id for e in conversation.events]
    texts = indexed_texts(conversation.events)
    bm25, minilm = bm25_ranker(ids, texts), minilm_ranker(memory, ids, texts)
    base = memory.retriever

    def without(**off: bool) -> Retriever:
        boosts = replace(Boosts(), **off)
        return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)

    return {
        "baseline BM25 (day speaker: text)": one_each(bm25),
        "baseline MiniLM (day speaker: text)": one_each(minilm),
        "baseline RRF(BM25, MiniLM), k=60": one_each(rrf_ranker(bm25, minilm)),
        "shiyi hybrid": shiyi_hits(base),
        "shiyi hybrid, no turns beside": shiyi_hits(without(beside=False)),
        "shiyi hybrid, bursts not grouped": shiyi_hits(without(grouped=False)),
        "shiyi hybrid, no bursts": shiyi_hits(without(bursts=False, grouped=False)),
        "shiyi keyword": shiyi_hits(base, "keyword"),
        "shiyi semantic": shiyi_hits(base, "semantic"),
    }, memory


def one_each(rank: Ranker) -> HitRanker:
    return lambda qa: [[found] for found in rank(qa)]


def shiyi_hits(retriever: Retriever, mode: Mode = "hybrid") -> HitRanker:
    """Each hit's messages: itself and the pieces of its burst shown with it."""

    def rank(qa: QAItem) -> list[list[str]]:
        hits = retriever.search(qa.question, mode=mode, limit=max(KS), touch=False)
        return [[hit.id, *hit.joined] for hit in hits]

    return rank


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--store-dir", help="keep each conversation's store here and reuse it")
    args = parser.parse_args(argv)
    raw = json.loads(Path(args.dataset).read_text(encoding="utf-8"))
    messages: dict[str, list[float]] = defaultdict(list)
    turns: dict[str, list[float]] = defaultdict(list)
    sizes: dict[str, list[int]] = defaultdict(list)  # messages shown in the first 10 hits
    with tempfile.TemporaryDirectory() as tmp:
        split = Path(tmp) / "pieces.json"
        split.write_text(json.dumps(in_pieces(raw)), encoding="utf-8")
        conversations = detect_and_load(split)
        count = sum(len(c.events) for c in conversations)
        print(f"{args.dataset} in pieces: {len(conversations)} conversations, {count} messages")
        root = Path(args.store_dir) if args.store_dir else Path(tmp)
        for conversation in conversations:
            ranked, memory = rankers(conversation, root / conversation.session_id)
            try:
                for qa in questions(conversation):
                    wanted = {f"{conversation.session_id}:{d}" for d in qa.evidence}
                    whole = {turn_of(m) for m in wanted}
                    for name, rank in ranked.items():
                        found = rank(qa)
                        for k in KS:
                            shown = {message for hit in found[:k] for message in hit}
                            messages[f"{name}@{k}"].append(len(wanted & shown) / len(wanted))
                            owners = {turn_of(m) for m in shown}
                            if k == 10:
                                sizes[name].append(len(shown))
                            turns[f"{name}@{k}"].append(len(whole & owners) / len(whole))
            finally:
                memory.close()
    head = "".join(f"  msg R@{k:<3}" for k in KS) + "".join(f"  turn R@{k:<2}" for k in KS)
    print(f"\n{'system':<38}{head}  msgs in 10 hits")
    for name in ranked:
        cells = [statistics.mean(messages[f"{name}@{k}"]) for k in KS]
        cells += [statistics.mean(turns[f"{name}@{k}"]) for k in KS]
        size = statistics.mean(sizes[name])
        print(f"{name:<38}" + "".join(f"  {value:9.3f}" for value in cells) + f"  {size:15.1f}")
    print_verdict(messages, turns)
    return 0


def print_verdict(messages: dict[str, list[float]], turns: dict[str, list[float]]) -> None:
    """Whether hybrid stands at or above the better of shiyi's single paths at every k."""
    for label, table in (("messages", messages), ("turns", turns)):
        cells = []
        for k in KS:
            hybrid = statistics.mean(table[f"shiyi hybrid@{k}"])
            single = max(statistics.mean(table[f"shiyi {m}@{k}"]) for m in ("keyword", "semantic"))
            cells.append((k, hybrid, single))
        verdict = "yes" if all(h >= s for _, h, s in cells) else "NO"
        detail = ", ".join(f"R@{k} {h:.3f} vs {s:.3f}" for k, h, s in cells)
        print(f"hybrid >= best single path at every k ({label}): {verdict} ({detail})")


if __name__ == "__main__":
    sys.exit(main())
