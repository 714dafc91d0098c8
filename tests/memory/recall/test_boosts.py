"""Query boosts on fused scores: speakers, time windows, episodes, neighbours, coverage."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from shiyi.memory.models import EventRecord, FactRecord
from shiyi.memory.recall.boosts import (
    ANSWER_SHARE,
    BURST_GAP,
    BURST_SHARE,
    COVERAGE_WEIGHT,
    EPISODE_SHARE,
    NEIGHBOUR_SHARE,
    RUN_SIMILARITY_WEIGHT,
    SPEAKER_BONUS,
    TIME_BONUS,
    TOLD_WHEN_BONUS,
    apply_boosts,
    run_similarity_bonus,
)
from shiyi.memory.recall.config import Boosts
from shiyi.memory.recall.query_signals import understand

MAY_8 = datetime(2023, 5, 8, 13, tzinfo=UTC).timestamp()
JUNE_9 = datetime(2023, 6, 9, 13, tzinfo=UTC).timestamp()


def turn(key: str, role: str, run: str, iteration: int, ts: float = MAY_8) -> EventRecord:
    return EventRecord(key, "conv", run, ts, role, f"text of {key}", "imported", iteration)


def boosted(
    scores: dict[str, float], events: list[EventRecord], query: str, boosts: Boosts
) -> dict[str, float]:
    out = dict(scores)
    apply_boosts(out, {e.id: e for e in events}, {}, understand(query, JUNE_9), boosts)
    return out


ONLY_SPEAKERS = replace(Boosts.none(), speakers=True)
ONLY_TIME = replace(Boosts.none(), time=True)


def test_turns_of_the_person_the_question_names_gain() -> None:
    events = [turn("c1", "caroline", "s1", 0), turn("m1", "melanie", "s1", 1)]
    out = boosted({"c1": 1.0, "m1": 1.0}, events, "What did Melanie paint?", ONLY_SPEAKERS)
    assert out == {"c1": 1.0, "m1": 1.0 + SPEAKER_BONUS}


def test_naming_every_speaker_or_none_changes_nothing() -> None:
    events = [turn("c1", "caroline", "s1", 0), turn("m1", "melanie", "s1", 1)]
    scores = {"c1": 1.0, "m1": 0.5}
    both = "What do Caroline and Melanie both like?"
    assert boosted(scores, events, both, ONLY_SPEAKERS) == scores
    assert boosted(scores, events, "Who likes painting?", ONLY_SPEAKERS) == scores
    agent = [turn("u", "user", "r", 0), turn("a", "assistant", "r", 1)]
    assert boosted({"u": 1.0, "a": 1.0}, agent, "what did the user ask?", ONLY_SPEAKERS) == {
        "u": 1.0,
        "a": 1.0,
    }


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("What did Caroline tell Melanie about the adoption?", "c1"),
        ("According to Melanie, what is Caroline good at?", "m1"),
        ("What did Mel say about Caroline's painting?", "m1"),  # a nickname, with aliases
    ],
)
def test_naming_every_speaker_the_one_asked_about_gains(query: str, named: str) -> None:
    events = [turn("c1", "caroline", "s1", 0), turn("m1", "melanie", "s1", 1)]
    out = boosted({"c1": 1.0, "m1": 1.0}, events, query, replace(ONLY_SPEAKERS, aliases=True))
    assert out == {key: 1.0 + (SPEAKER_BONUS if key == named else 0.0) for key in out}


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("李小红画了什么？", "r1"),  # the whole name, inside an unspaced sentence
        ("小红画了什么？", "r1"),  # the given name
        ("老王画了什么？", "w1"),  # 老 and the surname
        ("王老师画了什么？", "w1"),  # the surname and a title
        ("阿明画了什么？", "w1"),  # 阿 and the given name's last character
    ],
)
def test_a_chinese_question_names_a_speaker_as_people_address_each_other(
    query: str, named: str
) -> None:
    events = [turn("w1", "王小明", "s1", 0), turn("r1", "李小红", "s1", 1)]
    with_aliases = replace(ONLY_SPEAKERS, aliases=True)
    out = boosted({"w1": 1.0, "r1": 1.0}, events, query, with_aliases)
    assert out == {key: 1.0 + (SPEAKER_BONUS if key == named else 0.0) for key in out}


def test_turns_inside_the_questions_time_window_gain() -> None:
    events = [turn("may", "maria", "s1", 0, MAY_8), turn("june", "maria", "s2", 0, JUNE_9)]
    out = boosted(
        {"may": 1.0, "june": 1.0}, events, "What did Maria paint in June 2023?", ONLY_TIME
    )
    assert out == {"may": 1.0, "june": 1.0 + TIME_BONUS}
    out = boosted(
        {"may": 1.0, "june": 1.0}, events, "What did Maria paint on May 8, 2023?", ONLY_TIME
    )
    assert out == {"may": 1.0 + TIME_BONUS, "june": 1.0}


def test_facts_are_placed_in_time_by_when_they_became_true() -> None:
    fact = FactRecord("f", "trip", "Maria went to Rome", created_at=JUNE_9, valid_from=MAY_8)
    scores = {"f": 1.0}
    apply_boosts(
        scores, {}, {"f": fact}, understand("Where was Maria in May 2023?", JUNE_9), ONLY_TIME
    )
    assert scores == {"f": 1.0 + TIME_BONUS}


def test_a_turn_borrows_from_the_best_of_its_episode_and_its_neighbours() -> None:
    events = [
        turn("q", "jon", "s1", 0),  # the strong match
        turn("yes", "gina", "s1", 1),  # a short reply right after it
        turn("far", "gina", "s1", 5),  # same session, not adjacent
        turn("other", "gina", "s2", 0),  # another session
    ]
    scores = {"q": 3.0, "yes": 0.0, "far": 0.0, "other": 0.0}
    out = boosted(scores, events, "anything", Boosts(speakers=False, time=False))
    assert out["yes"] == pytest.approx(EPISODE_SHARE * 3.0 + NEIGHBOUR_SHARE * 3.0)
    assert out["far"] == pytest.approx(EPISODE_SHARE * 3.0)
    assert out["other"] == 0.0
    assert out["q"] == pytest.approx(3.0 + EPISODE_SHARE * 3.0)  # its neighbour scored 0


def spoken(key: str, role: str, iteration: int, text: str) -> EventRecord:
    return EventRecord(key, "conv", "s1", MAY_8, role, text, "imported", iteration)


@pytest.mark.parametrize(
    "question",
    [
        "Any plans for the summer?",
        "What do you think?! :)",
        "How was it? [shared an image: a photo of a dog]",
        "Really? 😂",
        "你周末去哪儿了？",
    ],
)
def test_a_reply_to_a_question_takes_more_of_the_questions_score(question: str) -> None:
    events = [
        spoken("asked", "gina", 0, question),  # the strong match
        spoken("answer", "jon", 1, "Researching adoption agencies."),
        spoken("before", "jon", -1, "I'm back from my trip."),  # before it: no answer
    ]
    scores = {"asked": 3.0, "answer": 0.0, "before": 0.0}
    out = boosted(scores, events, "anything", Boosts(speakers=False, time=False, episodes=False))
    assert out["answer"] == pytest.approx(ANSWER_SHARE * 3.0)
    assert out["before"] == pytest.approx(NEIGHBOUR_SHARE * 3.0)


@pytest.mark.parametrize(
    ("first", "who"),
    [
        ("I went to the lake.", "gina"),  # a statement
        ("Cool! [shared an image: a photo of a cat?]", "gina"),  # the "?" is the picture's
    ],
)
def test_a_reply_to_anything_else_takes_a_neighbours_share(first: str, who: str) -> None:
    events = [spoken("first", who, 0, first), spoken("reply", "jon", 1, "Sure, sounds good.")]
    scores = {"first": 3.0, "reply": 0.0}
    out = boosted(scores, events, "anything", Boosts(speakers=False, time=False, episodes=False))
    assert out["reply"] == pytest.approx(NEIGHBOUR_SHARE * 3.0)


ONLY_BURSTS = replace(Boosts.none(), bursts=True)


def test_a_message_takes_a_share_of_the_best_other_message_of_its_burst() -> None:
    events = [
        spoken("lake", "jon", 0, "we went to the lake"),  # the strong match
        spoken("trout", "jon", 1, "caught 3 trout!!"),
        spoken("calm", "jon", 2, "so peaceful"),  # two messages on: still the burst
        spoken("nice", "gina", 3, "omg nice"),  # the other speaker: no piece of it
        spoken("later", "jon", 4, "anyway, work tomorrow"),  # after her reply: a new burst
    ]
    scores = dict.fromkeys(("lake", "trout", "calm", "nice", "later"), 0.0) | {"lake": 3.0}
    out = boosted(scores, events, "anything", ONLY_BURSTS)
    assert out["trout"] == out["calm"] == pytest.approx(BURST_SHARE * 3.0)
    assert out["nice"] == out["later"] == 0.0
    assert out["lake"] == 3.0  # its burst scored 0
    alone = boosted(scores, events, "anything", Boosts.none())
    assert alone["calm"] == 0.0


def test_a_burst_ends_at_a_pause_and_holds_no_tool_calls() -> None:
    pause = [
        EventRecord("a", "conv", "s1", MAY_8, "jon", "we went to the lake", "imported", 0),
        EventRecord("b", "conv", "s1", MAY_8 + BURST_GAP + 60, "jon", "hey u there", "imported", 1),
    ]
    out = boosted({"a": 3.0, "b": 0.0}, pause, "anything", ONLY_BURSTS)
    assert out["b"] == 0.0
    tool = [
        EventRecord("ask", "conv", "r1", MAY_8, "assistant", "search", "tool_call", 0),
        EventRecord("said", "conv", "r1", MAY_8, "assistant", "Done.", "response", 1),
    ]
    out = boosted({"ask": 3.0, "said": 0.0}, tool, "anything", ONLY_BURSTS)
    assert out["said"] == 0.0


def test_all_boosts_off_leaves_the_fused_scores_alone() -> None:
    events = [turn("c1", "caroline", "s1", 0), turn("m1", "melanie", "s1", 1, JUNE_9)]
    scores = {"c1": 2.0, "m1": 1.0}
    query = "What did Melanie do in June 2023?"
    assert boosted(scores, events, query, Boosts.none()) == scores


ONLY_TOLD_WHEN = replace(Boosts.none(), told_when=True)


def said(key: str, text: str) -> EventRecord:
    return EventRecord(key, "conv", "s1", MAY_8, "ana", text, "imported", 0)


def test_a_when_question_favours_the_turn_that_says_when() -> None:
    events = [
        said("told", "I started a pottery class last week, it's on Thursdays."),
        said("later", "My pottery class is so relaxing, I made a bowl."),
    ]
    scores = {"told": 1.0, "later": 1.0}
    when = boosted(scores, events, "When did Ana start the pottery class?", ONLY_TOLD_WHEN)
    assert when == {"told": 1.0 + TOLD_WHEN_BONUS, "later": 1.0}
    what = boosted(scores, events, "What did Ana make in pottery class?", ONLY_TOLD_WHEN)
    assert what == scores
    # a question with its own time is placed by the time windows instead
    dated = "What did Ana start in May 2023?"
    assert boosted(scores, events, dated, ONLY_TOLD_WHEN) == scores


ONLY_COVERAGE = replace(Boosts.none(), coverage=True)


def said_in(key: str, run: str, text: str) -> EventRecord:
    return EventRecord(key, "conv", run, MAY_8, "ana", text, "imported", 0)


def test_a_run_holding_more_of_the_questions_words_lifts_its_turns() -> None:
    events = [
        said_in("a1", "trip", "We finally booked the ferry to the island."),
        said_in("a2", "trip", "We camped by the lighthouse that night."),
        said_in("b1", "other", "Ferry prices went up again."),
        said_in("b2", "other", "Nothing much happened today."),
    ]
    question = "Where did Ana camp after the ferry?"
    out = boosted(dict.fromkeys(["a1", "a2", "b1", "b2"], 1.0), events, question, ONLY_COVERAGE)
    # "trip" holds ferry and camp(ed), "other" only ferry: one z-score apart either way
    assert out["a1"] == out["a2"] == pytest.approx(1.0 + COVERAGE_WEIGHT)
    assert out["b1"] == out["b2"] == pytest.approx(1.0 - COVERAGE_WEIGHT)


def test_coverage_needs_two_runs_and_a_difference_between_them() -> None:
    one_run = [said_in("a1", "trip", "The ferry was late."), said_in("a2", "trip", "We camped.")]
    scores = {"a1": 1.0, "a2": 0.5}
    assert boosted(scores, one_run, "ferry camp", ONLY_COVERAGE) == scores
    alike = [said_in("a1", "x", "The ferry was late."), said_in("b1", "y", "Another ferry trip.")]
    assert boosted({"a1": 1.0, "b1": 0.5}, alike, "ferry?", ONLY_COVERAGE) == {"a1": 1.0, "b1": 0.5}


def test_a_runs_words_are_found_as_the_keyword_index_finds_them() -> None:
    from shiyi.memory.recall.boosts import _term_pattern

    terms = understand("Did Caroline go camping at the wedding in 2023? 咖啡", JUNE_9).terms
    text = "8 may 2023 caroline we camped near the wedding venue, good coffee 我喝咖啡"
    found = set(_term_pattern(terms).findall(text))
    assert {"camp", "wedding", "2023", "咖啡"} <= found  # a stem finds its word
    assert "go" not in found  # a short term is a whole word: "good" is not "go"


def test_a_term_is_found_only_where_a_word_starts() -> None:
    from shiyi.memory.recall.boosts import _term_pattern

    pattern = _term_pattern(["ring", "paint", "cat", "咖啡"])
    text = "during the party, my cat ate cake by the ring road; painting 喝咖啡"
    assert set(pattern.findall(text)) == {"cat", "ring", "paint", "咖啡"}
    assert pattern.findall("during parties scattered, repainted, cats") == []


def test_a_run_nearer_the_query_as_a_whole_gains_by_its_z_score() -> None:
    turns = [("a1", "trip", 0), ("a2", "trip", 1), ("b1", "work", 0), ("c1", "cv", 0)]
    events = {key: turn(key, "user", run, iteration) for key, run, iteration in turns}
    scores = dict.fromkeys(events, 1.0)
    # z-scores of 0.6, 0.3, 0.0 among the three runs: +1.22, 0, -1.22
    run_similarity_bonus(scores, events, {"trip": 0.6, "work": 0.3, "cv": 0.0, "other": 0.9})
    lift = RUN_SIMILARITY_WEIGHT * 1.5**0.5
    assert scores["a1"] == scores["a2"] == pytest.approx(1.0 + lift)
    assert scores["b1"] == pytest.approx(1.0)
    assert scores["c1"] == pytest.approx(1.0 - lift)


def test_run_similarity_needs_two_runs_that_differ() -> None:
    events = {e.id: e for e in [turn("a1", "user", "trip", 0), turn("b1", "user", "work", 0)]}
    for similarity in ({"trip": 0.5}, {"trip": 0.4, "work": 0.4}, {}):
        scores = {"a1": 1.0, "b1": 0.5}
        run_similarity_bonus(scores, events, similarity)
        assert scores == {"a1": 1.0, "b1": 0.5}


ONLY_SAID_BY = replace(Boosts.none(), said_by=True)


def test_a_question_about_what_you_said_favours_the_assistants_turns() -> None:
    events = [turn("u", "user", "r1", 0), turn("a", "assistant", "r1", 1)]
    scores = {"u": 1.0, "a": 1.0}
    asked = "Which stretches did you suggest for my back?"
    assert boosted(scores, events, asked, ONLY_SAID_BY) == {"u": 1.0, "a": 1.0 + SPEAKER_BONUS}
    told = "What did I tell you about my back?"
    assert boosted(scores, events, told, ONLY_SAID_BY) == {"u": 1.0 + SPEAKER_BONUS, "a": 1.0}
    # between two people "you" is one of them, and a memory of one role has no one to favour
    chat = [turn("c", "caroline", "r1", 0), turn("m", "melanie", "r1", 1)]
    assert boosted({"c": 1.0, "m": 1.0}, chat, asked, ONLY_SAID_BY) == {"c": 1.0, "m": 1.0}
    alone = [turn("u1", "user", "r1", 0), turn("u2", "user", "r2", 0)]
    assert boosted({"u1": 1.0, "u2": 0.5}, alone, told, ONLY_SAID_BY) == {"u1": 1.0, "u2": 0.5}
