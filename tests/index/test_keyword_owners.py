"""A keyword search limited to some owners filters inside its query: another owner's many
documents on the same words take none of its places, even past the scoring budget."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shiyi.index import keyword, keyword_visible
from shiyi.index.keyword import IndexedNode, KeywordIndex


def crowded(tmp_path: Path) -> KeywordIndex:
    """Bo's three status notes, then ana's thirty newer ones on the same words."""
    idx = KeywordIndex(tmp_path / "kw.sqlite3")
    bo: list[tuple[str, IndexedNode, str]] = [
        (f"bo{i}", "event", f"a long status update about the far end of the garden {i}")
        for i in range(3)
    ]
    ana: list[tuple[str, IndexedNode, str]] = [
        (f"ana{i}", "event", f"garden status update {i}") for i in range(30)
    ]
    idx.add(bo, dict.fromkeys((key for key, _, _ in bo), "bo"))
    idx.add(ana, dict.fromkeys((key for key, _, _ in ana), "ana"))
    return idx


def ids(idx: KeywordIndex, query: str, limit: int, owners: set[str] | None) -> list[str]:
    return [s.id for s in idx.search(query, limit, owners=owners)]


def test_only_the_owners_documents_take_places(tmp_path: Path) -> None:
    idx = crowded(tmp_path)
    assert all(key.startswith("ana") for key in ids(idx, "garden status", 3, None))
    assert sorted(ids(idx, "garden status", 3, {"bo"})) == ["bo0", "bo1", "bo2"]
    assert len(ids(idx, "garden status", 40, {"ana", "bo"})) == 33
    assert ids(idx, "garden status", 3, {"carol"}) == []
    assert ids(idx, "garden", 3, {"bo"}) == ids(idx, "garden", 3, {"bo", "carol"})


def test_the_scoring_budget_counts_only_the_owners_newest_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every term is in more documents than the budget of 5: only the newest 5 matches are
    # scored, and ana's thirty are all newer than bo's three (ana sees more than a few
    # documents, so her search is FTS5's; bo's three are scored alone)
    monkeypatch.setattr(keyword, "_SCORE_BUDGET", 5)
    monkeypatch.setattr(keyword_visible, "FEW_DOCUMENTS", 5)
    idx = crowded(tmp_path)
    assert not {"bo0", "bo1", "bo2"} & set(ids(idx, "status update", 40, None))
    assert sorted(ids(idx, "status update", 40, {"bo"})) == ["bo0", "bo1", "bo2"]
    assert len(ids(idx, "status update", 40, {"ana"})) == 5


def test_a_document_of_unknown_owner_is_found_until_its_owner_is_told(tmp_path: Path) -> None:
    idx = crowded(tmp_path)
    idx.add([("old", "fact", "the garden gate is green")])
    assert "old" in ids(idx, "garden gate", 5, {"bo"})  # the caller decides who sees it
    assert idx.unowned(10) == [("old", "fact")]
    idx.set_owners({"old": "ana", "missing": "bo"})
    assert idx.unowned(10) == []
    assert "old" not in ids(idx, "garden gate", 5, {"bo"})
    assert ids(idx, "garden gate", 1, {"ana"}) == ["old"]


def test_indexing_again_without_an_owner_keeps_the_owner(tmp_path: Path) -> None:
    idx = crowded(tmp_path)
    idx.add([("bo0", "event", "the greenhouse roof leaks")])  # contextual text, re-indexed
    assert ids(idx, "greenhouse", 5, {"bo"}) == ["bo0"]
    assert ids(idx, "greenhouse", 5, {"ana"}) == []
    idx.add([("bo0", "event", "the greenhouse roof leaks")], {"bo0": "ana"})
    assert ids(idx, "greenhouse", 5, {"ana"}) == ["bo0"]


def test_an_index_from_before_owners_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(
            "CREATE TABLE kw_docs (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,"
            " node TEXT NOT NULL);"
            'CREATE VIRTUAL TABLE kw_fts USING fts5(terms, tokenize = "unicode61");'
            "INSERT INTO kw_docs(seq, id, node) VALUES (1, 'e1', 'event');"
            "INSERT INTO kw_fts(rowid, terms) VALUES (1, 'tulips bloom');"
        )
    conn.close()
    idx = KeywordIndex(path)
    assert idx.unowned(5) == [("e1", "event")]
    assert ids(idx, "tulips", 5, {"bo"}) == ["e1"]  # unknown: found, for the caller to check
    idx.set_owners({"e1": "ana"})
    assert ids(idx, "tulips", 5, {"bo"}) == []
    idx.close()
