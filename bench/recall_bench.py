"""Recall on real conversations: shiyi's retrieval modes beside BM25 and MiniLM baselines.

    python bench/recall_bench.py [../shared/data/locomo-dev.json] [--ks 5,10,20]
    python bench/recall_bench.py ../shared/data/realmem-dev    # the RealMem protocol
    python bench/recall_bench.py --speakers handles --ask-by nicknames   # people named otherwise

A folder of RealMem personas runs ``realmem_bench`` (online, session level, with its BM25,
MiniLM and RRF baselines).

Each conversation of the LoCoMo-format file goes into its own store (one memory per person,
as a user has), imported with ``shiyi.memory.transfer.importers`` and embedded by the worker.  Every
question of categories 1-4 with evidence is asked; recall@k is the share of its evidence
turns among the first k hits (and, at session level, the share of the evidence's sessions that
own one of the first k hits, as the RealMem protocol counts).  In the same run, over the same turns:

* baselines: BM25 (``bm25s``, English stop words) and all-MiniLM-L6-v2 cosine, each over the
  bare text and over ``"(day) Speaker: text"``, and RRF(BM25, MiniLM) with k=60;
* shiyi's modes (hybrid, semantic, keyword, graph, recent) with query p50/p95;
* hybrid with each mechanism off in turn (RRF instead of score fusion, no query boosts, a
  question's typing slips not read before the paths search (the keyword index still reads
  them), a question's greeting, request to recall and thanks kept, no speakers, no time
  windows, no told-when (nor told how often), no episodes, no neighbours, no bursts (a
  no-op here: no LoCoMo speaker sends two turns in a row; see
  ``pieces_bench.py``), no turns beside the best hits joining the candidates, no run
  coverage, no graph bridge, no run spread or run similarity (both only act in a
  user–assistant memory), the graph path not voting);
* neighbour expansion: the top 5 hits each bring the turns before and after them, counted
  separately (``R@5+nb``: evidence among the hits and their neighbours);
* hybrid recall@10 per LoCoMo category and per detected intent.

``--speakers handles`` and ``--ask-by nicknames`` ask the same questions of people named
otherwise than their speaker fields (:mod:`name_probes`).

Categories, as LoCoMo's evaluation code treats them: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop (5, adversarial, has no evidence to find and is skipped).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import name_probes
import numpy as np
from paired import print_above_best_single, print_paired
from per_unit import print_per_unit

from shiyi.config import load_settings
from shiyi.memory.recall.config import MODES, Boosts, RerankWeights
from shiyi.memory.recall.query_signals import understand
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from shiyi.memory.text.contextual import indexed_texts
from shiyi.memory.transfer.importers import ImportedConversation, QAItem, detect_and_load

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
Ranker = Callable[[QAItem], list[str]]


@dataclass
class Tally:
    """Recall per question at several k, with category and intent, and latencies."""

    ks: tuple[int, ...]
    recalls: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[int | str, list[float]] = field(default_factory=lambda: defaultdict(list))
    sessions: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    """Session level: the share of the evidence's sessions owning one of the top k turns."""
    sessions_by_category: dict[int | str, list[float]] = field(
        default_factory=lambda: defaultdict(list)
    )
    by_intent: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_conversation: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    latencies: list[float] = field(default_factory=list)

    def add(
        self, found: Sequence[str], evidence: set[str], qa: QAItem, intent: str, unit: str = ""
    ) -> None:
        wanted = {_session_of(turn) for turn in evidence}
        for k in self.ks:
            self.recalls[k].append(len(evidence & set(found[:k])) / len(evidence))
            owners = {_session_of(turn) for turn in found[:k]}
            self.sessions[k].append(len(wanted & owners) / len(wanted))
        self.sessions_by_category[qa.category].append(
            self.sessions[10][-1] if 10 in self.ks else 0.0
        )
        at10 = len(evidence & set(found[:10])) / len(evidence)
        self.by_category[qa.category].append(at10)
        self.by_intent[intent].append(at10)
        self.by_conversation[unit].append(at10)

    def mean(self, k: int) -> float:
        return statistics.mean(self.recalls[k]) if self.recalls[k] else 0.0


def _session_of(turn: str) -> str:
    """``conv-26:D3:7`` -> ``conv-26:D3`` (LoCoMo dialogue ids are ``D<session>:<turn>``)."""
    return turn.rsplit(":", 1)[0]


def questions(conversation: ImportedConversation) -> list[QAItem]:
    return [qa for qa in conversation.qa if qa.evidence and qa.category in CATEGORIES]


def evidence_ids(conversation: ImportedConversation, qa: QAItem) -> set[str]:
    return {f"{conversation.session_id}:{dia}" for dia in qa.evidence}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


# --- baselines over the same turns ----------------------------------------------------------


def bm25_ranker(ids: list[str], texts: list[str]) -> Ranker:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def rank(qa: QAItem) -> list[str]:
        tokens = bm25s.tokenize([qa.question], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = retriever.retrieve(tokens, k=min(len(ids), 50), show_progress=False)
        return [ids[i] for i in docs[0]]

    return rank


def minilm_ranker(memory: Memory, ids: list[str], texts: list[str]) -> Ranker:
    assert memory.embedder is not None
    matrix = np.array(memory.embedder.embed(texts), dtype=np.float32)

    def rank(qa: QAItem) -> list[str]:
        query = np.array(memory.embedder.embed([qa.question])[0], dtype=np.float32)  # type: ignore[union-attr]
        return [ids[i] for i in np.argsort(-(matrix @ query))[:50]]

    return rank


def rrf_ranker(first: Ranker, second: Ranker, k: int = 60) -> Ranker:
    def rank(qa: QAItem) -> list[str]:
        scores: dict[str, float] = defaultdict(float)
        for ranked in (first(qa), second(qa)):
            for position, key in enumerate(ranked, start=1):
                scores[key] += 1 / (k + position)
        return sorted(scores, key=scores.__getitem__, reverse=True)

    return rank


# --- shiyi ----------------------------------------------------------------------------------


def shiyi_ranker(retriever: Retriever, mode: str, limit: int) -> Ranker:
    def rank(qa: QAItem) -> list[str]:
        hits = retriever.search(qa.question, mode=mode, limit=limit, touch=False)  # type: ignore[arg-type]
        return [hit.id for hit in hits]

    return rank


def with_neighbours(memory: Memory, retriever: Retriever, top: int) -> Ranker:
    """The top hits, each followed by the turns just before and after it in its run."""

    def rank(qa: QAItem) -> list[str]:
        found: list[str] = []
        for hit in retriever.search(qa.question, limit=top, touch=False):
            found.append(hit.id)
            if hit.anchor is not None:
                found += [e.id for e in memory.store.expand(hit.anchor, 1)]
        return list(dict.fromkeys(found))

    return rank


def variants(memory: Memory) -> dict[str, Retriever]:
    """Hybrid with each mechanism off in turn, sharing the store and embedder."""
    base = memory.retriever

    def like(**kw: object) -> Retriever:
        options: dict[str, object] = {
            "weights": base.weights,
            "candidates": base.candidates,
            "fusion": base.fusion,
            "boosts": base.boosts,
        } | kw
        return Retriever(base.store, base.embedder, **options)  # type: ignore[arg-type]

    every = Boosts()
    return {
        "hybrid, RRF fusion (old)": like(fusion="rrf", boosts=Boosts.none()),
        "hybrid, no query boosts": like(boosts=Boosts.none()),
        "hybrid, slips as typed": like(boosts=replace(every, slips=False)),
        "hybrid, framing kept": like(boosts=replace(every, framing=False)),
        "hybrid, no speakers": like(boosts=replace(every, speakers=False)),
        "hybrid, speakers by exact name only": like(boosts=replace(every, aliases=False)),
        "hybrid, speakers' names embedded": like(boosts=replace(every, speaker_words=False)),
        "hybrid, no time windows": like(boosts=replace(every, time=False)),
        "hybrid, no told-when": like(boosts=replace(every, told_when=False)),
        "hybrid, no episodes": like(boosts=replace(every, episodes=False)),
        "hybrid, no neighbours": like(boosts=replace(every, neighbours=False)),
        "hybrid, no bursts": like(boosts=replace(every, bursts=False)),
        "hybrid, no turns beside": like(boosts=replace(every, beside=False)),
        "hybrid, no run coverage": like(boosts=replace(every, coverage=False)),
        "hybrid, asking turns not lowered": like(boosts=replace(every, asking=False)),
        "hybrid, no graph bridge": like(boosts=replace(every, bridge=False)),
        "hybrid, no run spread": like(boosts=replace(every, spread=False)),
        "hybrid, no run similarity": like(boosts=replace(every, run_similarity=False)),
        "hybrid, no run feedback": like(boosts=replace(every, feedback=False)),
        "hybrid, no said-by": like(boosts=replace(every, said_by=False)),
        "hybrid, bursts not grouped": like(boosts=replace(every, grouped=False)),
        "hybrid, people asked together not in turn": like(boosts=replace(every, jointly=False)),
        "hybrid, English share ignored": like(boosts=replace(every, language=False)),
        "hybrid, graph path not voting": like(weights=_without_graph(base.weights)),
    }


def _without_graph(weights: RerankWeights) -> RerankWeights:
    paths = dict(weights.path_weights) | {"graph": 0.0}
    return replace(weights, path_weights=paths)


# --- the run ----------------------------------------------------------------------------------


EMBED_MODEL = "all-MiniLM-L6-v2"


def open_memory(home: Path, store: str | None = None) -> Memory:
    """``home``'s memory; ``store``: a PostgreSQL URL to use instead of its embedded store."""
    settings = load_settings(home=home, workspace=home)
    if store is not None:
        settings.memory.store = store
    settings.memory.embed_model = EMBED_MODEL
    settings.memory.lock_timeout = 0
    settings.memory.lifecycle.extraction = False
    return Memory.open(settings, start_worker=False)


def evaluate_conversation(
    conversation: ImportedConversation, home: Path, ks: tuple[int, ...], tallies: dict[str, Tally]
) -> None:
    kept = home.exists()
    memory = open_memory(home)
    try:
        started = time.perf_counter()
        if not kept:
            memory.import_events(conversation.events)
            memory.worker.drain(timeout=3600)
            took = time.perf_counter() - started
            print(
                f"  {conversation.session_id}: {len(conversation.events)} turns imported and"
                f" embedded in {took:.1f} s ({len(conversation.events) / took:.0f}/s)",
                flush=True,
            )
        rankers = build_rankers(memory, conversation, max(ks))
        now = memory.retriever._now
        for qa in questions(conversation):
            evidence = evidence_ids(conversation, qa)
            intent = understand(qa.question, now).intent
            for name, rank in rankers.items():
                tally = tallies.setdefault(name, Tally(ks))
                started = time.perf_counter()
                found = rank(qa)
                tally.latencies.append((time.perf_counter() - started) * 1000)
                tally.add(found, evidence, qa, intent, conversation.session_id)
    finally:
        memory.close()


def build_rankers(
    memory: Memory, conversation: ImportedConversation, limit: int
) -> dict[str, Ranker]:
    ids = [e.id for e in conversation.events]
    contextual = indexed_texts(conversation.events)
    bare = [e.content for e in conversation.events]
    bm25, minilm = bm25_ranker(ids, contextual), minilm_ranker(memory, ids, contextual)
    rankers: dict[str, Ranker] = {
        "baseline BM25, bare text": bm25_ranker(ids, bare),
        "baseline MiniLM, bare text": minilm_ranker(memory, ids, bare),
        "baseline BM25 (day speaker: text)": bm25,
        "baseline MiniLM (day speaker: text)": minilm,
        "baseline RRF(BM25, MiniLM), k=60": rrf_ranker(bm25, minilm),
    }
    rankers |= {f"shiyi {mode}": shiyi_ranker(memory.retriever, mode, limit) for mode in MODES}
    rankers |= {name: shiyi_ranker(r, "hybrid", limit) for name, r in variants(memory).items()}
    rankers["shiyi hybrid top 5 + neighbours"] = with_neighbours(memory, memory.retriever, 5)
    return rankers


def report(tallies: dict[str, Tally], ks: tuple[int, ...]) -> None:
    width = max(len(name) for name in tallies) + 2
    head = "".join(f"  R@{k:<4}" for k in ks)
    cats = "".join(f"  {CATEGORIES[c][:11]:>11}" for c in CATEGORIES)
    print(f"\n{'system':<{width}}{head}{cats}   p50 ms  p95 ms")
    for name, tally in tallies.items():
        if name.endswith("neighbours") and name.startswith("shiyi hybrid top"):
            continue
        row = "".join(f"  {tally.mean(k):.3f} " for k in ks)
        per = "".join(
            f"  {statistics.mean(tally.by_category[c]) if tally.by_category[c] else 0:11.3f}"
            for c in CATEGORIES
        )
        p50, p95 = percentile(tally.latencies, 0.5), percentile(tally.latencies, 0.95)
        print(f"{name:<{width}}{row}{per}  {p50:7.1f} {p95:7.1f}")
    print("\nsession level (share of evidence sessions owning a top-k turn)")
    print(f"{'system':<{width}}{head}{cats}")
    for name, tally in tallies.items():
        if not (name.startswith("baseline") or name == "shiyi hybrid"):
            continue
        row = "".join(f"  {statistics.mean(tally.sessions[k]):.3f} " for k in ks)
        at10 = tally.sessions_by_category
        per = "".join(f"  {statistics.mean(at10[c]) if at10[c] else 0:11.3f}" for c in CATEGORIES)
        print(f"{name:<{width}}{row}{per}")
    expanded = tallies["shiyi hybrid top 5 + neighbours"]
    hybrid = tallies["shiyi hybrid"]
    print(
        f"\nneighbour expansion: hybrid R@5 {hybrid.mean(5):.3f}; the same 5 hits with the"
        f" turns before and after them (up to 15 turns) R@5+nb {expanded.mean(max(ks)):.3f}"
    )
    shown = {
        name: tally
        for name, tally in tallies.items()
        if not name.startswith("shiyi hybrid top")
        and "bare text" not in name
        and name not in ("shiyi recent", "shiyi graph")
    }
    print_per_unit(shown, "conversation", lambda tally: tally.by_conversation)
    at = 10 if 10 in ks else ks[-1]
    print_paired("shiyi hybrid", {name: tally.recalls[at] for name, tally in shown.items()}, at)
    print("\nhybrid recall@10 per detected intent (questions):")
    for intent, values in sorted(hybrid.by_intent.items()):
        print(f"  {intent:<10} {statistics.mean(values):.3f}  ({len(values)})")
    singles = {m: {k: tallies[f"shiyi {m}"].mean(k) for k in ks} for m in MODES if m != "hybrid"}
    print_above_best_single({k: hybrid.mean(k) for k in ks}, singles)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--ks", default="5,10,20", help="recall cut-offs (default 5,10,20)")
    parser.add_argument(
        "--store-dir",
        help="keep each conversation's store here and reuse it on the next run (queries only)",
    )
    parser.add_argument(
        "--embed-model", default=EMBED_MODEL, help="e.g. all-MiniLM-L6-v2-int8 (its int8 graph)"
    )
    parser.add_argument(
        "--speakers",
        choices=("names", "handles"),
        default="names",
        help="handles: speaker fields become user_1, user_2 (bench/name_probes.py)",
    )
    parser.add_argument(
        "--ask-by",
        choices=("names", "nicknames", "misspellings"),
        default="names",
        help="nicknames: questions name each speaker by a diminutive; misspellings: with a"
        " typing slip (bench/name_probes.py)",
    )
    args = parser.parse_args(argv)
    if Path(args.dataset).is_dir():
        import realmem_bench

        return realmem_bench.main([args.dataset, "--ks", args.ks, "--models", args.embed_model])
    ks = tuple(int(k) for k in args.ks.split(","))
    globals()["EMBED_MODEL"] = args.embed_model
    conversations = detect_and_load(Path(args.dataset))
    if args.ask_by == "nicknames":  # first: the nicknames are of the speakers' names
        conversations = [name_probes.by_nicknames(c) for c in conversations]
    if args.ask_by == "misspellings":
        conversations = [name_probes.by_misspellings(c) for c in conversations]
    if args.speakers == "handles":
        conversations = [name_probes.handles(c) for c in conversations]
    count = sum(len(questions(c)) for c in conversations)
    turns = sum(len(c.events) for c in conversations)
    print(f"{args.dataset}: {len(conversations)} conversations, {turns} turns, {count} questions")
    tallies: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.store_dir) if args.store_dir else Path(tmp)
        for conversation in conversations:
            suffix = "-handles" if args.speakers == "handles" else ""  # other turns, own store
            home = root / (conversation.session_id + suffix)
            evaluate_conversation(conversation, home, ks, tallies)
    report(tallies, ks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
