"""``shiyi doctor --rebuild-graph`` / ``--rebuild-sqlite``: one file rebuilt from the other.

``memory.sqlite3`` rebuilds from the graph by itself once it is moved aside: opening the
store copies the events and mentions into a new mirror (its backfill), and the doctor's
checks then re-index the keywords.  The other way round needs :func:`rebuild_graph`.

The mirror (``memory.sqlite3``) holds every event record as written, every MENTIONS pair,
every fact with its links and SUPERSEDES pairs, and every entity (type, aliases) and
relation, so all of these come back: the turns with their sessions and NEXT chains, what
memory believes and which statement replaced which.  Access counts and vectors live only in
the graph: the counts start again, and the doctor's vector check queues the turns and facts
for the worker to embed again.  The damaged file is moved aside, never deleted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from shiyi.errors import StorageError
from shiyi.index.sqlite_file import SqliteFile
from shiyi.memory.kuzu.connection import KuzuGraph
from shiyi.memory.kuzu.entity_rows import EntityRows
from shiyi.memory.kuzu.event_rows import EventRows
from shiyi.memory.kuzu.fact_rows import FactRows
from shiyi.memory.kuzu.guard import check_graph_file, rebuild_marker
from shiyi.memory.kuzu.mention_rows import MentionRows
from shiyi.memory.kuzu.probe import check_graph_opens
from shiyi.memory.models import EntityRecord

_LINK_BATCH = 20_000
_SIDE_FILES = (".wal", "-wal", "-shm", "-journal")


@dataclass(frozen=True, slots=True)
class RebuiltGraph:
    moved_to: Path | None
    """Where the damaged file went (None: there was no file)."""
    events: int
    mentions: int
    facts: int = 0
    relations: int = 0


def move_damaged(path: Path) -> Path | None:
    """Rename a damaged file (and its WAL, SHM or journal) to ``<name>.damaged-<time>``;
    never deletes (nor replaces an earlier damaged copy).  None when there is no such file."""
    if not path.exists():
        return None
    stamp = f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
    target, n = path.with_name(stamp), 1
    while target.exists():  # a second move within the same second
        target, n = path.with_name(f"{stamp}-{n}"), n + 1
    os.replace(path, target)
    for suffix in _SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    return target


def rebuild_graph(
    graph_path: Path,
    sqlite_path: Path,
    *,
    dimension: int,
    embedding_model: str,
    forgotten: AbstractSet[str] = frozenset(),
) -> RebuiltGraph:
    """Move the damaged graph aside and build a new one from the mirror (lock held).

    A marker file beside the graph says a rebuild is under way until it completes: a
    process killed half way leaves a graph every open refuses (:func:`check_graph_file`)
    and the next ``--rebuild-graph`` builds again.  ``forgotten``: ids of a pending
    forget, never copied into the new graph."""
    mirror = SqliteFile(sqlite_path)
    marker = rebuild_marker(graph_path)
    try:
        rows, mentions = EventRows(mirror), MentionRows(mirror)
        facts, entities = FactRows(mirror), EntityRows(mirror)
        _write_durably(marker, f"rebuilding {graph_path.name} from {sqlite_path.name}\n")
        moved = move_damaged(graph_path)
        graph = KuzuGraph(graph_path, dimension=dimension, embedding_model=embedding_model)
        try:
            events = sum(
                graph.add_events([e for e in batch if e.id not in forgotten])
                for batch in rows.all()
            )
            pairs = [pair for pair in mentions.pairs() if pair[0] not in forgotten]
            _copy_entities(graph, entities, {name for _, name in pairs})
            for start in range(0, len(pairs), _LINK_BATCH):
                graph.link_mentions(pairs[start : start + _LINK_BATCH])
            copied = _copy_facts(graph, facts, forgotten)
            relations = entities.relations()
            graph.add_relations(relations)
        finally:
            graph.close()
    finally:
        mirror.close()
    marker.unlink()
    return RebuiltGraph(moved, events, len(pairs), copied, len(relations))


def _copy_entities(graph: KuzuGraph, entities: EntityRows, mentioned: set[str]) -> None:
    """Every copied entity, and the mentioned ones a store from before the copy lacks."""
    held = {e.name: e for e in entities.entities()}
    bare = [EntityRecord(name, display=name) for name in sorted(mentioned - held.keys())]
    graph.upsert_entities([*held.values(), *bare])


def _copy_facts(graph: KuzuGraph, facts: FactRows, forgotten: AbstractSet[str]) -> int:
    """Facts with their ABOUT and DERIVED_FROM links (to what the new graph holds), then
    which replaced which; nothing a pending forget names."""
    copied = 0
    for batch in facts.all():
        kept = [f for f in batch if f.id not in forgotten]
        graph.upsert_facts(kept)
        copied += len(kept)
    pairs = [(n, o) for n, o in facts.supersedes() if n not in forgotten and o not in forgotten]
    graph.add_supersedes(pairs)
    return copied


def _write_durably(path: Path, text: str) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


def graph_damage(graph_path: Path, sqlite_path: Path) -> str | None:
    """Why the graph cannot be used (the message a store open would raise), or None.

    Call with the directory's lock held: a good file is opened once and closed again.
    """
    try:
        check_graph_file(graph_path, sqlite_path)
        # In a child process: some damage crashes Kuzu instead of raising.
        check_graph_opens(graph_path, always=True)
    except StorageError as exc:
        return str(exc)
    return None
