"""Recall on the RealMem dev personas, online, for shiyi hybrid with each embedding model.

    python bench/realmem_bench.py [../shared/data/realmem-dev] [--models all-MiniLM-L6-v2,
        all-MiniLM-L6-v2-int8] [--ks 5,10,20] [--personas Kenta_Tanaka]

Protocol (/work/shared/data/README.md): one store per persona; its sessions are imported one
by one in time order, and each session's queries are asked before the session is imported,
so a query sees only earlier sessions.  An item is a turn; recall@k is the share of the
query's evidence sessions (``memory_session_uuids`` of the assistant turn after it) that own
at least one of the top-k turns.  Each model gets its own store of the same turns.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shiyi.config import load_settings
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "realmem-dev"


@dataclass
class Query:
    text: str
    category: str
    evidence: set[str]


@dataclass
class Session:
    uuid: str
    events: list[EventRecord]
    queries: list[Query] = field(default_factory=list)


def _day(text: str) -> float:
    """``"2025-12-15 (Monday)"`` -> epoch seconds (UTC midnight)."""
    return datetime.strptime(text.split(" ")[0], "%Y-%m-%d").replace(tzinfo=UTC).timestamp()


def _session(persona: str, raw: dict[str, Any]) -> Session:
    uuid, start = str(raw["session_uuid"]), _day(str(raw["current_time"]))
    session = Session(uuid, [])
    turns: list[dict[str, Any]] = raw["dialogue_turns"]
    for index, turn in enumerate(turns):
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
                session.queries.append(Query(str(turn["content"]), category, evidence))
    return session


def load_persona(path: Path) -> tuple[str, list[Session]]:
    import json

    persona = path.name.split("_dialogues")[0]
    dialogues = json.loads(path.read_text(encoding="utf-8"))["dialogues"]
    return persona, [_session(persona, raw) for raw in dialogues]


def persona_files(folder: Path, names: Sequence[str]) -> list[Path]:
    files = sorted(folder.glob("*_dialogues_*.json"))
    return [f for f in files if not names or f.name.split("_dialogues")[0] in names]


@dataclass
class Tally:
    ks: tuple[int, ...]
    recalls: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def add(self, found: Sequence[str], query: Query) -> None:
        for k in self.ks:
            owners = {hit.rsplit(":", 1)[0].rsplit(":", 1)[-1] for hit in found[:k]}
            self.recalls[k].append(len(query.evidence & owners) / len(query.evidence))
            if k == 10:
                self.by_category[query.category].append(self.recalls[k][-1])


def open_memory(home: Path, model: str) -> Memory:
    settings = load_settings(home=home, workspace=home)
    settings.memory.lock_timeout = 0
    settings.memory.embed_model = model
    settings.memory.lifecycle.extraction = False
    return Memory.open(settings, start_worker=False)


def run_persona(sessions: list[Session], home: Path, model: str, tally: Tally) -> None:
    memory = open_memory(home, model)
    try:
        for session in sessions:
            for query in session.queries:
                hits = memory.retriever.search(query.text, mode="hybrid", limit=max(tally.ks))
                tally.add([hit.id for hit in hits], query)
            memory.import_events(session.events)
            memory.worker.drain(timeout=3600)
    finally:
        memory.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--models", default="all-MiniLM-L6-v2,all-MiniLM-L6-v2-int8")
    parser.add_argument("--ks", default="5,10,20")
    parser.add_argument("--personas", default="", help="comma-separated names (default: all)")
    args = parser.parse_args(argv)
    ks = tuple(int(k) for k in args.ks.split(","))
    models = args.models.split(",")
    tallies = {model: Tally(ks) for model in models}
    names = [n for n in args.personas.split(",") if n]
    with tempfile.TemporaryDirectory() as tmp:
        for path in persona_files(Path(args.folder), names):
            persona, sessions = load_persona(path)
            queries = sum(len(s.queries) for s in sessions)
            print(f"{persona}: {len(sessions)} sessions, {queries} queries", flush=True)
            for model in models:
                run_persona(sessions, Path(tmp) / f"{persona}-{model}", model, tallies[model])
    categories = sorted({c for t in tallies.values() for c in t.by_category})
    print("\nshiyi hybrid" + "".join(f"  R@{k:<4}" for k in ks) + "".join(
        f"  {c[:18]:>18}@10" for c in categories))  # fmt: skip
    for model, tally in tallies.items():
        row = "".join(f"  {statistics.mean(tally.recalls[k]):.3f} " for k in ks)
        per = "".join(f"  {statistics.mean(tally.by_category[c]):21.3f}" for c in categories)
        print(f"{model:<24}{row}{per}   ({len(tally.recalls[ks[0]])} queries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
