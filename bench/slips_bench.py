"""Recall when questions carry typing slips: shiyi with and without reading them, beside baselines.

    python bench/slips_bench.py [../shared/data/locomo-dev.json] [--store-dir DIR] [--seed 7]

Each question of the LoCoMo-format file is asked twice: as written, and with one typing slip
in one of its words of five or more letters (``slips.py``; drawn with ``--seed``).  The
slipped questions are generated from real ones; the turns searched are the real
conversation's.

Printed for both sets of questions, in one run over the same stores: shiyi hybrid and
keyword, each with slips read (the default) and not read, and the baselines BM25, MiniLM
and RRF(BM25, MiniLM) over ``"(day) Speaker: text"``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import recall_bench as rb
from slips import slipped, slips_unread

from shiyi.memory.text.contextual import indexed_texts
from shiyi.memory.transfer.importers import QAItem, detect_and_load

Ranker = Callable[[QAItem], list[str]]


def recall_at(found: Sequence[str], evidence: set[str], k: int) -> float:
    return len(evidence & set(found[:k])) / len(evidence)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(rb.DEFAULT_DATA))
    parser.add_argument("--store-dir", help="keep each conversation's store here and reuse it")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    ks = (5, 10, 20)
    rng = random.Random(args.seed)
    conversations = detect_and_load(Path(args.dataset))
    rows: dict[str, dict[int, list[float]]] = {}
    changed = 0
    asked = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.store_dir) if args.store_dir else Path(tmp)
        for conversation in conversations:
            home = root / conversation.session_id
            if not home.exists():
                rb.evaluate_conversation(conversation, home, ks, {})  # builds the store
            memory = rb.open_memory(home)
            try:
                ids = [e.id for e in conversation.events]
                texts = indexed_texts(conversation.events)
                bm25, minilm = rb.bm25_ranker(ids, texts), rb.minilm_ranker(memory, ids, texts)
                rankers: dict[str, Ranker] = {
                    "shiyi hybrid": rb.shiyi_ranker(memory.retriever, "hybrid", max(ks)),
                    "shiyi keyword": rb.shiyi_ranker(memory.retriever, "keyword", max(ks)),
                    "baseline BM25": bm25,
                    "baseline MiniLM": minilm,
                    "baseline RRF(BM25, MiniLM)": rb.rrf_ranker(bm25, minilm),
                }
                for qa in rb.questions(conversation):
                    evidence = rb.evidence_ids(conversation, qa)
                    typo = replace(qa, question=slipped(qa.question, rng))
                    asked += 1
                    changed += typo.question != qa.question
                    for label, question in (("as written", qa), ("one slip", typo)):
                        for name, rank in rankers.items():
                            found = rank(question)
                            row = rows.setdefault(f"{name}, {label}", {k: [] for k in ks})
                            for k in ks:
                                row[k].append(recall_at(found, evidence, k))
                        with slips_unread():
                            for name in ("shiyi hybrid", "shiyi keyword"):
                                found = rankers[name](question)
                                row = rows.setdefault(
                                    f"{name}, slips unread, {label}", {k: [] for k in ks}
                                )
                                for k in ks:
                                    row[k].append(recall_at(found, evidence, k))
            finally:
                memory.close()
    print(f"{asked} questions, {changed} with a slip (the rest have no word to slip)")
    width = max(len(name) for name in rows) + 2
    print(f"\n{'system':<{width}}" + "".join(f"  R@{k:<4}" for k in ks))
    for name in sorted(rows, key=lambda n: (n.endswith("one slip"), n)):
        print(f"{name:<{width}}" + "".join(f"  {statistics.mean(rows[name][k]):.3f} " for k in ks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
