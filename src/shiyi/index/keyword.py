"""Keyword recall over SQLite FTS5 with our own tokens (numbers, identifiers, Chinese words).

Documents are stored as their :func:`~shiyi.index.text.tokenize` terms joined by spaces.
The FTS5 tokenizer (``unicode61`` with ``tokenchars``) then only has to split on spaces,
so ``2024-05-01``, ``src/app/main.py`` or ``user3`` survive as single terms.  Queries are
tokenised the same way and every term is double-quoted, so FTS syntax typed by the user
(``"``, ``*``, ``NEAR``, ``-``, ``:``) is matched as text instead of being parsed.

Tables are prefixed ``kw_`` because the SQLite file may be shared (e.g. with a job queue):
``kw_docs`` maps our string ids to integer rowids and holds the node kind and the document's
*owner* (an opaque tag saying who may see it; ``""`` while unknown); ``kw_fts`` holds the terms
under the same rowid.  A search may be limited to some owners: the filter runs inside the
query, so on a store shared by several users one user's thousands of documents on the same
words cannot take every place of another's search.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Literal, TypeAlias

from shiyi.index import keyword_visible
from shiyi.index.keyword_visible import Document, VisibleDocuments, node_kind
from shiyi.index.spelling import corrections, indexed_forms, search_terms, unknown_words
from shiyi.index.sqlite_file import SqliteFile
from shiyi.index.text import query_terms, tokenize
from shiyi.index.types import Scored

# "chunk" and "summary": the knowledge base keeps its own index of this kind in its own file.
IndexedNode: TypeAlias = Literal["event", "fact", "chunk", "summary"]

# Every non-space character our tokenizer can put inside a term must be a token char here,
# otherwise FTS5 would split e.g. "main.py" at the dot.
_TOKENCHARS = "._-/@+~:,"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS kw_docs (
    seq  INTEGER PRIMARY KEY,
    id   TEXT NOT NULL UNIQUE,
    node TEXT NOT NULL,
    owner TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS kw_docs_node ON kw_docs(node);
CREATE VIRTUAL TABLE IF NOT EXISTS kw_fts USING fts5(
    terms,
    tokenize = "unicode61 remove_diacritics 0 tokenchars '{_TOKENCHARS}'"
);
"""
# BM25 costs ~2 us per matching document, so a query is planned to score at most about
# this many: keeps p95 well under 20 ms on 100k documents.
_SCORE_BUDGET = 4000
# Only documents without an owner: finds what an older index has yet to be told.
_UNOWNED_INDEX = "CREATE INDEX IF NOT EXISTS kw_docs_unowned ON kw_docs(seq) WHERE owner = ''"
# One owner's documents are one range: a viewer's few are read without the others'.
_OWNER_INDEX = "CREATE INDEX IF NOT EXISTS kw_docs_owner ON kw_docs(owner)"
# CROSS JOIN keeps the full-text match the outer loop: the owner filter is checked per match.
_SEARCH = """
SELECT d.id, bm25(kw_fts) AS rank_score, d.node
FROM kw_fts CROSS JOIN kw_docs AS d ON d.seq = kw_fts.rowid
WHERE kw_fts MATCH ? AND kw_fts.rowid >= ? {filters}
ORDER BY rank_score
LIMIT ?
"""
_CAPPED_COUNT = "SELECT count(*) FROM (SELECT 1 FROM kw_fts WHERE kw_fts MATCH ? LIMIT ?)"
# Per connection (the temp schema): the file itself is never changed by reading it.
_VOCABULARY = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.kw_vocab USING fts5vocab(main, kw_fts, 'row')"
)
_NTH_NEWEST = """
SELECT kw_fts.rowid FROM kw_fts CROSS JOIN kw_docs AS d ON d.seq = kw_fts.rowid
WHERE kw_fts MATCH ? {filters} ORDER BY kw_fts.rowid DESC LIMIT 1 OFFSET ?
"""
UNKNOWN_OWNER = ""
"""The owner of a document indexed without one: searches for some owners include it (the
caller checks who may see it) until :meth:`KeywordIndex.set_owners` tells its owner."""


def match_expression(query: str) -> str:
    """An FTS5 MATCH string: the query's terms, each quoted, joined by OR ("" if none)."""
    return _or_terms(query_terms(query))


def _or_terms(terms: Sequence[str]) -> str:
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def _owner_filter(owners: Collection[str] | None) -> tuple[str, tuple[str, ...]]:
    """SQL limiting ``d`` to documents of these owners (and of none known yet), its params."""
    if owners is None:
        return "", ()
    tags = (*sorted(set(owners)), UNKNOWN_OWNER)
    return f"AND d.owner IN ({','.join('?' * len(tags))})", tags


def _plan(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    counts: dict[str, int],
    owners: Collection[str] | None = None,
) -> tuple[str, int]:
    """(MATCH expression, lowest rowid to score) keeping BM25's work near the budget.

    Rare terms decide the ranking (high IDF), so terms are taken rarest first while their
    document counts fit the budget; very common ones add little and are dropped.  If even
    the rarest term is too common, all terms are kept but only the newest rows holding a
    budget's worth of matches are scored: recent memories win ties anyway.  With ``owners``,
    those are the newest of *their* matches: another owner's newer ones, however many, are
    walked past (a primary-key look-up each, no scoring).
    """
    present = sorted((t for t in terms if counts[t] > 0), key=counts.__getitem__)
    if not present:
        return "", 0
    chosen: list[str] = []
    total = 0
    for term in present:
        if chosen and total + counts[term] > _SCORE_BUDGET:
            break
        chosen.append(term)
        total += counts[term]
    if total <= _SCORE_BUDGET:
        return _or_terms(chosen), 0
    expression = _or_terms(present)
    # Walking the merged doclist from the newest row stops after a budget's worth.
    filters, tags = _owner_filter(owners)
    nth = _NTH_NEWEST.format(filters=filters)
    row = conn.execute(nth, (expression, *tags, _SCORE_BUDGET - 1)).fetchone()
    return expression, int(row[0]) if row else 0


def _counts(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    return {t: _capped_count(conn, t, _SCORE_BUDGET + 1) for t in terms}


def _some_hold(conn: sqlite3.Connection, counted: dict[str, int], words: Sequence[str]) -> set[str]:
    """Which of ``words`` some document holds (``counted``: counts already known)."""
    return {w for w in words if (counted[w] if w in counted else _capped_count(conn, w, 1))}


def _held(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    """Documents holding each of ``terms`` that any does, read from the index's vocabulary in
    one statement (the spelling's 300-600 candidates of a slip: 13 us each at 100k documents,
    against 17 us for a ``_capped_count`` each)."""
    conn.execute(_VOCABULARY)
    marks = ",".join("?" * len(terms))
    rows = conn.execute(f"SELECT term, doc FROM temp.kw_vocab WHERE term IN ({marks})", terms)
    return {str(term): int(docs) for term, docs in rows}


def _capped_count(conn: sqlite3.Connection, term: str, cap: int) -> int:
    """Documents holding ``term``, counted only up to ``cap``.

    fts5vocab's ``doc`` column walks the term's whole doclist: 2-20 ms for a term in all of
    100k documents, several times per query.  The plan only needs to know whether a term
    fits the budget, and this stops after ``cap`` rows (0.3 ms).
    """
    row = conn.execute(_CAPPED_COUNT, ('"' + term.replace('"', '""') + '"', cap)).fetchone()
    return int(row[0])


def _add_owner_column(conn: sqlite3.Connection) -> None:
    """An index from before owners gains the column, every document's owner unknown."""
    columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(kw_docs)")}
    if "owner" not in columns:
        with conn:
            conn.execute("ALTER TABLE kw_docs ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
    conn.execute(_UNOWNED_INDEX)
    conn.execute(_OWNER_INDEX)


class KeywordIndex:
    """BM25 keyword search over events and facts; safe to share between threads."""

    def __init__(self, path: Path | SqliteFile, *, stems: bool = False) -> None:
        """``stems``: index and query plain English words with their stems too (see
        :func:`~shiyi.index.text.tokenize`); an index must always be used the same way."""
        self._stems = stems
        self._file = path if isinstance(path, SqliteFile) else SqliteFile(path)
        self._owns_file = not isinstance(path, SqliteFile)
        self._visible = VisibleDocuments()
        with self._file.errors("create the keyword index"):
            conn = self._file.conn()
            conn.executescript(_SCHEMA)
            _add_owner_column(conn)

    # --- writes ----------------------------------------------------------------------
    def add(
        self,
        items: Sequence[tuple[str, IndexedNode, str]],
        owners: Mapping[str, str] | None = None,
    ) -> int:
        """Index (id, node, text) items, replacing any earlier text of the same id.

        ``owners``: each id's owner tag; an id missing from it keeps the owner it had
        (:data:`UNKNOWN_OWNER` when new)."""
        # Tokenise outside the lock: jieba is the slow part and needs no database.
        known = owners or {}
        rows = [
            (
                doc_id,
                node,
                known.get(doc_id, UNKNOWN_OWNER),
                " ".join(tokenize(text, stems=self._stems)),
            )
            for doc_id, node, text in items
        ]
        if not rows:
            return 0
        written = []
        with self._file.write("index documents") as conn:
            for doc_id, node, owner, terms in rows:
                seq = self._upsert(conn, doc_id, node, owner, terms)
                written.append((owner, Document(seq, doc_id, node_kind(node), terms.split())))
        self._visible.added(written)
        return len(rows)

    @staticmethod
    def _upsert(conn: sqlite3.Connection, doc_id: str, node: str, owner: str, terms: str) -> int:
        seq: int = conn.execute(
            "INSERT INTO kw_docs(id, node, owner) VALUES (?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET node = excluded.node, owner = CASE"
            " WHEN excluded.owner = '' THEN kw_docs.owner ELSE excluded.owner END RETURNING seq",
            (doc_id, node, owner),
        ).fetchone()[0]
        conn.execute("DELETE FROM kw_fts WHERE rowid = ?", (seq,))
        conn.execute("INSERT INTO kw_fts(rowid, terms) VALUES (?, ?)", (seq, terms))
        return seq

    def set_owners(self, owners: Mapping[str, str]) -> None:
        """Tell the owner tag of documents already indexed (ids not indexed are skipped)."""
        if not owners:
            return
        with self._file.write("record who owns documents") as conn:
            conn.executemany(
                "UPDATE kw_docs SET owner = ? WHERE id = ?", [(o, i) for i, o in owners.items()]
            )
        self._visible.forget()

    def unowned(self, limit: int) -> list[tuple[str, IndexedNode]]:
        """Up to ``limit`` (id, node) of documents indexed without an owner, oldest first."""
        with self._file.errors("find documents without an owner"):
            rows = self._file.conn().execute(
                "SELECT id, node FROM kw_docs WHERE owner = '' ORDER BY seq LIMIT ?", (limit,)
            )
            return [(str(doc_id), node) for doc_id, node in rows]

    def delete(self, ids: Sequence[str]) -> int:
        """Remove these ids from the index; returns how many were present."""
        removed = 0
        with self._file.write("delete documents") as conn:
            for doc_id in ids:
                row = conn.execute(
                    "DELETE FROM kw_docs WHERE id = ? RETURNING seq", (doc_id,)
                ).fetchone()
                if row is not None:
                    conn.execute("DELETE FROM kw_fts WHERE rowid = ?", (row[0],))
                    removed += 1
        self._visible.removed(ids)
        return removed

    # --- reads -----------------------------------------------------------------------
    def search(
        self,
        query: str,
        limit: int = 20,
        node: IndexedNode | None = None,
        owners: Collection[str] | None = None,
    ) -> list[Scored]:
        """Best matches first; score is ``-bm25`` (higher is better); ``owners``: only
        documents of these owner tags (and of none known yet), default every document.
        A viewer who may see few of a shared index's documents is scored over those alone
        (:mod:`shiyi.index.keyword_visible`).

        Terms are OR-ed so a document matching only some of them still ranks; BM25 puts
        documents matching more (and rarer) terms first.  A word that looks mistyped is
        searched as the indexed word one edit from it too (:mod:`shiyi.index.spelling`).
        """
        terms = query_terms(query, stems=self._stems)
        if not terms or limit <= 0:
            return []
        owner_filter, tags = _owner_filter(owners)
        filters = f"AND d.node = ? {owner_filter}" if node is not None else owner_filter
        with self._file.errors("search the keyword index"):
            conn = self._file.conn()
            counts = _counts(conn, terms)
            held = partial(_some_hold, conn, counts)
            found = corrections(query, held, partial(_held, conn))
            extra = search_terms(found, terms, stems=self._stems)
            if extra:
                terms = [*terms, *extra]
                counts |= _counts(conn, extra)
            if tags and keyword_visible.few_visible(conn, tags):
                documents = self._visible.documents(conn, tags)
                return keyword_visible.bm25(documents, terms, limit, node)
            expression, min_rowid = _plan(conn, terms, counts, owners)
            if not expression:
                return []
            params: tuple[object, ...] = (expression, min_rowid)
            params += (node, *tags, limit) if node is not None else (*tags, limit)
            rows = conn.execute(_SEARCH.format(filters=filters), params)
            return [Scored(doc_id, -score, node_kind(kind)) for doc_id, score, kind in rows]

    def spelling(self, query: str, unheld: Collection[str] = ()) -> dict[str, str]:
        """The query's typing slips, each with the indexed word it is read as
        (:mod:`shiyi.index.spelling`); {} without a word English does not know, unread.
        ``unheld``: words read as slips though some document holds them."""
        if not unknown_words(query):
            return {}
        with self._file.errors("read the query's spelling"):
            conn = self._file.conn()
            held = partial(_some_hold, conn, {})
            forms = indexed_forms(unheld, stems=self._stems)
            return corrections(query, held, partial(_held, conn), forms)

    def count(self, node: IndexedNode | None = None) -> int:
        with self._file.errors("count documents"):
            if node is None:
                row = self._file.conn().execute("SELECT count(*) FROM kw_docs").fetchone()
            else:
                sql = "SELECT count(*) FROM kw_docs WHERE node = ?"
                row = self._file.conn().execute(sql, (node,)).fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the file's connections if this index opened it; later calls raise."""
        if self._owns_file:
            self._file.close()
