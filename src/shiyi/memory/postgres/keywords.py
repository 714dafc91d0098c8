"""Keyword recall on PostgreSQL: shiyi's own terms in a GIN-indexed tsvector, ranked by the
same BM25 (k1 = 1.2, b = 0.75, IDF clamped at 1e-6) as SQLite FTS5 computes for the embedded
store, over the same scoring budget, so both backends return the same hits in the same order.

Documents are tokenised by :func:`shiyi.index.text.tokenize` (numbers, identifiers, paths and
jieba-segmented Chinese kept).  The tsvector holds the distinct terms (matching), ``tf`` the
count of each (scoring), ``length`` the number of terms (BM25's document length); triggers keep
the corpus statistics (see :mod:`shiyi.memory.postgres.schema`).  Queries are built from the
terms as tsquery literals, so nothing the user types is parsed as query syntax.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeAlias

from shiyi.index.keyword_visible import FEW_DOCUMENTS, K1, B, idf
from shiyi.index.spelling import corrections, indexed_forms, search_terms, unknown_words
from shiyi.index.text import query_terms, tokenize
from shiyi.memory.models import Scored
from shiyi.memory.postgres.schema import Conn

SCORE_BUDGET = 4000
"""Documents scored per query at most, as in :mod:`shiyi.index.keyword` (same plan)."""
IndexedNode: TypeAlias = Literal["event", "fact"]
_MAX_LEXEME_BYTES = 2046  # PostgreSQL refuses longer tsvector words
_MAX_TSVECTOR_BYTES = 1_000_000  # and tsvectors over 1 MB

# An owner of '' (unknown) keeps the one the document had.
_UPSERT = (
    "INSERT INTO keyword_docs (id, node, terms, tf, length, owner)"
    " SELECT d.id, d.node, array_to_tsvector(d.terms::text[]), d.tf, d.length, d.owner"
    " FROM unnest(%s::text[], %s::text[], %s::text[], %s::jsonb[], %s::integer[], %s::text[])"
    "   AS d(id, node, terms, tf, length, owner)"
    " ON CONFLICT (id) DO UPDATE SET node = excluded.node, terms = excluded.terms,"
    " tf = excluded.tf, length = excluded.length, owner = CASE WHEN excluded.owner = ''"
    " THEN keyword_docs.owner ELSE excluded.owner END"
)
_SEARCH = """
SELECT d.id, d.node, s.score FROM keyword_docs AS d,
LATERAL (
    SELECT sum(q.idf * (tf.n * (%(k1)s + 1.0)) / (tf.n + %(k1)s * (1.0 - %(b)s + %(b)s * d.length / %(avgdl)s))) AS score
    FROM unnest(%(terms)s::text[], %(idfs)s::float8[]) AS q(term, idf),
    LATERAL (SELECT (d.tf ->> q.term)::float8 AS n) AS tf
    WHERE tf.n IS NOT NULL
) AS s
WHERE d.terms @@ %(query)s::tsquery AND d.seq >= %(min_seq)s {filters}
ORDER BY s.score DESC, d.seq
LIMIT %(limit)s
"""  # noqa: E501
_NTH_NEWEST = (
    "SELECT seq FROM keyword_docs AS d WHERE terms @@ %(query)s::tsquery {filters}"
    " ORDER BY seq DESC LIMIT 1 OFFSET %(offset)s"
)
_OWNER_FILTER = "AND d.owner = ANY(%(owners)s::text[])"


def document(doc_id: str, node: IndexedNode, text: str) -> tuple[str, str, str, str, int]:
    """(id, node, terms as a text[] literal, tf as JSON, length) for :data:`_UPSERT`."""
    terms = tokenize(text, stems=True)
    counts = Counter(t for t in terms if len(t.encode()) <= _MAX_LEXEME_BYTES)
    kept: dict[str, int] = {}
    size = 0
    for term, count in counts.items():
        size += len(term.encode()) + 8  # a lexeme's bytes plus its entry
        if size > _MAX_TSVECTOR_BYTES:
            break  # a huge document keeps its first terms; its length still counts all
        kept[term] = count
    return doc_id, node, _text_array(list(kept)), json.dumps(kept), len(terms)


def _text_array(items: Sequence[str]) -> str:
    quoted = ('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in items)
    return "{" + ",".join(quoted) + "}"


def index(
    conn: Conn,
    items: Sequence[tuple[str, IndexedNode, str]],
    owners: Mapping[str, str] | None = None,
) -> int:
    """Index (id, node, text) items, replacing any earlier text of the same id; ``owners``:
    each id's owner tag (an id missing from it keeps the owner it had, '' when new)."""
    # Last text wins for an id repeated in one batch (ON CONFLICT cannot touch a row twice).
    latest = {doc_id: (node, text) for doc_id, node, text in items}
    known = owners or {}
    rows = [
        (*document(doc_id, node, text), known.get(doc_id, ""))
        for doc_id, (node, text) in latest.items()
    ]
    if not rows:
        return 0
    columns = list(zip(*rows, strict=True))
    conn.execute(_UPSERT, [list(column) for column in columns])
    return len(rows)


def delete(conn: Conn, ids: Sequence[str]) -> int:
    cursor = conn.execute("DELETE FROM keyword_docs WHERE id = ANY(%s)", (list(ids),))
    return cursor.rowcount


def tsquery(terms: Sequence[str]) -> str:
    """A tsquery literal OR-ing the terms exactly as written (no parsing, no stemming)."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)


def search(
    conn: Conn,
    query: str,
    limit: int,
    node: IndexedNode | None = None,
    owners: Collection[str] | None = None,
) -> list[Scored]:
    """Best matches first; score is BM25 (higher is better), as FTS5's ``-bm25()``;
    ``owners``: only documents of these owner tags (and of none known yet)."""
    terms = query_terms(query, stems=True)
    if not terms or limit <= 0:
        return []
    docs, tokens, frequency = _statistics(conn, terms)
    held = partial(_some_hold, conn, frequency)
    found = corrections(query, held, partial(_held, conn))
    extra = search_terms(found, terms, stems=True)
    if extra:  # a mistyped word: :mod:`shiyi.index.spelling`
        terms = [*terms, *extra]
        frequency |= dict.fromkeys(extra, 0) | _held(conn, extra)
    tags = None if owners is None else [*sorted(set(owners)), ""]
    visible = _few_visible(conn, tags, terms) if tags is not None else None
    if visible is not None:  # scored over the viewer's own documents and statistics
        docs, tokens, frequency = visible
        chosen, min_seq = [t for t in terms if frequency[t] > 0], 0
    else:
        chosen, min_seq = _plan(conn, terms, frequency, tags)
    if not chosen:
        return []
    idfs = [idf(docs, frequency[t]) for t in chosen]
    params: dict[str, Any] = {
        "k1": K1,
        "b": B,
        "avgdl": tokens / docs,
        "terms": chosen,
        "idfs": idfs,
        "query": tsquery(chosen),
        "min_seq": min_seq,
        "limit": limit,
        "node": node,
        "owners": tags,
    }
    filters = ("AND d.node = %(node)s " if node is not None else "") + _owners_sql(tags)
    rows = conn.execute(_SEARCH.format(filters=filters), params).fetchall()
    return [Scored(str(i), float(score), _node(kind)) for i, kind, score in rows]


def _few_visible(
    conn: Conn, tags: list[str], terms: Sequence[str]
) -> tuple[int, int, dict[str, int]] | None:
    """(documents, tokens, documents holding each term) among the documents of ``tags``,
    when they are at most :data:`~shiyi.index.keyword_visible.FEW_DOCUMENTS` while some
    document is another's; else None.  As the embedded index does
    (:mod:`shiyi.index.keyword_visible`): nothing another user holds changes the search."""
    capped = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM keyword_docs WHERE owner = ANY(%s) LIMIT %s) AS t",
        (tags, FEW_DOCUMENTS + 1),
    ).fetchone()
    if capped is None or int(capped[0]) > FEW_DOCUMENTS:
        return None
    other = conn.execute(
        "SELECT 1 FROM keyword_docs WHERE NOT owner = ANY(%s) LIMIT 1", (tags,)
    ).fetchone()
    if other is None:
        return None
    row = conn.execute(
        "SELECT count(*), coalesce(sum(length), 0), array(SELECT count(d.id) FROM"
        "   unnest(%(terms)s::text[]) WITH ORDINALITY AS q(term, n)"
        "   LEFT JOIN keyword_docs AS d ON d.owner = ANY(%(tags)s) AND d.tf ? q.term"
        "   GROUP BY q.n ORDER BY q.n)"
        " FROM keyword_docs WHERE owner = ANY(%(tags)s)",
        {"terms": list(terms), "tags": tags},
    ).fetchone()
    assert row is not None, "an aggregate returns a row"
    return int(row[0]), int(row[1]), {t: int(n) for t, n in zip(terms, row[2], strict=True)}


def _node(kind: str) -> IndexedNode | None:
    return "event" if kind == "event" else "fact" if kind == "fact" else None


def _corpus(conn: Conn) -> tuple[int, int]:
    row = conn.execute("SELECT docs, tokens FROM keyword_stats").fetchone()
    assert row is not None, "keyword_stats has its row from the first migration"
    return int(row[0]), int(row[1])


def _statistics(conn: Conn, terms: Sequence[str]) -> tuple[int, int, dict[str, int]]:
    """(documents, tokens, documents holding each term) in one round trip."""
    row = conn.execute(
        "SELECT s.docs, s.tokens, coalesce(("
        "  SELECT json_object_agg(term, docs) FROM keyword_df WHERE term = ANY(%s)), '{}')"
        " FROM keyword_stats AS s",
        (list(terms),),
    ).fetchone()
    assert row is not None, "keyword_stats has its row from the first migration"
    found = {str(term): int(count) for term, count in dict(row[2]).items()}
    return int(row[0]), int(row[1]), {t: found.get(t, 0) for t in terms}


def spelling(conn: Conn, query: str, unheld: Collection[str] = ()) -> dict[str, str]:
    """The query's typing slips with the indexed words they are read as, as the embedded
    index reads them (:meth:`shiyi.index.keyword.KeywordIndex.spelling`)."""
    if not unknown_words(query):
        return {}
    forms = indexed_forms(unheld, stems=True)
    return corrections(query, partial(_some_hold, conn, {}), partial(_held, conn), forms)


def _some_hold(conn: Conn, counted: dict[str, int], words: Sequence[str]) -> set[str]:
    """Which of ``words`` some document holds (``counted``: counts already known)."""
    known = {w for w in words if counted.get(w, 0)}
    unasked = [w for w in words if w not in counted]
    return known | set(_held(conn, unasked)) if unasked else known


def _held(conn: Conn, terms: Sequence[str]) -> dict[str, int]:
    """Documents holding each of ``terms`` that any does (one indexed lookup for all)."""
    rows = conn.execute(
        "SELECT term, docs FROM keyword_df WHERE term = ANY(%s) AND docs > 0", (list(terms),)
    ).fetchall()
    return {str(term): int(docs) for term, docs in rows}


def _owners_sql(tags: list[str] | None) -> str:
    return "" if tags is None else _OWNER_FILTER


def _plan(
    conn: Conn, terms: Sequence[str], frequency: dict[str, int], owners: list[str] | None = None
) -> tuple[list[str], int]:
    """(terms to score, lowest seq to score): the embedded index's plan, term for term.

    Rarest terms first while their documents fit the budget; if even the rarest is too
    common, every term but only the newest budget's worth of matching documents.  Counts
    are capped at budget + 1 as the embedded plan caps them, so ties order the same way.
    """
    capped = {t: min(frequency[t], SCORE_BUDGET + 1) for t in terms}
    present = sorted((t for t in terms if capped[t] > 0), key=capped.__getitem__)
    if not present:
        return [], 0
    chosen: list[str] = []
    total = 0
    for term in present:
        if chosen and total + capped[term] > SCORE_BUDGET:
            break
        chosen.append(term)
        total += capped[term]
    if total <= SCORE_BUDGET:
        return chosen, 0
    nth = _NTH_NEWEST.format(filters=_owners_sql(owners))
    params = {"query": tsquery(present), "owners": owners, "offset": SCORE_BUDGET - 1}
    row = conn.execute(nth, params).fetchone()
    return present, int(row[0]) if row else 0


def count(conn: Conn) -> int:
    return _corpus(conn)[0]
