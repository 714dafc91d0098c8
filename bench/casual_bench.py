"""Recall when the memory itself was typed casually, beside baselines over the same turns.

    python bench/casual_bench.py [../shared/data/locomo-dev.json] [--store-dir DIR]

LoCoMo's turns are written with care: capitals on names and sentences, apostrophes, full
stops.  People chatting on a phone often type none of these ("went camping w caroline last
weekend, it was great"), and what shiyi reads from a turn (names, entities, topics, time
words) must not depend on them.  Each LoCoMo dev turn is stored in three forms, mechanical
rewrites of LoCoMo's own words (not data written for shiyi): as written; all in small
letters; and in small letters without apostrophes or full stops ("i'm" -> "im", "don't" ->
"dont").  The questions stay as written.  Printed per form, in one run: recall R@5 / R@10 /
R@20 and per category at R@10 for shiyi hybrid, shiyi's keyword and semantic paths, and
BM25, MiniLM and RRF(BM25, MiniLM) over the same turns.  ``--store-dir`` keeps each form's
stores (``DIR/<form>/<conversation>``) for re-runs.
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
from pathlib import Path
from typing import Any

import recall_bench as rb

from shiyi.memory.text.contextual import indexed_texts
from shiyi.memory.transfer.importers import detect_and_load

KS = (5, 10, 20)
_FULL_STOP = re.compile(r"\.+(?=\s|$)")

FORMS: dict[str, Callable[[str], str]] = {
    "as written": lambda text: text,
    "small letters": str.lower,
    "small, no ' or .": lambda text: _FULL_STOP.sub("", text.lower().replace("'", "")).replace(
        "\u2019", ""
    ),
}
SYSTEMS = ("BM25", "MiniLM", "RRF(BM25, MiniLM)", "shiyi keyword", "shiyi semantic", "hybrid")


def typed(data: list[dict[str, Any]], form: Callable[[str], str]) -> list[dict[str, Any]]:
    """The LoCoMo samples with every turn's text in ``form`` (questions as written)."""
    out: list[dict[str, Any]] = json.loads(json.dumps(data))  # a deep copy
    for sample in out:
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    turn["text"] = form(str(turn["text"]))
    return out


def run_form(
    data: list[dict[str, Any]],
    root: Path,
    scratch: Path,
    recalls: dict[tuple[str, int], list[float]],
) -> None:
    path = scratch / "turns.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for conversation in detect_and_load(path):
        home = root / conversation.session_id
        kept = home.exists()
        memory = rb.open_memory(home)
        try:
            if not kept:
                memory.import_events(conversation.events)
                memory.worker.drain(timeout=3600)
            ids = [e.id for e in conversation.events]
            texts = indexed_texts(conversation.events)
            bm25, minilm = rb.bm25_ranker(ids, texts), rb.minilm_ranker(memory, ids, texts)
            rankers = dict(
                zip(
                    SYSTEMS,
                    (
                        bm25,
                        minilm,
                        rb.rrf_ranker(bm25, minilm),
                        rb.shiyi_ranker(memory.retriever, "keyword", max(KS)),
                        rb.shiyi_ranker(memory.retriever, "semantic", max(KS)),
                        rb.shiyi_ranker(memory.retriever, "hybrid", max(KS)),
                    ),
                    strict=True,
                )
            )
            for qa in rb.questions(conversation):
                evidence = rb.evidence_ids(conversation, qa)
                for name, rank in rankers.items():
                    found = rank(qa)
                    for k in KS:
                        recall = len(evidence & set(found[:k])) / len(evidence)
                        recalls[(name, k)].append(recall)
                        if k == 10:
                            recalls[(f"{name}:{qa.category}", k)].append(recall)
        finally:
            memory.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(rb.DEFAULT_DATA))
    parser.add_argument("--store-dir", help="keep each form's stores here and reuse them")
    args = parser.parse_args(argv)
    raw = json.loads(Path(args.dataset).read_text(encoding="utf-8"))
    tables: dict[str, dict[tuple[str, int], list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for index, (label, form) in enumerate(FORMS.items()):
            root = Path(args.store_dir or tmp) / f"form-{index}"
            print(f"{label}: storing and asking ({root})", flush=True)
            tables[label] = defaultdict(list)
            run_form(typed(raw, form), root, Path(tmp), tables[label])
    categories = sorted({int(key.split(":")[1]) for key, _ in tables["as written"] if ":" in key})
    names = "".join(f"  {rb.CATEGORIES[c][:11]:>11}" for c in categories)
    print(f"\n{'form':<18}{'system':<20}" + "".join(f"  R@{k:<4}" for k in KS) + names)
    for label, table in tables.items():
        for system in SYSTEMS:
            row = "".join(f"  {statistics.mean(table[(system, k)]):.3f} " for k in KS)
            row += "".join(
                f"  {statistics.mean(table[(f'{system}:{c}', 10)]):11.3f}" for c in categories
            )
            print(f"{label:<18}{system:<20}{row}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
