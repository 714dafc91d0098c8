"""The echoes a forget takes along: derived turns repeating what it forgets (issue 30).

A ``query_memory`` result or a reply quoting "I live in Berlin" kept the sentence alive in
the graph, the SQLite mirror, the session log and the run files after the original was
forgotten.  A forget now also deletes every derived turn (:mod:`shiyi.memory.text.echoes`) that
quotes one of the texts it forgets, by the measure that marked them: the whole turn goes
(it only repeated memory; the turns it repeated are the ones being forgotten), and with it
its log row, its run file's lines and the run archives citing it, by the paths every
forgotten event takes.

Candidates come from the keyword index, which holds derived turns too (recall leaves them
out only after reading them): :data:`POOL` per forgotten text.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from shiyi.memory.protocol import MemoryStore
from shiyi.memory.text.echoes import quotes, terms

POOL = 50
"""Keyword candidates read per forgotten text (a text echoed more often than this in one
store is an edge case a second forget of the same text reaches)."""


def echoes_of(
    store: MemoryStore,
    texts: Sequence[str],
    taken: Collection[str],
    owners: Collection[str] | None = None,
) -> list[str]:
    """Ids of derived turns (not in ``taken``) quoting any of ``texts``, or holding every
    search term of one (a forget by query's words); ``owners``: only turns of these owner
    tags (the forgetting user's: another user's echoes of the same words, however many,
    then take none of the places the search reads)."""
    found: dict[str, None] = {}
    for text in dict.fromkeys(t for t in texts if t.strip()):
        wanted = terms(text)
        scored = store.keyword_search(text, POOL, owners)
        ids = [s.id for s in scored if s.node == "event" and s.id not in taken]
        for event in store.get_events(ids):
            if event.derived and (
                quotes(event.content, text) or (wanted and wanted <= terms(event.content))
            ):
                found[event.id] = None
    return list(found)
