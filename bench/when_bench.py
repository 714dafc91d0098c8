"""Recall when a "when" question is asked the other ways people ask it, beside baselines.

    python bench/when_bench.py [../shared/data/locomo-dev.json] [--store-dir DIR]

Every question of the LoCoMo-format file that opens with "When" ("When did Ana start the
pottery class?") is asked as written and in the other openings English uses for the same
question, written from general usage, not from any data set: "On what date did …", "What day
did …", "Around when did …", "At what point did …", "Roughly when did …", "In which month
did …", "How long ago did …", "What time of year did …", and the question word moved to the
end ("Ana started the pottery class when?" is not made: it needs the verb's past tense, and
a wrong one would measure the rewrite).  A mechanism fitted to "When did" shows up as a form
where shiyi drops and the baselines do not.  Printed: recall@10 per form for shiyi hybrid,
hybrid without told-when (``Boosts.told_when``) and without time windows (``Boosts.time``),
shiyi keyword, and BM25, MiniLM and RRF(BM25, MiniLM) over the same turns.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace

import recall_bench as rb
from asking_bench import off, print_forms, with_baselines

from shiyi.memory.transfer.importers import QAItem

_WHEN = re.compile(r"^\s*when\b\s*", re.IGNORECASE)

OPENINGS: dict[str, str] = {
    "as written": "When",
    "on what date": "On what date",
    "what day": "What day",
    "around when": "Around when",
    "at what point": "At what point",
    "roughly when": "Roughly when",
    "in which month": "In which month",
    "how long ago": "How long ago",
    "time of year": "What time of year",
}


def reopened(question: str, opening: str) -> str:
    """``question`` with its opening "When" replaced by ``opening``."""
    return _WHEN.sub(opening + " ", question, count=1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(rb.DEFAULT_DATA))
    parser.add_argument("--store-dir", help="keep each conversation's store here and reuse it")
    args = parser.parse_args(argv)
    found: dict[tuple[str, str], list[float]] = {}
    for conversation, memory, bm25, minilm in with_baselines(args.dataset, args.store_dir):
        rankers: dict[str, Callable[[QAItem], list[str]]] = {
            "shiyi hybrid": rb.shiyi_ranker(memory.retriever, "hybrid", 10),
            "hybrid, no told-when": rb.shiyi_ranker(off(memory, told_when=False), "hybrid", 10),
            "hybrid, no time windows": rb.shiyi_ranker(off(memory, time=False), "hybrid", 10),
            "shiyi keyword": rb.shiyi_ranker(memory.retriever, "keyword", 10),
            "baseline BM25": bm25,
            "baseline MiniLM": minilm,
            "baseline RRF(BM25, MiniLM)": rb.rrf_ranker(bm25, minilm),
        }
        for qa in rb.questions(conversation):
            if not _WHEN.match(qa.question):
                continue
            evidence = rb.evidence_ids(conversation, qa)
            for form, opening in OPENINGS.items():
                asked = replace(qa, question=reopened(qa.question, opening))
                for name, rank in rankers.items():
                    share = len(evidence & set(rank(asked)[:10])) / len(evidence)
                    found.setdefault((name, form), []).append(share)
    print_forms(found, list(OPENINGS), "opening of a 'When' question")
    return 0


if __name__ == "__main__":
    sys.exit(main())
