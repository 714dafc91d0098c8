"""Keyword search of a viewer who may see few of a shared index's documents: BM25 over those
documents alone, with their own statistics.

On a store several users share, FTS5's ``bm25()`` weighs a word by how many documents of the
*whole* index hold it, and the scoring plan (:func:`shiyi.index.keyword._plan`) drops the
words too many documents hold.  Both read every user's documents: a user's rare word that
another user says thousands of times was dropped from their search (crowded keyword recall
0.626 at R@10 against 0.647 alone, ``bench/crowd_bench.py``), and the scores of a user's own
documents told how often other users' documents hold a word.

A viewer who may see at most :data:`FEW_DOCUMENTS` documents (the scoring budget: scoring all
of them costs no more than the plan allows) while others exist is searched here instead: the
visible documents are read (one owner-index range each), and scored with FTS5's formula —
k1 = 1.2, b = 0.75, IDF ``log((N - n + 0.5) / (n + 0.5))`` clamped at 1e-6 — over N, n and the
mean length of the visible documents only.  Nothing another user holds changes what this
search returns or its scores.  A store whose documents the viewer may all see keeps FTS5's
own search (the same statistics), so a single user's recall is what it was.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from shiyi.index.types import Scored

FEW_DOCUMENTS = 4000
"""Visible documents searched here at most: ``keyword._SCORE_BUDGET``'s worth (reading and
scoring one costs about what FTS5's ``bm25()`` does)."""
K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6  # FTS5's: a word in more than half the documents still counts a little


@dataclass(frozen=True, slots=True)
class Document:
    seq: int
    id: str
    node: Literal["event", "fact"] | None
    terms: list[str]


def tags_sql(tags: Sequence[str]) -> str:
    return ",".join("?" * len(tags))


def few_visible(conn: sqlite3.Connection, tags: Sequence[str]) -> bool:
    """Whether the documents of ``tags`` are at most :data:`FEW_DOCUMENTS` while some
    document is another's (counted along the owner index, up to one past the limit)."""
    marks = tags_sql(tags)
    counted = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM kw_docs WHERE owner IN ({marks}) LIMIT ?)",
        (*tags, FEW_DOCUMENTS + 1),
    ).fetchone()
    if int(counted[0]) > FEW_DOCUMENTS:
        return False
    other = conn.execute(
        f"SELECT 1 FROM kw_docs WHERE owner NOT IN ({marks}) LIMIT 1", tuple(tags)
    ).fetchone()
    return other is not None


def _read(conn: sqlite3.Connection, tag: str) -> dict[str, Document]:
    """Every document of ``tag``, its indexed terms as FTS5 holds them (read from the FTS5
    table's content, by rowid: 1 us a row against 4 through the virtual table)."""
    rows = conn.execute(
        "SELECT d.seq, d.id, d.node, f.c0 FROM kw_docs AS d CROSS JOIN kw_fts_content AS f"
        " ON f.id = d.seq WHERE d.owner = ?",
        (tag,),
    )
    return {str(i): Document(int(q), str(i), node_kind(n), str(t).split()) for q, i, n, t in rows}


class VisibleDocuments:
    """The documents of the owner tags searched lately, kept as the index changes.

    Reading and splitting a tag's documents costs ~3 us each (2 ms for a LoCoMo
    conversation's 663 turns, 12 ms for the 4,000 of :data:`FEW_DOCUMENTS`), on every search
    of that viewer; kept here, a search reads nothing.  A write of a known owner's document
    updates its tag in place; a write whose owner is not known, or a change of owners,
    forgets every tag (they are read again when next asked)."""

    def __init__(self, tags: int = 16) -> None:
        self._kept: OrderedDict[str, dict[str, Document]] = OrderedDict()
        self._size = tags
        self._changes = 0  # a read stores what it read only if nothing changed meanwhile
        self._lock = threading.Lock()

    def documents(self, conn: sqlite3.Connection, tags: Sequence[str]) -> list[Document]:
        found: list[Document] = []
        for tag in dict.fromkeys(tags):
            with self._lock:
                kept = self._kept.get(tag)
                if kept is not None:
                    self._kept.move_to_end(tag)
                changes = self._changes
            if kept is None:
                kept = _read(conn, tag)
                with self._lock:
                    if changes == self._changes:
                        self._kept[tag] = kept
                        while len(self._kept) > self._size:
                            self._kept.popitem(last=False)
            found.extend(kept.values())
        return found

    def added(self, documents: Iterable[tuple[str, Document]]) -> None:
        """(owner tag, document) written; an unknown owner (``""``) keeps the one it had."""
        with self._lock:
            self._changes += 1
            for tag, document in documents:
                if not tag:
                    self._kept.clear()
                    return
                for kept in self._kept.values():
                    kept.pop(document.id, None)
                owners = self._kept.get(tag)
                if owners is not None:
                    owners[document.id] = document
                    if len(owners) > FEW_DOCUMENTS:  # searched as the whole index from now on
                        del self._kept[tag]

    def removed(self, ids: Iterable[str]) -> None:
        with self._lock:
            self._changes += 1
            for doc_id in ids:
                for kept in self._kept.values():
                    kept.pop(doc_id, None)

    def forget(self) -> None:
        with self._lock:
            self._changes += 1
            self._kept.clear()


def node_kind(kind: str) -> Literal["event", "fact"] | None:
    """The node a stored kind names (``chunk`` and ``summary``: none of the two)."""
    return "event" if kind == "event" else "fact" if kind == "fact" else None


def idf(documents: int, holding: int) -> float:
    value = math.log((documents - holding + 0.5) / (holding + 0.5))
    return value if value > 0.0 else _IDF_FLOOR


def bm25(
    documents: Sequence[Document],
    terms: Sequence[str],
    limit: int,
    node: str | None = None,
) -> list[Scored]:
    """The ``limit`` best of ``documents`` (of ``node``, if given) holding any of ``terms``,
    by BM25 over ``documents``' own statistics; ties: the older document first, as the
    PostgreSQL store orders them."""
    if not documents or not terms:
        return []
    wanted = set(terms)
    holding = dict.fromkeys(terms, 0)
    matched: list[Document] = []
    total = 0
    for document in documents:
        total += len(document.terms)
        shared = wanted.intersection(document.terms)
        if not shared:
            continue
        for term in shared:
            holding[term] += 1
        if node is None or document.node == node:
            matched.append(document)
    average = total / len(documents) or 1.0
    weights = {term: idf(len(documents), holding[term]) for term in wanted}
    scored = [(_score(d.terms, terms, weights, average), d) for d in matched]
    scored.sort(key=lambda item: (-item[0], item[1].seq))
    return [Scored(d.id, score, d.node) for score, d in scored[:limit]]


def _score(
    words: list[str], terms: Iterable[str], weights: dict[str, float], average: float
) -> float:
    norm = K1 * (1.0 - B + B * len(words) / average)
    total = 0.0
    for term in terms:  # a term listed twice counts twice, as a phrase twice in FTS5's query
        count = words.count(term)
        if count:
            total += weights[term] * count * (K1 + 1.0) / (count + norm)
    return total
