"""Recall when a question is typed the ways people type to an assistant, beside baselines.

    python bench/asking_bench.py [../shared/data/locomo-dev.json] [--store-dir DIR] [--seed 7]

Each question of the LoCoMo-format file is asked as written and in forms people use (written
from general usage, not from any data set): all in small letters, all in capitals, after a
greeting ("hey, quick question - …"), as a request to recall ("Do you remember …", "Can you
remind me …", "Hi! I was wondering, …"), with thanks after it, and with one typing slip
(``slips.py``).  Printed: recall@10 per form for shiyi hybrid, hybrid with the framing kept
(``Boosts.framing`` off), hybrid with slips unread (``Boosts.slips`` off and the keyword
index's own reading too), and BM25, MiniLM and RRF(BM25, MiniLM) over the same turns.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import recall_bench as rb
from slips import slipped, slips_unread

from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_texts
from shiyi.memory.transfer.importers import ImportedConversation, QAItem, detect_and_load

Form = Callable[[str, random.Random], str]


def _lower_first(question: str) -> str:
    return question[:1].lower() + question[1:]


FORMS: dict[str, Form] = {
    "as written": lambda q, rng: q,
    "small letters": lambda q, rng: q.lower(),
    "capitals": lambda q, rng: q.upper(),
    "after a greeting": lambda q, rng: "hey, quick question - " + _lower_first(q),
    "do you remember": lambda q, rng: "Do you remember " + _lower_first(q),
    "can you remind me": lambda q, rng: "Can you remind me " + _lower_first(q),
    "I was wondering": lambda q, rng: "Hi! I was wondering, " + _lower_first(q),
    "with thanks": lambda q, rng: q + " thanks!",
    "one slip": slipped,
}


def off(memory: Memory, **flags: bool) -> Retriever:
    base = memory.retriever
    boosts = replace(base.boosts, **flags)
    return Retriever(base.store, base.embedder, base.weights, base.candidates, boosts=boosts)


def with_baselines(
    dataset: str, store_dir: str | None
) -> Iterator[tuple[ImportedConversation, Memory, rb.Ranker, rb.Ranker]]:
    """Each conversation of ``dataset`` with its store (kept in ``store_dir`` when given, built
    when missing) and BM25 and MiniLM rankers over its turns."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(store_dir) if store_dir else Path(tmp)
        for conversation in detect_and_load(Path(dataset)):
            home = root / conversation.session_id
            if not home.exists():
                rb.evaluate_conversation(conversation, home, (5, 10, 20), {})  # builds it
            memory = rb.open_memory(home)
            try:
                ids = [e.id for e in conversation.events]
                texts = indexed_texts(conversation.events)
                yield (
                    conversation,
                    memory,
                    rb.bm25_ranker(ids, texts),
                    rb.minilm_ranker(memory, ids, texts),
                )
            finally:
                memory.close()


def print_forms(found: dict[tuple[str, str], list[float]], forms: Sequence[str], what: str) -> None:
    """Recall@10 per system (rows) and form (columns)."""
    names = list(dict.fromkeys(name for name, _ in found))
    width = max(len(n) for n in names) + 2
    cell = max(14, *(len(form[:17]) for form in forms))
    print(f"recall@10 per {what} ({len(found[(names[0], forms[0])])} questions)")
    print(f"{'system':<{width}}" + "".join(f"  {form[:17]:>{cell}}" for form in forms))
    for name in names:
        cells = (statistics.mean(found[(name, form)]) for form in forms)
        print(f"{name:<{width}}" + "".join(f"  {value:{cell}.3f}" for value in cells))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(rb.DEFAULT_DATA))
    parser.add_argument("--store-dir", help="keep each conversation's store here and reuse it")
    parser.add_argument("--seed", type=int, default=7, help="draws the slips")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    found: dict[tuple[str, str], list[float]] = {}
    for conversation, memory, bm25, minilm in with_baselines(args.dataset, args.store_dir):
        rankers: dict[str, Callable[[QAItem], list[str]]] = {
            "shiyi hybrid": rb.shiyi_ranker(memory.retriever, "hybrid", 10),
            "hybrid, framing kept": rb.shiyi_ranker(off(memory, framing=False), "hybrid", 10),
            "hybrid, slips unread": rb.shiyi_ranker(off(memory, slips=False), "hybrid", 10),
            "baseline BM25": bm25,
            "baseline MiniLM": minilm,
            "baseline RRF(BM25, MiniLM)": rb.rrf_ranker(bm25, minilm),
        }
        for qa in rb.questions(conversation):
            evidence = rb.evidence_ids(conversation, qa)
            for form, make in FORMS.items():
                asked = replace(qa, question=make(qa.question, rng))
                for name, rank in rankers.items():
                    if name == "hybrid, slips unread":
                        with slips_unread():
                            hits = rank(asked)
                    else:
                        hits = rank(asked)
                    share = len(evidence & set(hits[:10])) / len(evidence)
                    found.setdefault((name, form), []).append(share)
    print_forms(found, list(FORMS), "form")
    return 0


if __name__ == "__main__":
    sys.exit(main())
