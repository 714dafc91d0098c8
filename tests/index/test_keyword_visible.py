"""A viewer who may see few of a shared keyword index's documents is scored over those alone:
FTS5's BM25 over their own statistics, kept as documents are written, moved and deleted."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.index import keyword_visible
from shiyi.index.keyword import IndexedNode, KeywordIndex
from shiyi.index.keyword_visible import Document, bm25
from shiyi.index.text import query_terms

TEXTS = [
    "my pottery class meets on Saturday mornings",
    "the kiln firing went wrong, pottery pottery everywhere",
    "I baked sourdough bread on Saturday",
    "a long walk in the park with the dog on a sunny Saturday afternoon after lunch",
    "the pottery teacher said my bowls need a thinner base",
    "we talked about the weekend",
]


def items(owner: str, texts: list[str], first: int = 0) -> list[tuple[str, IndexedNode, str]]:
    return [(f"{owner}{i}", "event", text) for i, text in enumerate(texts, start=first)]


def index(tmp_path: Path, owned: dict[str, list[str]]) -> KeywordIndex:
    idx = KeywordIndex(tmp_path / "kw.sqlite3", stems=True)
    for owner, texts in owned.items():
        rows = items(owner, texts)
        idx.add(rows, {key: owner for key, _, _ in rows})
    return idx


def scored(idx: KeywordIndex, query: str, owners: set[str] | None) -> list[tuple[str, float]]:
    return [(s.id, round(s.score, 9)) for s in idx.search(query, 20, owners=owners)]


@pytest.mark.parametrize(
    "query", ["pottery on Saturday", "pottery pottery", "the weekend walk", "sourdough kiln"]
)
def test_the_formula_is_fts5s_bm25(tmp_path: Path, query: str) -> None:
    """Over the same documents, our BM25 gives FTS5's scores and order."""
    idx = index(tmp_path, {"ana": TEXTS})
    conn = idx._file.conn()
    documents = [
        Document(int(seq), str(doc_id), "event", str(terms).split())
        for seq, doc_id, terms in conn.execute(
            "SELECT d.seq, d.id, f.terms FROM kw_docs AS d JOIN kw_fts AS f ON f.rowid = d.seq"
        )
    ]
    ours = [(s.id, round(s.score, 9)) for s in bm25(documents, query_terms(query, stems=True), 20)]
    assert ours == scored(idx, query, None)
    assert ours  # every query matches something
    idx.close()


def test_another_users_documents_change_nothing(tmp_path: Path) -> None:
    idx = index(tmp_path, {"ana": TEXTS, "bo": ["a quiet evening"]})
    alone = scored(idx, "pottery on Saturday", {"ana"})
    crowd = items("bo", [f"pottery sale on Saturday, lot {i}" for i in range(300)], first=1)
    idx.add(crowd, {key: "bo" for key, _, _ in crowd})
    assert scored(idx, "pottery on Saturday", {"ana"}) == alone
    assert [key for key, _ in alone][:2] == ["ana0", "ana1"]  # both words, then pottery twice
    # seen by everyone, the crowd's word is common and its scores are the whole index's
    assert scored(idx, "pottery on Saturday", None)[0][0].startswith("bo")
    idx.close()


def test_a_word_others_say_past_the_scoring_budget_is_still_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shiyi.index import keyword

    monkeypatch.setattr(keyword, "_SCORE_BUDGET", 5)
    monkeypatch.setattr(keyword_visible, "FEW_DOCUMENTS", 10)
    idx = index(tmp_path, {"ana": TEXTS})
    crowd = items("bo", [f"pottery for sale, lot {i}" for i in range(40)])
    idx.add(crowd, {key: "bo" for key, _, _ in crowd})
    found = [key for key, _ in scored(idx, "pottery teacher", {"ana"})]
    assert found[0] == "ana4" and {"ana0", "ana1"} <= set(found)
    # ana, seeing more than a few documents, is searched as the whole index plans it: the
    # crowd's word is past the budget and dropped, only the rare one is searched
    monkeypatch.setattr(keyword_visible, "FEW_DOCUMENTS", 3)
    assert [key for key, _ in scored(idx, "pottery teacher", {"ana"})] == ["ana4"]
    idx.close()


def test_what_is_kept_follows_writes_moves_and_deletes(tmp_path: Path) -> None:
    idx = index(tmp_path, {"ana": TEXTS, "bo": ["a quiet evening"]})

    def ana(query: str) -> list[str]:
        return [key for key, _ in scored(idx, query, {"ana"})]

    assert ana("kiln") == ["ana1"]  # ana's documents are now kept
    idx.add([("ana9", "event", "a second kiln arrived")], {"ana9": "ana"})
    assert set(ana("kiln")) == {"ana1", "ana9"}
    idx.add([("ana9", "event", "a new glaze arrived")], {"ana9": "ana"})  # its text changed
    assert ana("kiln") == ["ana1"] and ana("glaze") == ["ana9"]
    idx.delete(["ana1"])
    assert ana("kiln") == []
    idx.add([("ana9", "event", "a new glaze arrived")], {"ana9": "bo"})  # given to bo
    assert ana("glaze") == []
    assert [s.id for s in idx.search("glaze", 5, owners={"bo"})] == ["ana9"]
    idx.set_owners({"ana9": "ana"})
    assert ana("glaze") == ["ana9"]
    idx.add([("new", "event", "glaze recipes")])  # owner not known yet: found by all
    assert set(ana("glaze")) == {"ana9", "new"}
    idx.close()


def test_a_store_only_one_viewer_sees_keeps_fts5s_search(tmp_path: Path) -> None:
    idx = index(tmp_path, {"ana": TEXTS})
    conn = idx._file.conn()
    assert not keyword_visible.few_visible(conn, ["ana", ""])
    assert scored(idx, "pottery on Saturday", {"ana"}) == scored(idx, "pottery on Saturday", None)
    idx.close()


def test_a_viewer_who_grows_past_a_few_documents_is_no_longer_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_visible, "FEW_DOCUMENTS", 8)
    idx = index(tmp_path, {"ana": TEXTS, "bo": ["a quiet evening"]})
    assert [s.id for s in idx.search("kiln", 5, owners={"ana"})] == ["ana1"]
    assert "ana" in idx._visible._kept
    more = items("ana", ["kiln notes", "more kiln notes", "a third note"], first=20)
    idx.add(more, {key: "ana" for key, _, _ in more})
    assert "ana" not in idx._visible._kept  # nine documents: too many to keep
    found = {s.id for s in idx.search("kiln", 5, owners={"ana"})}
    assert found == {"ana1", "ana20", "ana21"}
    assert "ana" not in idx._visible._kept
    idx.close()
