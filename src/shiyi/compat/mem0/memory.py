"""mem0's ``Memory`` verbs over shiyi's memory (see :mod:`shiyi.compat.mem0`)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from datetime import time as dt_time
from pathlib import Path
from typing import Any

from shiyi.compat.mem0.config import settings_from_config
from shiyi.compat.mem0.ledger import Ledger, Owner
from shiyi.compat.mem0.shapes import (
    Turn,
    check_filters,
    check_ids,
    item,
    matches,
    text_of,
    turns_of,
)
from shiyi.config import Settings
from shiyi.errors import MemoryRequestError, UnknownMemory
from shiyi.llm.protocol import ChatModel
from shiyi.memory.lifecycle.forget_files import MEM0_LEDGER
from shiyi.memory.models import EventRecord, FactRecord, SegmentType
from shiyi.memory.operations import MemoryOperations
from shiyi.memory.operations.local import LocalMemory
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory as NativeMemory

SETTLE_SECONDS = 600.0
CURRENT = ("active", "pending")
OVERFETCH = 5
"""Search asks the store for this many times ``limit`` when agent, run or metadata filters
will drop some hits afterwards."""


class Memory:
    """mem0's ``Memory``: ``add``, ``search``, ``get``, ``get_all``, ``update``, ``delete``,
    ``delete_all``, ``history``, ``reset``, with mem0's arguments and result shapes.

    Owns the data directory's memory while open (close it, or use ``with``).  Every call is
    synchronous like mem0's: ``add`` returns once the messages are stored, embedded and (with
    ``infer=True`` and a model) extracted, so the next ``search`` finds them.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        settings: Settings | None = None,
        memory: NativeMemory | None = None,
        fast: ChatModel | None = None,
    ) -> None:
        """``config``: mem0's config dict; or shiyi's ``settings``; or an open shiyi
        ``memory`` to share (not closed by :meth:`close`).  ``fast``: the extraction model
        (default: the configured ``models.fast``)."""
        ledger_path: Path | None = None
        if settings is None and memory is None:
            settings, ledger_path = settings_from_config(config or {})
        if memory is None:
            from shiyi.app import open_memory

            assert settings is not None
            if fast is not None:
                memory = open_memory(settings, fast=fast, start_worker=False)
            else:
                memory = open_memory(settings, start_worker=False)
            self._owns = True
        else:
            self._owns = False
        self.native = memory
        """shiyi's own memory facade under this API (:class:`shiyi.memory.service.Memory`)."""
        # The default place is the one `shiyi memory forget` also erases (DataPaths).
        beside = Path(memory.data_paths.sessions_db or ".").parent / "memory" / MEM0_LEDGER
        default = memory.data_paths.mem0_ledger or beside
        self._ledger = Ledger(ledger_path or default)
        self._lock = threading.RLock()
        self._closed = False
        self._agent = memory.settings.agent_id

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Memory:
        """mem0's constructor from a config dict (see :mod:`shiyi.compat.mem0.config`)."""
        return cls(config)

    # --- identity ----------------------------------------------------------------------

    def _viewer(self, user_id: str | None, agent_id: str | None, run_id: str | None) -> Viewer:
        """Whose memories these are in shiyi: the user's; without a user, the agent's or the
        run's own (so two user ids never see each other's memories)."""
        if user_id is not None:
            owner = user_id
        elif agent_id is not None:
            owner = f"mem0-agent:{agent_id}"
        else:
            owner = f"mem0-run:{run_id}"
        return Viewer(owner, self._agent, self.native.settings.lifecycle.workspace_id)

    def _owner_viewer(self, record: EventRecord | FactRecord) -> Viewer:
        return Viewer(record.user_id, record.agent_id, self.native.settings.lifecycle.workspace_id)

    def _ops(self, viewer: Viewer) -> MemoryOperations:
        """Memory's operations as ``viewer``: what the CLI, REST and MCP faces call too."""
        return LocalMemory(self.native.scoped(viewer), configured=False, settle=True)

    # --- writing -----------------------------------------------------------------------

    def add(
        self,
        messages: object,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        timestamp: float | str | None = None,
    ) -> dict[str, Any]:
        """Store ``messages`` (text, a message dict or a list of them).

        ``infer=False`` stores each message as given; ``infer=True`` also runs shiyi's fact
        extraction on the user's messages (with ``models.fast`` configured; without one the
        messages are stored and extraction waits for a model).  When the messages were said:
        ``timestamp`` (epoch seconds or ISO 8601), else ``metadata["timestamp"]``, else now.
        Who said them: each message's ``name``, else ``metadata["speaker"]``, else its role.
        """
        check_ids(user_id, agent_id, run_id, "add")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise MemoryRequestError(f"add: metadata must be a dict, got {type(metadata).__name__}")
        meta = _json_metadata(metadata or {})
        turns = turns_of(messages)
        if not turns:
            return {"results": []}
        start = _time_of(timestamp if timestamp is not None else meta.get("timestamp"))
        viewer = self._viewer(user_id, agent_id, run_id)
        with self._open("add"):
            events = self._events(turns, viewer, run_id, meta, start, infer)
            now = time.time()
            for event, turn in zip(events, turns, strict=True):
                self._ledger.own(
                    event.id,
                    Owner(user_id, agent_id, run_id, meta, turn.role, turn.name or None, now),
                )
                self._ledger.record(
                    event.id, "ADD", None, event.content, actor_id=turn.name or None, role=turn.role
                )
            self.native.import_events(events)
            self._settle()
            results = [{"id": e.id, "memory": e.content, "event": "ADD"} for e in events]
            if infer:
                results += self._extracted(
                    events, Owner(user_id, agent_id, run_id, meta, created_at=now)
                )
        return {"results": results}

    def _events(
        self,
        turns: Sequence[Turn],
        viewer: Viewer,
        run_id: str | None,
        meta: Mapping[str, Any],
        start: float,
        infer: bool,
    ) -> list[EventRecord]:
        # A run groups turns said together (an episode): mem0's run_id, else this call.
        run = f"mem0:{viewer.user_id}:{run_id if run_id is not None else uuid.uuid4().hex}"
        first = self._ledger.next_turns(run, len(turns)) if run_id is not None else 0
        speaker = meta.get("speaker")
        events = []
        for index, turn in enumerate(turns):
            who = turn.name or (speaker if isinstance(speaker, str) and speaker else turn.role)
            kind: SegmentType = "imported"
            if infer:
                kind = "user_message" if turn.role == "user" else "response"
            events.append(
                EventRecord(
                    id=str(uuid.uuid4()),
                    session_id=f"mem0:{viewer.user_id}",
                    run_id=run,
                    ts=start + index * 0.001,
                    role=who.strip().lower(),
                    content=turn.content,
                    segment_type=kind,
                    iteration=first + index,
                    user_id=viewer.user_id,
                    agent_id=viewer.agent_id,
                )
            )
        return events

    def _extracted(self, events: Sequence[EventRecord], owner: Owner) -> list[dict[str, Any]]:
        """The facts extraction derived from ``events``: new ones ADD, known ones NONE."""
        ids = self.native.store.facts_derived_from([e.id for e in events])
        facts = [f for f in self.native.store.get_facts(ids) if f.status in CURRENT]
        known = self._ledger.owners([f.id for f in facts])
        results = []
        for fact in facts:
            if fact.id in known:
                results.append({"id": fact.id, "memory": fact.text, "event": "NONE"})
                continue
            self._ledger.own(fact.id, owner)
            self._ledger.record(fact.id, "ADD", None, fact.text)
            results.append({"id": fact.id, "memory": fact.text, "event": "ADD"})
        return results

    def _settle(self) -> None:
        """Run the queued memory work (store, link, embed, extract) before answering: mem0's
        calls are synchronous, and a memory a search cannot find yet would surprise."""
        self._ops(self.native.viewer).run_jobs(SETTLE_SECONDS)

    def update(self, memory_id: str, data: str) -> dict[str, str]:
        """Replace a memory's text (re-embedded before this returns).  A fact keeps its id
        and history; a stored message is rewritten under the same id."""
        if not isinstance(data, str) or not data.strip():
            raise MemoryRequestError("update: data must be the memory's new text, not empty")
        with self._open("update"):
            record = self._record(memory_id, "update")
            old = text_of(record)
            if isinstance(record, FactRecord):
                self._update_fact(record, data)
            else:
                self._update_event(record, data)
            self._ledger.touch(memory_id, time.time())
            self._ledger.record(memory_id, "UPDATE", old, data)
            self._settle()
        return {"message": "Memory updated successfully!"}

    def _update_fact(self, fact: FactRecord, data: str) -> None:
        # mem0's update replaces the whole text: no "key: value" slot is left to supersede.
        self._ops(self._owner_viewer(fact)).update(fact.id, key="", value=data)

    def _update_event(self, event: EventRecord, data: str) -> None:
        # Events are immutable in the store: the old words go everywhere (forget), then the
        # message comes back under its id and anchor with the new words.
        # (Not ``import_turns``: its names may hold no whitespace, mem0's ids may, and it
        # stores every turn as ``imported``, where a user's message is extracted from.)
        viewer = self._owner_viewer(event)
        with self._ledger.kept([event.id]):
            self._ops(viewer).forget_ids([event.id])
        event.content = data
        self.native.scoped(viewer).import_events([event])

    def delete(self, memory_id: str) -> dict[str, str]:
        """Forget one memory everywhere (with facts derived from it alone)."""
        with self._open("delete"):
            record = self._record(memory_id, "delete")
            with self._ledger.kept([memory_id], words=False):
                self._ops(self._owner_viewer(record)).delete(memory_id)
            self._ledger.record(memory_id, "DELETE", None, None)
            self._ledger.forget([memory_id])
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        check_ids(user_id, agent_id, run_id, "delete_all")
        with self._open("delete_all"):
            viewer = self._viewer(user_id, agent_id, run_id)
            ids = [r.id for r, _ in self._listed(viewer, self._wanted(agent_id, run_id, None))]
            self._forget(ids, viewer)
        return {"message": "Memories deleted successfully!"}

    def _forget(self, ids: list[str], viewer: Viewer) -> None:
        ops = self._ops(viewer)
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            with self._ledger.kept(chunk, words=False):
                ops.forget_ids(chunk)
            for memory_id in chunk:
                self._ledger.record(memory_id, "DELETE", None, None)
            self._ledger.forget(chunk)

    def reset(self) -> None:
        """Forget every memory of the store (every user's) and the ledger."""
        with self._open("reset"):
            store = self.native.store
            ids = [e.id for e in store.recent_events(10**9)] + store.fact_ids(10**9)
            forgetter = self.native.forgetter()
            for start in range(0, len(ids), 1000):
                forgetter.execute(forgetter.plan_ids(ids[start : start + 1000]))
            self._ledger.reset()

    # --- reading -----------------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by id, or None (as mem0) when no memory has it."""
        with self._open("get"):
            record = self._find(memory_id)
            return None if record is None else item(record, self._ledger.owner(memory_id))

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        threshold: float | None = None,
    ) -> dict[str, Any]:
        """shiyi's hybrid search over one owner's memories.  ``score`` is shiyi's fused
        score (higher is better; not a cosine), which ``threshold`` compares against."""
        check_ids(user_id, agent_id, run_id, "search")
        if not isinstance(query, str) or not query.strip():
            raise MemoryRequestError("search: query must be non-empty text")
        _check_limit(limit, "search")
        wanted = self._wanted(agent_id, run_id, filters)
        viewer = self._viewer(user_id, agent_id, run_id)
        with self._open("search"):
            self._settle()
            fetch = limit * OVERFETCH if wanted else limit
            hits = self._ops(viewer).search(query, limit=fetch)
            records = self._records([h.id for h in hits])
            owners = self._ledger.owners(list(records))
        results = []
        for hit in hits:
            record, owner = records.get(hit.id), owners.get(hit.id)
            if record is None or (wanted and not matches(owner, wanted)):
                continue
            if threshold is not None and hit.score < threshold:
                continue
            results.append(item(record, owner, hit.score))
        return {"results": results[:limit]}

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        """One owner's current memories (messages and facts), newest first."""
        check_ids(user_id, agent_id, run_id, "get_all")
        _check_limit(limit, "get_all")
        viewer = self._viewer(user_id, agent_id, run_id)
        with self._open("get_all"):
            self._settle()
            listed = self._listed(viewer, self._wanted(agent_id, run_id, filters))
        return {"results": [item(r, o) for r, o in listed[:limit]]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every change of one memory made through this API, oldest first (after a delete,
        the events stay but not the words)."""
        with self._open("history"):
            return self._ledger.history(memory_id)

    def _wanted(
        self, agent_id: str | None, run_id: str | None, filters: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        if filters is not None and not isinstance(filters, Mapping):
            raise MemoryRequestError(f"filters must be a dict, got {type(filters).__name__}")
        wanted = dict(filters or {})
        check_filters(wanted)
        wanted.pop("user_id", None)  # the viewer already is that user
        if agent_id is not None:
            wanted["agent_id"] = agent_id
        if run_id is not None:
            wanted["run_id"] = run_id
        return wanted

    def _listed(
        self, viewer: Viewer, wanted: Mapping[str, Any]
    ) -> list[tuple[EventRecord | FactRecord, Owner | None]]:
        store = self.native.store
        fact_ids, event_ids = store.user_footprint(viewer.user_id)
        records: list[EventRecord | FactRecord] = [
            e for e in store.get_events(event_ids) if viewer.sees(e) and not e.derived
        ]
        records += [f for f in store.get_facts(fact_ids) if viewer.sees(f) and f.status in CURRENT]
        owners = self._ledger.owners([r.id for r in records])
        chosen = [(r, owners.get(r.id)) for r in records]
        chosen = [(r, o) for r, o in chosen if not wanted or matches(o, wanted)]
        return sorted(chosen, key=lambda pair: _created(pair[0]), reverse=True)

    def _records(self, ids: list[str]) -> dict[str, EventRecord | FactRecord]:
        found: dict[str, EventRecord | FactRecord] = {
            e.id: e for e in self.native.store.get_events(ids)
        }
        found.update({f.id: f for f in self.native.store.get_facts(ids)})
        return found

    def _find(self, memory_id: object) -> EventRecord | FactRecord | None:
        if not isinstance(memory_id, str) or not memory_id:
            raise MemoryRequestError(f"memory_id must be a non-empty string, got {memory_id!r}")
        return self._records([memory_id]).get(memory_id)

    def _record(self, memory_id: object, verb: str) -> EventRecord | FactRecord:
        record = self._find(memory_id)
        if record is None:
            raise UnknownMemory(
                f"{verb}: no memory has id {memory_id!r} (deleted, or never stored; ids come "
                "from add, search and get_all results)"
            )
        return record

    @contextmanager
    def _open(self, verb: str) -> Iterator[None]:
        """The lock, for a call on a Memory that is still open: after ``close`` the stores
        are closed, and a call had met sqlite3's "Cannot operate on a closed database"."""
        with self._lock:
            if self._closed:
                raise MemoryRequestError(
                    f"{verb}: this Memory is closed; make a new one (Memory() or "
                    "Memory.from_config(...)) to go on"
                )
            yield

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._owns:
                self.native.close()
            self._ledger.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _created(record: EventRecord | FactRecord) -> float:
    return record.ts if isinstance(record, EventRecord) else record.created_at


def _time_of(value: object) -> float:
    if value is None:
        return time.time()
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise MemoryRequestError(f"timestamp must be epoch seconds or ISO 8601 text, got {value!r}")
    try:
        if not isinstance(value, str):
            return float(value)
        moment = datetime.fromisoformat(value.strip())
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    except ValueError:
        raise MemoryRequestError(
            f"timestamp must be epoch seconds or ISO 8601 text, got {value!r}"
        ) from None


def _check_limit(limit: object, verb: str) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise MemoryRequestError(f"{verb}: limit must be a positive integer, got {limit!r}")


def _json_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata as stored (JSON): dates and times as ISO 8601 text; any other value JSON
    cannot hold is refused by where it is (it had been stored as its repr, matching no
    filter)."""
    held = _json_value(metadata, "metadata")
    assert isinstance(held, dict)
    return held


def _json_value(value: object, where: str) -> object:
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (date, dt_time)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        if bad := [k for k in value if not isinstance(k, str)]:
            raise MemoryRequestError(f"add: {where} has the key {bad[0]!r}: keys must be text")
        return {k: _json_value(v, f"{where}[{k!r}]") for k, v in value.items()}
    raise MemoryRequestError(
        f"add: {where} is a {type(value).__name__} ({value!r:.60}), which JSON cannot hold: "
        "give text, numbers, booleans, lists or dicts"
    )
