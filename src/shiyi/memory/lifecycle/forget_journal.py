"""The forget journal: what a forget removes, made durable before anything is deleted.

A forget deletes from several files one after another (the SQLite mirror and keyword index,
the graph, the job queue, the embedding cache, the session log, the summary cache).  A
process killed between two of them used to leave a memory in some stores and not in others,
and the repairs then copied it back from the copy that still had it (``shiyi doctor
--repair`` restored turns from the graph into the mirror), undoing the forget.

So :class:`~shiyi.memory.lifecycle.forget.Forgetter` first writes one entry here
(``<memory dir>/forgetting/<id>.json``, written to a temporary name, fsynced and renamed, so
an entry is whole or absent), then deletes, then removes the entry.  An entry still present
is a forget that did not finish: the next process opening the memory finishes it before it
does anything else (:meth:`Forgetter.resume_pending`), ``shiyi doctor --repair`` too, and
every repair that copies memories between stores skips the ids of pending entries (their
*tombstones*).  Every step of a forget is idempotent, so finishing one twice is harmless.

An entry holds ids, session ids, entity names and SHA-256 hashes of the forgotten texts
(the embedding cache and job payloads are matched by hash), never the texts themselves.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from shiyi.errors import StorageError

JOURNAL_DIR = "forgetting"
_VERSION = 1


@dataclass(slots=True)
class ForgetEntry:
    """Everything a forget deletes, fixed before it deletes anything."""

    target: str
    event_ids: list[str] = field(default_factory=list)
    fact_ids: list[str] = field(default_factory=list)
    queued_ids: list[str] = field(default_factory=list)
    entity_names: list[str] = field(default_factory=list)
    """Entities asked for (a forget by entity): they go whatever else refers to them."""
    linked_entities: list[str] = field(default_factory=list)
    """Entities the forgotten memories mention: they go once nothing else refers to them."""
    user_id: str | None = None
    user_sessions: list[str] = field(default_factory=list)
    """A forget by user: the sessions that go from the session log and the graph."""
    sessions: list[str] = field(default_factory=list)
    """Sessions whose events go (their run files are rendered again)."""
    text_hashes: list[str] = field(default_factory=list)
    event_sessions: dict[str, str] = field(default_factory=dict)
    """The session of each event: a log row is deleted only in its own session."""
    re_embed: list[str] = field(default_factory=list)
    """Stored messages led in by a forgotten one: embedded again without it."""
    events: int = 0
    facts: int = 0
    archives: int = 0

    @property
    def ids(self) -> list[str]:
        return [*self.event_ids, *self.fact_ids, *self.queued_ids]


def journal_dir(memory_dir: Path) -> Path:
    return memory_dir / JOURNAL_DIR


class ForgetJournal:
    """The pending forgets of one memory directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def begin(self, entry: ForgetEntry) -> Path:
        """Durably record ``entry``; returns the file :meth:`finish` removes."""
        path = self.directory / f"{uuid.uuid4().hex}.json"
        data = json.dumps({"version": _VERSION, **asdict(entry)}, ensure_ascii=False)
        partial = path.with_suffix(".partial")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with partial.open("w", encoding="utf-8") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(partial, path)
            _fsync_directory(self.directory)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise StorageError(
                f"could not record the forget in {self.directory}: {exc}; nothing was "
                "deleted. Free disk space or fix the directory's permissions and try again"
            ) from exc
        return path

    def finish(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        _fsync_directory(self.directory)

    def pending(self) -> list[tuple[Path, ForgetEntry]]:
        """Unfinished forgets, oldest first.  A ``.partial`` file is a forget killed before
        its entry was complete: it deleted nothing, so it is dropped."""
        if not self.directory.is_dir():
            return []
        for partial in self.directory.glob("*.partial"):
            partial.unlink(missing_ok=True)
        files = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        return [(path, _read(path)) for path in files]

    def tombstones(self) -> set[str]:
        """Ids of memories a pending forget deletes: no repair may copy them anywhere."""
        return {i for _, entry in self.pending() for i in entry.ids}


def tombstones(memory_dir: Path) -> set[str]:
    return ForgetJournal(journal_dir(memory_dir)).tombstones()


def _read(path: Path) -> ForgetEntry:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw.pop("version", None)
        return ForgetEntry(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise StorageError(
            f"the forget journal entry {path} is unreadable ({exc}): a forget did not finish "
            "and what it was deleting is unknown. Run the same `shiyi memory forget` again, "
            f"then remove {path}"
        ) from exc


def _fsync_directory(directory: Path) -> None:
    """Make a rename or unlink in ``directory`` durable (POSIX; a no-op where it cannot)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
