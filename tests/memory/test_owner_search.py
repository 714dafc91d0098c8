"""Both backends search only a viewer's own memories when asked for its owners, inside the
keyword and vector queries, and a store from before owner tags learns them when it opens."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from shiyi.index import vector_rows
from shiyi.memory.models import EntityRecord, FactRecord, Scope
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.scopes import Viewer
from tests.memory.conftest import StoreFactory
from tests.memory.test_derived_migration import _back_one_version
from tests.support.records import turn

ANA, BO = Viewer("ana"), Viewer("bo")


def fact(key: str, text: str, scope: Scope, user: str) -> FactRecord:
    return FactRecord(key, key, text, scope=scope, user_id=user, created_at=1.0)


def seed(store: MemoryStore) -> None:
    """Each user's tulip turn, ana's own fact and agent fact, a workspace fact; all near."""
    store.add_events(
        [turn(0, "my tulips bloom in April", user_id="ana"),
         turn(1, "the tulips bloom red, says bo", user_id="bo")]
    )  # fmt: skip
    store.upsert_facts(
        [fact("f_user", "ana grows tulips", "user", "ana"),
         fact("f_agent", "answer ana about tulips briefly", "agent", "ana"),
         fact("f_team", "tulips stand in the lobby", "workspace", "bo")]
    )  # fmt: skip
    near = [1.0] + [0.0] * 7
    store.set_embeddings("event", [("e0", near), ("e1", [0.9, 0.1] + [0.0] * 6)])
    store.set_embeddings("fact", [(k, near) for k in ("f_user", "f_agent", "f_team")])


def keyword(store: MemoryStore, viewer: Viewer) -> set[str]:
    return {s.id for s in store.keyword_search("tulips", 20, viewer.owners())}


def vector(store: MemoryStore, viewer: Viewer) -> set[str]:
    near = [1.0] + [0.0] * 7
    return {
        s.id
        for node in ("event", "fact")
        for s in store.vector_search(node, near, 20, viewer.owners())  # type: ignore[arg-type]
    }


MINE = {ANA: {"e0", "f_user", "f_agent", "f_team"}, BO: {"e1", "f_team"}}


@pytest.mark.parametrize("scan", ["exact", "index"])
def test_a_search_for_a_viewers_owners_finds_only_what_it_sees(
    open_store: StoreFactory, monkeypatch: pytest.MonkeyPatch, scan: str
) -> None:
    if scan == "index":  # the int8 first pass; pgvector's HNSW index, scanned on past others
        from shiyi.memory.postgres import reads

        monkeypatch.setattr(vector_rows, "EXACT_UP_TO", 0)
        monkeypatch.setattr(reads, "EXACT_SCAN_ROWS", 0)
    store = open_store()
    seed(store)
    for viewer, mine in MINE.items():
        assert keyword(store, viewer) == mine
        assert vector(store, viewer) == mine
    assert keyword(store, Viewer("carol")) == vector(store, Viewer("carol")) == {"f_team"}
    elsewhere = Viewer("ana", workspace_id="w2")
    assert keyword(store, elsewhere) == vector(store, elsewhere) == {"e0", "f_user", "f_agent"}
    assert {s.id for s in store.keyword_search("tulips", 20)} == MINE[ANA] | MINE[BO]


def test_a_facts_new_scope_moves_it_between_viewers(open_store: StoreFactory) -> None:
    store = open_store()
    seed(store)
    assert "f_user" not in vector(store, BO)
    store.upsert_facts([fact("f_user", "ana grows tulips", "workspace", "ana")])
    assert "f_user" in keyword(store, BO)
    assert "f_user" in vector(store, BO)


def test_an_older_store_learns_its_keyword_owners_when_it_opens(
    open_store: StoreFactory,
) -> None:
    store = open_store()
    seed(store)
    store.upsert_entities([EntityRecord("tulip", "plant")])
    store.link_mentions([("e0", "tulip"), ("e1", "tulip")])
    store.index_keywords([("ghost", "event", "tulips of a turn that is gone")])
    _forget_owners(store)
    store.close()
    again = open_store()
    for viewer, mine in MINE.items():
        assert keyword(again, viewer) == mine  # the ghost is nobody's
    assert "ghost" in {s.id for s in again.keyword_search("tulips", 20)}
    # and the mentions: whose turn mentions the tulip
    around = again.neighbourhood(["tulip"], 1, 10, owner=("ana", "shiyi"))
    assert [s.id for s in around.event_ids] == ["e0"]


def _forget_owners(store: MemoryStore) -> None:
    """Make ``store``'s keyword index and mentions as a shiyi from before owners left them."""
    from shiyi.memory.kuzu.store import EmbeddedStore
    from shiyi.memory.postgres.store import PostgresStore

    if isinstance(store, EmbeddedStore):
        with store.sqlite.write("forget owners") as conn:
            conn.execute("UPDATE kw_docs SET owner = ''")
            conn.execute("UPDATE mentions SET user_id = '', agent_id = ''")
            conn.execute("DELETE FROM mentions_meta WHERE key = 'owners'")
        return
    assert isinstance(store, PostgresStore)
    with store._tx() as conn:
        conn.execute("ALTER TABLE keyword_docs DROP COLUMN owner")
        conn.execute("ALTER TABLE mentions DROP COLUMN user_id, DROP COLUMN agent_id")
    _back_one_version(store)


def test_the_newest_events_of_an_owner_and_the_clock_they_set(open_store: StoreFactory) -> None:
    store = open_store()
    ana = [turn(i, f"ana's turn {i}", user_id="ana", ts=1_000.0 + i) for i in range(5)]
    bo = [turn(10 + i, f"bo's turn {i}", user_id="bo", ts=9_000.0 + i) for i in range(50)]
    store.add_events([*ana, *bo])
    newest = store.recent_events(3, owner=("ana", "shiyi"))
    assert [e.id for e in newest] == ["e4", "e3", "e2"]
    assert store.recent_events(3, owner=("ana", "other agent")) == []
    assert [e.id for e in store.recent_events(2)] == ["e59", "e58"]  # everyone's
    retriever = Retriever(store, None)
    # "last week" counts back from ana's newest turn, not from bo's fifty newer ones
    assert retriever._now(ANA) == 1_004.0
    assert retriever._now(BO) == 9_049.0
    assert abs(retriever._now(Viewer("carol")) - time.time()) < 60
    # the recency path nudges towards the asker's own newest turns
    hits = retriever.search("turn", mode="recent", viewer=ANA, limit=3, touch=False)
    assert [h.id for h in hits] == ["e4", "e3", "e2"]


def test_the_graph_path_reaches_only_the_facts_a_viewer_may_see(open_store: StoreFactory) -> None:
    store = open_store()
    store.upsert_entities([EntityRecord("tulips")])
    crowd = [
        FactRecord(f"b{i}", f"b{i}", f"bo's tulip fact {i}", user_id="bo", created_at=100.0 + i)
        for i in range(30)
    ]
    mine = [
        fact("f_user", "ana grows tulips", "user", "ana"),
        fact("f_agent", "answer ana about tulips briefly", "agent", "ana"),
        fact("f_team", "tulips stand in the lobby", "workspace", "bo"),
        replace(fact("f_other", "tulips for the helper", "agent", "ana"), agent_id="helper"),
    ]
    store.upsert_facts([replace(f, entities=["tulips"]) for f in [*crowd, *mine]])
    around = store.neighbourhood(["tulips"], hops=1, limit=5, owner=("ana", "shiyi"))
    assert {s.id for s in around.fact_ids} == {"f_user", "f_agent", "f_team"}
    crowded = {s.id for s in store.neighbourhood(["tulips"], hops=1, limit=5).fact_ids}
    assert len(crowded) == 5 and crowded <= {f.id for f in crowd}  # everyone's: bo's crowd
    bos = store.neighbourhood(["tulips"], hops=1, limit=40, owner=("bo", "shiyi"))
    assert {s.id for s in bos.fact_ids} == {f.id for f in crowd} | {"f_team"}
    hits = Retriever(store, None, candidates=5).search(
        "tulips", mode="graph", viewer=ANA, touch=False
    )
    assert {h.id for h in hits} == {"f_user", "f_agent", "f_team"}


def test_another_users_many_turns_change_nothing_of_a_viewers_keyword_search(
    open_store: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ana's few turns are scored over her own statistics on both backends: bo saying her
    words hundreds of times changes neither what her search finds nor its scores (which
    would tell how often others say a word), and a word bo says past the scoring budget
    is still searched for her."""
    from shiyi.index import keyword
    from shiyi.memory.postgres import keywords

    monkeypatch.setattr(keyword, "_SCORE_BUDGET", 50)
    monkeypatch.setattr(keywords, "SCORE_BUDGET", 50)
    store = open_store()
    texts = ["my pottery class meets on Saturday", "the kiln firing went wrong",
             "the pottery teacher liked my bowls", "we baked bread on Saturday"]  # fmt: skip
    store.add_events([turn(i, text, user_id="ana") for i, text in enumerate(texts)])
    store.add_events([turn(10, "a quiet evening", user_id="bo")])

    def ana(query: str) -> list[tuple[str, float]]:
        return [(s.id, round(s.score, 9)) for s in store.keyword_search(query, 10, ANA.owners())]

    alone = ana("pottery teacher on Saturday")
    crowd = [turn(100 + i, f"pottery for sale on Saturday, lot {i}", user_id="bo")
             for i in range(120)]  # fmt: skip
    store.add_events(crowd)
    assert ana("pottery teacher on Saturday") == alone
    assert [key for key, _ in alone] == ["e2", "e0", "e3"]
    assert [key for key, _ in ana("pottery kiln")] == ["e1", "e0", "e2"]
