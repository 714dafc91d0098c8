from __future__ import annotations

import time

import pytest

from shiyi.index.text import warm_up
from shiyi.memory.models import EntityRecord
from shiyi.memory.text.entities import MAX_TOKEN, extract_entities, normalize_name


def by_name(text: str) -> dict[str, EntityRecord]:
    return {e.name: e for e in extract_entities(text)}


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("  New   York ", "new york"),
        ("Ｋｕｚｕ", "kuzu"),
        ("@alice", "alice"),
        ("foo()", "foo"),
        ("__init__", "__init__"),
        ("“Alice”,", "alice"),
    ],
)
def test_normalize_name(raw: str, normal: str) -> None:
    assert normalize_name(raw) == normal


def test_english_names_places_orgs_and_technologies() -> None:
    found = by_name(
        "Alice said we should move the New York office data to Kuzu. "
        "The meeting with Dr. Smith at Acme Corp is in Paris. Alice prefers SQLite."
    )
    assert found["alice"].type == "person"
    assert found["alice"].display == "Alice"
    assert found["new york"].display == "New York"
    assert found["kuzu"].type == "technology"
    assert found["sqlite"].type == "technology"
    assert found["smith"].type == "person"
    assert found["acme corp"].type == "org"
    assert found["paris"].type == "place"
    assert not {"the", "dr", "meeting"} & set(found)


def test_lone_capitalised_sentence_opener_is_not_a_name() -> None:
    found = by_name("Yesterday was long. Maybe tomorrow. Deploy it now.")
    assert found == {}


@pytest.mark.parametrize(
    "text",
    [
        "I started the cello in March, lessons on Thursdays.",
        "We flew to Lisbon last June and back in early September.",
        "The deadline moved to Jan 15, then to 3 Feb.",
        "Our trip in August was great. August is the best month for it.",
        "See you in Sept. We usually meet at weekends.",
    ],
)
def test_months_and_weekdays_name_a_time_not_an_entity(text: str) -> None:
    found = set(by_name(text))
    times = {"march", "thursdays", "june", "last june", "september", "early september"}
    assert not found & (times | {"jan", "feb", "august", "sept", "weekends"})


def test_a_month_that_names_a_person_or_a_thing_stays_a_name() -> None:
    found = by_name("I told April about the March Madness final. We watched it with Jan.")
    assert found["april"].type == "person"
    assert "march madness" in found
    assert "jan" in found  # no day number beside it: the name, not January


def test_code_paths_urls_handles_and_tags() -> None:
    found = by_name(
        "Can you check src/shiyi/index/keyword.py? match_expression() and "
        "KeywordIndex.search fail when HTTPServer restarts, see getUserName and "
        "https://github.com/kuzudb/kuzu/issues/123, ping @carol #release, "
        "config in pyproject.toml, mail bob@example.com"
    )
    assert found["src/shiyi/index/keyword.py"].type == "file"
    assert found["match_expression"].type == "identifier"
    assert found["keywordindex.search"].type == "identifier"
    assert found["httpserver"].type == "identifier"
    assert found["getusername"].type == "identifier"
    assert found["https://github.com/kuzudb/kuzu/issues/123"].type == "url"
    assert found["carol"].display == "@carol"
    assert found["release"].display == "#release"
    assert found["pyproject.toml"].type == "file"
    assert "bob@example.com" in found
    # Pieces of structured spans are not extracted again.
    assert not {"memory", "github", "issues", "keywordindex"} & set(found)


def test_chinese_nouns_places_and_orgs() -> None:
    found = by_name("我们明天在北京部署新版本，阿里巴巴的同事负责数据库迁移。")
    assert found["北京"].type == "place"
    assert found["阿里巴巴"].type == "org"
    assert {"部署", "数据库", "版本"} <= set(found)
    assert not {"我们", "明天", "的", "新"} & set(found)


def test_mixed_message() -> None:
    found = by_name("用 jieba 给 Kuzu 做中文分词，版本 2024 上线")
    assert found["jieba"].type == "technology"
    assert found["kuzu"].type == "technology"
    assert "分词" in found
    assert "2024" not in found


def test_no_junk_numbers_single_letters_or_stop_words() -> None:
    assert extract_entities("404 1.5 2024 a b x #123 @7 I the 的 了") == []


def test_deduplicated_by_normalised_name_with_aliases() -> None:
    entities = extract_entities("We use Kuzu. kuzu is embedded; KUZU is fast and Kuzu rocks.")
    kuzu = [e for e in entities if e.name == "kuzu"]
    assert len(kuzu) == 1
    assert kuzu[0].display == "Kuzu"
    assert set(kuzu[0].aliases) <= {"kuzu", "KUZU"}


def test_fast_after_warm_up() -> None:
    warm_up().join(timeout=30)
    english = (
        "Alice asked Bob to move src/app/main.py into the New York repo; "
        "KeywordIndex.search() broke on user3 after deploy, see https://example.com/x. "
    )
    chinese = "我们明天在北京部署新版本，张伟负责数据库迁移，阿里巴巴的同事也会参与。"
    message = ((english + chinese) * 5)[:500]
    extract_entities(message)
    runs = 50
    start = time.perf_counter()
    for _ in range(runs):
        extract_entities(message)
    per_call = (time.perf_counter() - start) / runs
    assert per_call < 0.01  # target is < 2 ms; 10 ms leaves room for slow CI machines


def test_contractions_opening_sentences_are_not_names() -> None:
    text = "I've been busy. I've got news! It's great. It's done. I'll call Mel later."
    assert set(by_name(text)) == {"mel"}


# --- linear time on hostile text (issue 29) -------------------------------------------------
# The patterns themselves: tests/test_linear_patterns.py.  Here the Python around them, which
# repeated work per name (copies of the text before it, of its word list, alias lists).


def test_spellings_of_one_name_are_capped_not_collected_by_the_thousand() -> None:
    spellings = [f"{a}{b}{c}{d}" for a in "kK" for b in "uU" for c in "zZ" for d in "uU"]
    found = by_name(" ".join(f"see {s}." for s in spellings * 40))
    assert len(found["kuzu"].aliases) <= 16


def test_a_long_run_of_openers_and_names_yields_each_name_once() -> None:
    text = "The " * 20_000 + "Alice met Bob. " * 5_000 + "Mr. Carol said hi. " * 5_000
    found = by_name(text)
    assert {"alice", "bob", "carol"} <= found.keys()
    assert found["carol"].type == "person"


def test_a_name_before_a_blanked_email_still_reads_what_follows() -> None:
    found = by_name("we met Alice a.very.long.address@example.com said hello")
    assert found["alice"].type == "person"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mail john.doe+x@example.co.uk now", "john.doe+x@example.co.uk"),
        ("open src/shiyi/memory/text/entities.py, then", "src/shiyi/memory/text/entities.py"),
        ("in a//b/c", "/b/c"),
        ("x~/notes/today.md", "~/notes/today.md"),
        ("call df.sum().agg(x)", "agg"),
    ],
)
def test_structured_spans_found_as_before(text: str, expected: str) -> None:
    assert normalize_name(expected) in by_name(text)


def test_a_120k_base64_blob_is_no_entity_and_its_neighbours_still_are() -> None:
    import base64
    import random

    blob = base64.b64encode(random.Random(29).randbytes(90_000)).decode()
    assert len(blob) == 120_000
    found = by_name(f"I think Alice pasted {blob} for Bob in Paris.")
    assert found.keys() == {"alice", "bob", "paris"}
    assert by_name(f"{blob[:MAX_TOKEN]} and {blob[: MAX_TOKEN - 1]}") != {}
