"""Asking a recall path for more when what it found is mostly not the viewer's to see.

Every path ranks the whole store and is asked for its best ``candidates``; who may see what
is decided after (:func:`~shiyi.memory.recall.paths.showable`).  On a server shared by
several users that let one user's memories hide another's: with 300 turns of one user about
baking bread, every path's first 40 were theirs, and another user asking "what bread did I
bake?" found nothing of their own, though their turn about it was there.  Echoes of earlier
results and superseded facts, which are never shown either, crowd a path the same way.

So a path whose candidates are fewer than half showable, and that stopped at its limit (it
had more to give), is asked again for :data:`WIDER` times as many, until half are showable,
it runs out, or it has been asked for :data:`WIDEST` times its first limit (the recency path,
which only nudges, is not asked again).  A store of one
user's memories never asks twice; a crowded one pays a few more statements, and only for the
paths that were crowded.  Past :data:`WIDEST` (a user with a handful of memories among
another's thousands on the same words) the crowding still wins: filtering inside each
path's own query is what would end it.
"""

from __future__ import annotations

from collections.abc import Callable

from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.paths import Found, Records, recall_pool

WIDER = 4
"""How many times more a crowded path is asked for each time."""
WIDEST = 16
"""At most this many times a path's first limit (40 candidates: 640 ids).  Each widening
loads the records of what it finds to see whose they are: at 64 (2,560 ids) a search by a
user holding none of 100,000 turns took 204 ms at p50 (17 ms for their owner)."""

Ask = Callable[[str, int], Found]
"""A path by name, asked for its best ``limit`` ids."""
Showable = Callable[[list[str]], set[str]]
"""Which of some loaded ids the viewer may be shown."""


def widen_crowded(
    store: MemoryStore,
    found: dict[str, Found],
    limits: dict[str, int],
    records: Records,
    shown: set[str],
    ask: Ask,
    showable: Showable,
) -> set[str]:
    """Re-ask every crowded path of ``found`` (asked for ``limits``) in place, loading the
    records of what it finds; returns ``shown`` grown by the newly showable ids."""
    shown = set(shown)
    for name, first in limits.items():
        path, limit = found[name], first
        showable_count = sum(1 for item in path.ranked if item.id in shown)
        while crowded(len(path.ranked), showable_count, limit) and limit < first * WIDEST:
            limit = min(limit * WIDER, first * WIDEST)
            path = ask(name, limit)
            records.load(store, [path], recall_pool())
            shown |= showable([item.id for item in path.ranked if item.id not in shown])
            showable_count = sum(1 for item in path.ranked if item.id in shown)
        found[name] = path
    return shown


def crowded(found: int, showable: int, limit: int) -> bool:
    """A search asked for ``limit`` ids found ``found`` (it had more to give when that is the
    limit), fewer than half of them ``showable``: ask it for more."""
    return found >= limit and showable * 2 < found
