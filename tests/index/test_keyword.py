from __future__ import annotations

import threading
from pathlib import Path

import pytest

from shiyi.errors import StorageError
from shiyi.index import keyword
from shiyi.index.keyword import IndexedNode, KeywordIndex, match_expression

DOCS: list[tuple[str, IndexedNode, str]] = [
    ("e1", "event", "The server returned error 404 for the login page"),
    ("e2", "event", "user3 logged in from a new device"),
    ("f1", "fact", "Project kickoff happened on 2024-05-01"),
    ("e3", "event", "我们明天部署新版本"),
    ("f2", "fact", "The entry point is src/app/main.py, see parse_config()"),
    ("e4", "event", "A weather report with no special words"),
]


@pytest.fixture
def index(tmp_path: Path) -> KeywordIndex:
    idx = KeywordIndex(tmp_path / "kw.sqlite3")
    idx.add(DOCS)
    return idx


def ids(index: KeywordIndex, query: str, node: IndexedNode | None = None) -> list[str]:
    return [hit.id for hit in index.search(query, 10, node=node)]


@pytest.mark.parametrize(
    ("query", "top"),
    [
        ("error 404", "e1"),
        ("404", "e1"),
        ("user3", "e2"),
        ("2024", "f1"),
        ("2024-05-01", "f1"),
        ("部署", "e3"),
        ("什么时候部署？", "e3"),
        ("main.py", "f2"),
        ("parse_config", "f2"),
        ("config", "f2"),
    ],
)
def test_numbers_identifiers_and_chinese_are_searchable(
    index: KeywordIndex, query: str, top: str
) -> None:
    assert ids(index, query)[0] == top


def test_scores_are_positive_and_descending(index: KeywordIndex) -> None:
    hits = index.search("error 404 login", 10)
    assert hits
    assert all(hit.score > 0 for hit in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    ("query", "plain"),
    [
        ('"', ""),
        ('"unbalanced', "unbalanced"),
        ("foo*", "foo"),
        ("NEAR(error login)", "near error login"),
        ("-404", "404"),
        ("title:404", "title 404"),
        ("error AND OR NOT 404", "error and or not 404"),
        ("^deploy", "deploy"),
        ("(", ""),
        ("'", ""),
    ],
)
def test_fts_syntax_in_a_query_is_read_as_plain_words(
    index: KeywordIndex, query: str, plain: str
) -> None:
    """FTS5 operators from a user's text are never interpreted (nor an error): the query
    finds what its words alone find."""
    assert ids(index, query) == ids(index, plain)


def test_special_characters_around_a_real_term_still_match(index: KeywordIndex) -> None:
    assert set(ids(index, '"404"* NEAR -user3:')) == {"e1", "e2"}


def test_more_matching_terms_rank_first(tmp_path: Path) -> None:
    idx = KeywordIndex(tmp_path / "kw.sqlite3")
    idx.add(
        [
            ("one", "event", "deploy the service"),
            ("two", "event", "deploy the service to kubernetes cluster"),
            ("three", "event", "kubernetes cluster upgrade"),
        ]
    )
    assert ids(idx, "deploy kubernetes cluster")[0] == "two"


def common_corpus(tmp_path: Path) -> KeywordIndex:
    """30 documents that all say "status"; one also names a rare word."""
    idx = KeywordIndex(tmp_path / "kw.sqlite3")
    docs: list[tuple[str, IndexedNode, str]] = [
        (f"d{i}", "event", f"status update number {i}") for i in range(30)
    ]
    docs[3] = ("d3", "event", "status update for the zebrafish tank")
    idx.add(docs)
    return idx


def test_common_terms_over_the_budget_are_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword, "_SCORE_BUDGET", 5)
    idx = common_corpus(tmp_path)
    # "status" and "update" are in 30 documents each (over the budget of 5): only the rare
    # term is scored, so the one document naming it is the only hit.
    assert ids(idx, "status update zebrafish") == ["d3"]


def test_only_the_newest_matches_are_scored_when_every_term_is_common(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword, "_SCORE_BUDGET", 5)
    idx = common_corpus(tmp_path)
    found = ids(idx, "status update")
    assert sorted(found) == [f"d{i}" for i in range(25, 30)]
    # Without the budget every matching document would be scored.
    monkeypatch.setattr(keyword, "_SCORE_BUDGET", 100)
    assert len(ids(idx, "status update")) == 10


def test_node_filter(index: KeywordIndex) -> None:
    assert ids(index, "2024 404", node="fact") == ["f1"]
    assert ids(index, "2024 404", node="event") == ["e1"]


def test_empty_and_stop_word_queries_return_nothing(index: KeywordIndex) -> None:
    assert index.search("", 5) == []
    assert index.search("the is a 的", 5) == []
    assert index.search("404", 0) == []


def test_delete_and_count(index: KeywordIndex) -> None:
    assert index.count() == len(DOCS)
    assert index.count("fact") == 2
    assert index.delete(["e1", "missing"]) == 1
    assert index.count() == len(DOCS) - 1
    assert "e1" not in ids(index, "404")


def test_add_is_an_upsert(index: KeywordIndex) -> None:
    index.add([("e1", "fact", "completely different text 500")])
    assert index.count() == len(DOCS)
    assert "e1" not in ids(index, "404")
    assert ids(index, "500", node="fact") == ["e1"]


def test_shares_a_file_and_reopens(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    first = KeywordIndex(path)
    first.add([("a", "event", "error 404")])
    first.close()
    second = KeywordIndex(path)
    assert ids(second, "404") == ["a"]
    second.close()


def test_closed_index_raises_storage_error(index: KeywordIndex) -> None:
    index.close()
    with pytest.raises(StorageError):
        index.search("404", 5)


def test_threads_can_write_and_read(tmp_path: Path) -> None:
    idx = KeywordIndex(tmp_path / "kw.sqlite3")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(20):
                idx.add([(f"t{n}-{i}", "event", f"thread {n} item {i} 部署")])
                idx.search(f"item {i}", 5)
        except BaseException as exc:  # collected and asserted in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert idx.count() == 80
    idx.close()


def test_match_expression_quotes_every_term() -> None:
    assert match_expression('error "404"') == '"error" OR "404"'
    assert match_expression("的") == ""


SLIPS: list[tuple[str, IndexedNode, str]] = [
    ("dinner", "event", "We had dinner at a lovely Italian restaurant downtown"),
    ("bike", "event", "I went biking along the river on Sunday"),
    ("paint", "event", "Melanie painted a sunset last weekend"),
]


@pytest.mark.parametrize("stems", [True, False], ids=["memory", "knowledge base"])
@pytest.mark.parametrize(
    ("query", "top"),
    [
        ("which resturant was it?", "dinner"),  # a letter left out
        ("what did Melaine paint?", "paint"),  # two letters swapped
        ("the restaurnat downtown", "dinner"),
        ("where did they go bikking", "bike"),  # a letter doubled
    ],
)
def test_a_mistyped_word_finds_the_word_the_index_holds(
    tmp_path: Path, stems: bool, query: str, top: str
) -> None:
    index = KeywordIndex(tmp_path / "kw.sqlite3", stems=stems)
    index.add(SLIPS)
    assert ids(index, query)[:1] == [top]


def test_a_known_word_is_not_read_as_a_near_held_one(tmp_path: Path) -> None:
    index = KeywordIndex(tmp_path / "kw.sqlite3", stems=True)
    index.add(SLIPS)
    assert ids(index, "any hiking trips?") == []  # "biking" is another activity
    assert ids(index, "hikng") == []  # two edits from "biking": nothing near enough


def test_reading_a_slip_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "kw.sqlite3"
    index = KeywordIndex(path, stems=True)
    index.add(SLIPS)
    index.close()
    before = path.read_bytes()
    reader = KeywordIndex(path, stems=True)
    assert ids(reader, "resturant") == ["dinner"]
    reader.close()
    assert path.read_bytes() == before  # the vocabulary table lives in the connection's temp
