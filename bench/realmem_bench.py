"""Recall on the RealMem dev personas, online: shiyi hybrid per embedding model, beside
BM25, MiniLM and RRF(BM25, MiniLM) baselines computed in the same run over the same turns (and
RRF with one turn per session first, the order shiyi gives a user's memory).

    python bench/realmem_bench.py [../shared/data/realmem-dev] [--models all-MiniLM-L6-v2,
        all-MiniLM-L6-v2-int8] [--ks 5,10,20] [--personas Kenta_Tanaka] [--no-baselines]
        [--modes keyword,semantic] [--without spread,coverage,graph_vote]
        [--slips 7 [--slips-unread]] [--echoes] [--casual]

Protocol (/work/shared/data/README.md): one store per persona; its sessions are imported one
by one in time order, and each session's queries are asked before the session is imported,
so a query sees only earlier sessions.  An item is a turn; recall@k is the share of the
query's evidence sessions (``memory_session_uuids`` of the assistant turn after it) that own
at least one of the top-k turns.  Each model gets its own store of the same turns.  The
baselines (``realmem_baselines``) see each turn as ``"(<current_time>) <Speaker>: <text>"``
and, like shiyi, only the sessions before the query's.  ``--modes``: shiyi's own single
paths, asked of the same store (hybrid should stand above the best of them at every k).
Query p50/p95 is shiyi's hybrid search.  ``--slips SEED``: every query with one typing slip
(``slips.py``), for every system; ``--slips-unread``: shiyi's keyword search without reading
them (:mod:`shiyi.index.spelling`).  ``--echoes``: as an agent's memory holds them, each
query's ``query_memory`` call and its result (the top 5, as the tool shows them) are stored
with the query's session, marked derived (:mod:`shiyi.memory.text.echoes`), so later queries
search a memory that holds the agent's earlier searches too.  ``--casual``: the user's turns
and queries typed as people type on a phone, in small letters without apostrophes or full
stops (``casual_bench.py``'s third form; the assistant's turns as written), for every system.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from casual_bench import FORMS
from paired import print_above_best_single, print_paired
from per_unit import print_per_unit
from realmem_baselines import Item, OnlineBaselines
from slips import slipped, slips_unread

from shiyi.config import load_settings
from shiyi.index.embeddings import build_embedder
from shiyi.memory.models import EventRecord
from shiyi.memory.recall.config import MODE_PATHS, Boosts
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "realmem-dev"


@dataclass
class Query:
    text: str
    category: str
    evidence: set[str]
    persona: str = ""


@dataclass
class Session:
    uuid: str
    events: list[EventRecord]
    queries: list[Query] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """Each turn as the baselines index it: ``"(<current_time>) <Speaker>: <text>"``."""


def _day(text: str) -> float:
    """``"2025-12-15 (Monday)"`` -> epoch seconds (UTC midnight)."""
    return datetime.strptime(text.split(" ")[0], "%Y-%m-%d").replace(tzinfo=UTC).timestamp()


def _session(persona: str, raw: dict[str, Any]) -> Session:
    uuid, start = str(raw["session_uuid"]), _day(str(raw["current_time"]))
    session = Session(uuid, [])
    turns: list[dict[str, Any]] = raw["dialogue_turns"]
    for index, turn in enumerate(turns):
        session.texts.append(f"({raw['current_time']}) {turn['speaker']}: {turn['content']}")
        session.events.append(
            EventRecord(
                id=f"{persona}:{uuid}:{index}",
                session_id=persona,
                run_id=f"{persona}:{uuid}",
                ts=start + index,
                role=str(turn["speaker"]).lower(),
                content=str(turn["content"]),
                segment_type="imported",
                iteration=index,
            )
        )
        if turn.get("is_query") and index + 1 < len(turns):
            evidence = set(turns[index + 1].get("memory_session_uuids") or [])
            if evidence:
                category = str(turn.get("category_name", "?"))
                query = Query(str(turn["content"]), category, evidence, persona)
                session.queries.append(query)
    return session


def load_persona(path: Path) -> tuple[str, list[Session]]:
    import json

    persona = path.name.split("_dialogues")[0]
    dialogues = json.loads(path.read_text(encoding="utf-8"))["dialogues"]
    return persona, [_session(persona, raw) for raw in dialogues]


CASUAL = FORMS["small, no ' or ."]


def typed_casually(sessions: Sequence[Session]) -> None:
    """The user's turns and queries of ``sessions`` in :data:`CASUAL` form, in place."""
    for session in sessions:
        for index, event in enumerate(session.events):
            if event.role == "user":
                session.events[index] = replace(event, content=CASUAL(event.content))
                label = session.texts[index].split(": ", 1)[0]
                session.texts[index] = f"{label}: {CASUAL(event.content)}"
        for query in session.queries:
            query.text = CASUAL(query.text)


def persona_files(folder: Path, names: Sequence[str]) -> list[Path]:
    files = sorted(folder.glob("*_dialogues_*.json"))
    return [f for f in files if not names or f.name.split("_dialogues")[0] in names]


@dataclass
class Tally:
    ks: tuple[int, ...]
    recalls: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_persona: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    latencies: list[float] = field(default_factory=list)
    found: list[tuple[Query, list[str]]] = field(default_factory=list)
    """Each query with the sessions owning its top hits, in rank order (for ``--dump``)."""

    def add(self, found: Sequence[str], query: Query) -> None:
        self.found.append((query, [hit.rsplit(":", 2)[1] for hit in found]))
        for k in self.ks:
            owners = {hit.rsplit(":", 1)[0].rsplit(":", 1)[-1] for hit in found[:k]}
            self.recalls[k].append(len(query.evidence & owners) / len(query.evidence))
            if k == 10:
                self.by_category[query.category].append(self.recalls[k][-1])
                self.by_persona[query.persona].append(self.recalls[k][-1])


def open_memory(home: Path, model: str) -> Memory:
    settings = load_settings(home=home, workspace=home)
    settings.memory.lock_timeout = 0
    settings.memory.embed_model = model
    settings.memory.lifecycle.extraction = False
    return Memory.open(settings, start_worker=False)


def echoes(memory: Memory, session: Session, number: int, query: Query) -> list[EventRecord]:
    """The ``query_memory`` call and result an agent's memory would hold after ``query``."""
    first = session.events[0]
    said = [
        ("assistant", "tool_call", "query_memory(" + json.dumps({"query": query.text}) + ")"),
        ("tool", "tool_result", "query_memory -> " + memory.query_text(query.text, limit=5)),
    ]
    return [
        replace(
            first,
            id=f"{first.run_id}:echo{number}{part}",
            ts=first.ts + 0.5,
            role=role,
            content=content,
            segment_type=kind,
            derived="memory_tool",
        )
        for part, (role, kind, content) in enumerate(said)
    ]


SWITCHES = (*(f.name for f in fields(Boosts)), "graph_vote")
"""What ``--without`` can turn off: a field of :class:`Boosts`, or ``graph_vote`` (the graph
path's vote in the fusion; it still finds candidates)."""


def _switched_off(base: Retriever, name: str) -> Retriever:
    """``base``'s store, embedder and settings with the mechanism ``name`` off."""
    weights, boosts = base.weights, base.boosts
    if name == "graph_vote":
        weights = replace(weights, path_weights=dict(weights.path_weights) | {"graph": 0.0})
    else:
        boosts = replace(boosts, **{name: False})
    return Retriever(
        base.store, base.embedder, weights, base.candidates, fusion=base.fusion, boosts=boosts
    )


def run_persona(
    sessions: list[Session],
    home: Path,
    model: str,
    tally: Tally,
    without: dict[str, Tally] | None = None,
    modes: dict[str, Tally] | None = None,
    with_echoes: bool = False,
) -> None:
    """Hybrid's recall into ``tally``; ``without``: per mechanism of :class:`Boosts`, hybrid
    with it off; ``modes``: per single search mode ("keyword", "semantic"); both asked the
    same queries of the same store (no access counts written); ``with_echoes``: each query's
    tool call and result stored with its session (:func:`echoes`)."""
    memory = open_memory(home, model)
    base = memory.retriever
    others = {name: _switched_off(base, name) for name in (without or {})}
    try:
        for session in sessions:
            searched: list[EventRecord] = []
            for query in session.queries:
                for name, other in others.items():
                    hits = other.search(query.text, mode="hybrid", limit=max(tally.ks), touch=False)
                    (without or {})[name].add([hit.id for hit in hits], query)
                for mode, mode_tally in (modes or {}).items():
                    hits = base.search(query.text, mode=mode, limit=max(tally.ks), touch=False)
                    mode_tally.add([hit.id for hit in hits], query)
                start = time.perf_counter()
                hits = memory.retriever.search(query.text, mode="hybrid", limit=max(tally.ks))
                tally.latencies.append(time.perf_counter() - start)
                tally.add([hit.id for hit in hits], query)
                if with_echoes:
                    searched += echoes(memory, session, len(searched), query)
            memory.import_events(searched + session.events)
            memory.worker.drain(timeout=3600)
    finally:
        memory.close()


BASELINES = (
    "baseline BM25",
    "baseline MiniLM",
    "baseline RRF(BM25, MiniLM)",
    "baseline RRF, one turn per session first",
)


def run_baselines(
    sessions: list[Session], baselines: OnlineBaselines, tallies: dict[str, Tally]
) -> None:
    rankers = (baselines.bm25, baselines.minilm, baselines.rrf, baselines.rrf_one_per_session)
    for position, session in enumerate(sessions):
        for query in session.queries:
            for name, rank in zip(BASELINES, rankers, strict=True):
                found = rank(query.text, position, max(tallies[name].ks))
                tallies[name].add(found, query)


def persona_items(persona: str, sessions: list[Session]) -> list[Item]:
    return [
        Item(f"{persona}:{session.uuid}:{index}", text, position)
        for position, session in enumerate(sessions)
        for index, text in enumerate(session.texts)
    ]


def baseline_embedder(home: Path) -> Callable[[list[str]], list[list[float]]]:
    settings = load_settings(home=home, workspace=home)
    embedder = build_embedder(settings.memory, home / "baseline-embeddings.sqlite3", home)
    assert embedder is not None
    return embedder.embed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--models", default="all-MiniLM-L6-v2,all-MiniLM-L6-v2-int8")
    parser.add_argument("--ks", default="5,10,20")
    parser.add_argument("--personas", default="", help="comma-separated names (default: all)")
    parser.add_argument("--no-baselines", action="store_true", help="shiyi only")
    parser.add_argument(
        "--without",
        default="",
        help="comma-separated Boosts fields or graph_vote: hybrid with each off too",
    )
    parser.add_argument(
        "--modes", default="keyword,semantic", help="shiyi's single paths beside hybrid"
    )
    parser.add_argument("--slips", type=int, help="seed: one typing slip in every query")
    parser.add_argument("--slips-unread", action="store_true", help="keyword search as typed")
    parser.add_argument(
        "--casual", action="store_true", help="the user's turns and queries typed casually"
    )
    parser.add_argument(
        "--echoes", action="store_true", help="store each query's query_memory call and result"
    )
    parser.add_argument(
        "--dump", help="write each query's ranked sessions per system to this JSON-lines file"
    )
    args = parser.parse_args(argv)
    slips = random.Random(args.slips) if args.slips is not None else None
    ks = tuple(int(k) for k in args.ks.split(","))
    models = [model for model in args.models.split(",") if model]  # "": baselines only
    tallies = {model: Tally(ks) for model in models}
    off = [name for name in args.without.split(",") if name]
    unknown = set(off) - set(SWITCHES)
    if unknown:
        parser.error(f"--without: unknown {sorted(unknown)}; use {list(SWITCHES)}")
    without = {model: {name: Tally(ks) for name in off} for model in models}
    single = [mode for mode in args.modes.split(",") if mode]
    if set(single) - set(MODE_PATHS):
        parser.error(f"--modes: unknown {sorted(set(single) - set(MODE_PATHS))}")
    modes = {model: {mode: Tally(ks) for mode in single} for model in models}
    baseline_tallies = {} if args.no_baselines else {name: Tally(ks) for name in BASELINES}
    names = [n for n in args.personas.split(",") if n]
    if not persona_files(Path(args.folder), names):
        parser.error(
            f"no persona files (*_dialogues_*.json) in {args.folder}"
            + (f" named {', '.join(names)}" if names else "")
            + ": give the folder of the RealMem dev data (../shared/data/realmem-dev)"
        )
    with tempfile.TemporaryDirectory() as tmp:
        for path in persona_files(Path(args.folder), names):
            persona, sessions = load_persona(path)
            if args.casual:
                typed_casually(sessions)
            if slips is not None:
                for query in (q for s in sessions for q in s.queries):
                    query.text = slipped(query.text, slips)
            queries = sum(len(s.queries) for s in sessions)
            print(f"{persona}: {len(sessions)} sessions, {queries} queries", flush=True)
            if baseline_tallies:
                embed = baseline_embedder(Path(tmp) / "baselines")
                online = OnlineBaselines(persona_items(persona, sessions), embed)
                run_baselines(sessions, online, baseline_tallies)
            for model in models:
                home = Path(tmp) / f"{persona}-{model}"
                with slips_unread() if args.slips_unread else nullcontext():
                    run_persona(
                        sessions,
                        home,
                        model,
                        tallies[model],
                        without[model],
                        modes[model],
                        with_echoes=args.echoes,
                    )
    rows = baseline_tallies | {f"shiyi hybrid, {model}": tally for model, tally in tallies.items()}
    rows |= {
        f"shiyi {mode}, {model}": tally
        for model, by_mode in modes.items()
        for mode, tally in by_mode.items()
    }
    rows |= {
        f"shiyi hybrid, {model}, no {name}": tally
        for model, by_name in without.items()
        for name, tally in by_name.items()
    }
    categories = sorted({c for t in rows.values() for c in t.by_category})
    print("\n" + f"{'system':<40}" + "".join(f"  R@{k:<4}" for k in ks) + "".join(
        f"  {c[:18]:>18}@10" for c in categories) + "   p50 ms  p95 ms")  # fmt: skip
    for name, tally in rows.items():
        row = "".join(f"  {statistics.mean(tally.recalls[k]):.3f} " for k in ks)
        per = "".join(f"  {statistics.mean(tally.by_category[c]):21.3f}" for c in categories)
        times = "".join(f"  {percentile(tally.latencies, q) * 1000:6.1f}" for q in (0.5, 0.95))
        print(f"{name:<40}{row}{per}{times if tally.latencies else ''}"
              f"   ({len(tally.recalls[ks[0]])} queries)")  # fmt: skip
    print_per_unit(rows, "persona", lambda tally: tally.by_persona)
    if models:  # hybrid against the rest, on the same queries
        at = 10 if 10 in ks else ks[-1]
        recalls = {name: tally.recalls[at] for name, tally in rows.items()}
        print_paired(f"shiyi hybrid, {models[0]}", recalls, at)
        if modes[models[0]]:
            singles = {mode: _means(tally, ks) for mode, tally in modes[models[0]].items()}
            print_above_best_single(_means(tallies[models[0]], ks), singles)
    if args.dump:
        write_dump(Path(args.dump), rows)
    return 0


def _means(tally: Tally, ks: Sequence[int]) -> dict[int, float]:
    return {k: statistics.mean(tally.recalls[k]) for k in ks}


def write_dump(path: Path, rows: dict[str, Tally]) -> None:
    """One line per system and query: the evidence and the sessions of the top hits in order,
    to diff two runs query by query."""
    with path.open("w", encoding="utf-8") as out:
        for name, tally in rows.items():
            for query, sessions in tally.found:
                line = {
                    "system": name,
                    "persona": query.persona,
                    "category": query.category,
                    "query": query.text,
                    "evidence": sorted(query.evidence),
                    "sessions": sessions,
                }
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
