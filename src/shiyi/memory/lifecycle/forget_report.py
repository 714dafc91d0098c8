"""What a forget shows its caller: the plan before it deletes anything, the report after.

:class:`~shiyi.memory.lifecycle.forget.Forgetter` makes a :class:`ForgetPlan` (the user sees
it, or a dry run stops there) and returns a :class:`ForgetReport` of what each store lost.
The report also names the files that may still hold the forgotten text's bytes, with the
command that removes them (:data:`COMPACT_HINT`): Kuzu's graph file masks deleted rows, and
PostgreSQL's tables keep dead tuples, until the store is compacted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shiyi.memory.models import MemoryHit

COMPACT_HINT = (
    "no search finds the forgotten text any more, but its bytes remain on disk in {files} "
    "until compacted: stop `shiyi serve` (if it runs) and run `shiyi memory compact`"
)


@dataclass(slots=True)
class ForgetPlan:
    """What one forget will delete; shown to the user before :meth:`Forgetter.execute`."""

    target: str
    event_ids: list[str] = field(default_factory=list)
    fact_ids: list[str] = field(default_factory=list)
    queued_ids: list[str] = field(default_factory=list)
    """Requested ids not in the graph: maybe still queued, so taken out of the job queue."""
    entity_names: list[str] = field(default_factory=list)
    user_id: str | None = None
    texts: list[str] = field(default_factory=list)
    """Further texts whose embeddings go (the query of a forget by query)."""
    hits: list[MemoryHit] = field(default_factory=list)

    def describe(self) -> str:
        parts = [_count(len(self.event_ids), "event"), _count(len(self.fact_ids), "fact")]
        if self.entity_names:
            parts.append("entity " + ", ".join(self.entity_names))
        if self.user_id is not None:
            parts.append(f"every session of user {self.user_id!r}")
        return ", ".join(parts)


@dataclass(slots=True)
class ForgetReport:
    """How many records each store lost."""

    target: str
    events: int = 0
    facts: int = 0
    entities: int = 0
    graph_sessions: int = 0
    keyword_docs: int = 0
    embeddings: int = 0
    jobs_edited: int = 0
    jobs_deleted: int = 0
    messages: int = 0
    log_sessions: int = 0
    summaries: int = 0
    run_files: int = 0
    """Readable run files rendered again (or removed) without the forgotten messages."""
    archives: int = 0
    """Run archives among ``facts``: episodic memories quoting a forgotten message."""
    sessions: list[str] = field(default_factory=list)
    """Sessions whose events were forgotten: a live agent's transcript of them is stale."""
    graph_file: str = ""
    """The store file keeping deleted rows' bytes until compacted ("" if none does)."""
    compacted: bool = False
    """The graph file was rewritten, so no bytes of the deleted records remain in it."""
    wal_busy: list[str] = field(default_factory=list)
    """SQLite files whose WAL another connection kept from being truncated."""

    @property
    def bytes_remain(self) -> list[str]:
        """Files that may still hold the forgotten text's bytes (unreachable by any query)."""
        graph = [self.graph_file] if self.graph_file and self.total and not self.compacted else []
        return [*graph, *self.wal_busy]

    @property
    def total(self) -> int:
        """Events and facts deleted from the graph."""
        return self.events + self.facts

    def lines(self) -> list[str]:
        rows = [
            ("graph", f"{self.events} events, {self.facts} facts, {self.entities} entities, "
                      f"{self.graph_sessions} sessions"),
            ("keyword index", f"{self.keyword_docs} documents"),
            ("embedding cache", f"{self.embeddings} vectors"),
            ("job queue", f"{self.jobs_edited} jobs edited, {self.jobs_deleted} deleted"),
            ("session log", f"{self.messages} messages, {self.log_sessions} sessions"),
            ("run files", f"{self.run_files} rewritten"),
            ("summaries", f"{self.summaries} cached summaries"),
        ]  # fmt: skip
        if self.compacted:
            rows.append(("graph file", "rewritten without the deleted records"))
        if self.archives:
            rows.append(("run archives", f"{self.archives} quoting forgotten messages"))
        lines = [f"  {name:<16} {text}" for name, text in rows]
        lines += [f"  warning: {path} still has a WAL (another process reads it)"
                  for path in self.wal_busy]  # fmt: skip
        if self.bytes_remain:
            lines.append(f"  note: {COMPACT_HINT.format(files=', '.join(self.bytes_remain))}")
        return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
