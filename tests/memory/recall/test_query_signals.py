"""Reading a query without a model: names, time windows, recency and intent."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shiyi.memory.recall.query_signals import understand

NOW = datetime(2023, 8, 16, 12, tzinfo=UTC).timestamp()


def day(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC).timestamp()


def windows(query: str) -> list[tuple[str, str]]:
    def show(ts: float) -> str:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")

    return [(show(a), show(b)) for a, b in understand(query, NOW).windows]


@pytest.mark.parametrize(
    "query",
    [
        "Who did Maria have dinner with on May 3, 2023?",
        "Who did Maria have dinner with on 3 May, 2023?",
        "Who did Maria have dinner with on the 3rd of May 2023?",
        "Who did Maria have dinner with on 2023-05-03?",
    ],
)
def test_an_explicit_day_in_any_common_spelling_is_a_one_day_window(query: str) -> None:
    assert windows(query) == [("2023-05-03", "2023-05-04")]


def test_a_month_and_year_and_a_year_are_whole_periods() -> None:
    assert windows("What did Maria donate in December 2022?") == [("2022-12-01", "2023-01-01")]
    assert windows("How many times did she go to the beach in 2023?") == [
        ("2023-01-01", "2024-01-01")
    ]


def test_a_month_without_a_year_matches_that_month_of_any_year() -> None:
    signals = understand("When did Melanie go camping in June?", NOW)
    assert signals.windows == ()
    assert signals.months == {6}
    assert signals.intent == "temporal"


def test_relative_times_count_back_from_a_date_in_the_question() -> None:
    # "the week before August 3": from 27 July, and the day it was told is included
    assert windows("What did John do the week before August 3, 2023?") == [
        ("2023-08-03", "2023-08-04"),
        ("2023-07-27", "2023-08-04"),
    ]


def test_relative_times_without_a_date_count_back_from_now() -> None:
    assert windows("What did I eat yesterday?") == [("2023-08-15", "2023-08-17")]
    (start, end) = understand("Where did John travel last year?", NOW).windows[0]
    assert start <= day("2022-08-16") and end > NOW


def test_now_is_only_asked_for_when_the_query_has_a_relative_time() -> None:
    asked: list[bool] = []

    def now() -> float:
        asked.append(True)
        return NOW

    understand("What did Caroline research?", now)
    assert asked == []
    understand("What did Caroline research last month?", now)
    assert asked == [True]


def test_an_impossible_day_falls_back_to_its_month() -> None:
    assert windows("What happened on 31 February, 2023?") == [("2023-02-01", "2023-03-01")]


# Ways people place a question in time, written from general usage (NOW is Wed 16 Aug 2023).
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Ana do on 2023/05/07?", [("2023-05-07", "2023-05-08")]),
        # day/month order differs by country: both days are searched
        (
            "What did Ana do on 5/7/2023?",
            [("2023-05-07", "2023-05-08"), ("2023-07-05", "2023-07-06")],
        ),
        ("What did Ana do on 13/7/2023?", [("2023-07-13", "2023-07-14")]),
        ("What did Ana do in early 2023?", [("2023-01-01", "2024-01-01")]),
        ("What did Ana do over Christmas 2022?", [("2022-12-25", "2022-12-26")]),
        (
            "What did Ana do between May and July 2023?",
            [("2023-05-01", "2023-08-01"), ("2023-07-01", "2023-08-01")],
        ),
        (
            "What did Ana do the Sunday before 20 May 2023?",
            [("2023-05-20", "2023-05-21"), ("2023-05-13", "2023-05-21")],
        ),
        (
            "What did Ana do two days after May 5, 2023?",
            [("2023-05-05", "2023-05-06"), ("2023-05-05", "2023-05-08")],
        ),
        (
            "What did Ana do the week after 10 July 2023?",
            [("2023-07-10", "2023-07-11"), ("2023-07-10", "2023-07-18")],
        ),
        ("What did Ana do last Saturday?", [("2023-08-12", "2023-08-17")]),
        ("What did Ana do last Wednesday?", [("2023-08-09", "2023-08-17")]),
        ("What did Ana do last Fri?", [("2023-08-11", "2023-08-17")]),
        ("What did Ana do a couple of weeks ago?", [("2023-07-26", "2023-08-09")]),
        ("What did Ana do a few days ago?", [("2023-08-12", "2023-08-14")]),
        ("What did Ana do the day before yesterday?", [("2023-08-14", "2023-08-17")]),
    ],
)
def test_times_are_read_however_people_write_them(
    query: str, expected: list[tuple[str, str]]
) -> None:
    assert windows(query) == expected


def test_a_month_and_day_without_a_year_is_that_month() -> None:
    signals = understand("What did Ana do on May 7th?", NOW)
    assert (signals.windows, signals.months) == ((), {5})


def test_a_word_starting_like_a_month_is_not_one() -> None:
    # "dec" and "mar" are months only as whole words
    assert understand("I'm back on deck and in decent shape", NOW).months == frozenset()
    assert understand("We met in Marseille", NOW).months == frozenset()


def test_the_day_after_an_event_is_not_a_window_without_a_date() -> None:
    assert windows("What did Mark do the day after the party?") == []


# Of two people named, the one asked about as speaker or actor (written from general usage).
@pytest.mark.parametrize(
    ("query", "subject"),
    [
        ("What did Priya tell Tom about the move?", "priya"),
        ("What gift did Tom give to Priya?", "tom"),
        ("How did Priya react to Tom's news?", "priya"),
        ("According to Tom, why did Priya quit?", "tom"),
        ("What does Priya think of Tom's band?", "priya"),
        ("Which recipe did Tom share with Priya?", "tom"),
        ("What advice did Tom get from Priya?", "tom"),
        ("What did Tom and Priya cook?", ""),  # together
        ("Did Priya and Tom both go?", ""),
        ("What did Priya's brother tell Tom?", ""),  # her brother spoke
        ("What did Tom ask?", ""),  # one person: the speaker boost's own case
        ("What did they say to Tom and Priya?", ""),  # both objects
    ],
)
def test_the_person_a_question_asks_about_among_several(query: str, subject: str) -> None:
    assert understand(query, NOW).subject == subject


@pytest.mark.parametrize(
    ("query", "jointly"),
    [
        ("What do Sam and Priya both enjoy?", True),
        ("Which hobby do Tom and Ana have in common?", True),
        ("How do Lena's and Omar's new jobs compare?", True),
        ("Did Kim and Raj grow up in the same town?", True),
        ("What did each of them bring to the picnic?", True),
        ("Are Mia and Leo alike in how they handle stress?", True),
        ("小明和小红都喜欢什么运动?", True),
        ("What did Sam and Priya do together last weekend?", False),  # one can tell it
        ("Did they meet on the same day as the party?", False),  # a time, not a thing shared
        ("When did Tom visit Ana?", False),
        ("What does Priya like to cook?", False),
    ],
)
def test_a_question_about_what_several_people_each_did_is_asked_jointly(
    query: str, jointly: bool
) -> None:
    assert understand(query, NOW).jointly is jointly


def test_names_are_every_word_lower_cased() -> None:
    signals = understand("What did Caroline's sister paint?", NOW)
    assert {"caroline", "sister", "paint"} <= signals.names


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("When did Caroline go to the LGBTQ support group?", "temporal"),
        ("How long has Caroline had her current group of friends?", "temporal"),
        ("What do Jon and Gina both have in common?", "multi_hop"),
        ("How do we deploy the staging server?", "procedure"),
        ("Which editor do I prefer?", "preference"),
        ("Where did I live before?", "history"),
        ("What did Caroline research?", "lookup"),
        ("我们之前用的是哪个数据库？", "history"),
        ("What was my old phone number?", "history"),
    ],
)
def test_intent_is_recognised_without_a_model(query: str, intent: str) -> None:
    assert understand(query, NOW).intent == intent


@pytest.mark.parametrize(
    ("query", "past"),
    [
        ("What was my old phone number?", True),
        ("Which car did I have before?", True),
        ("How old is my daughter?", False),  # an age: replaced ages stay out
        ("Is my nephew 12 years old yet?", False),
        ("What does my 6-year-old like to read?", False),
    ],
)
def test_only_a_question_of_the_past_asks_for_replaced_values(query: str, past: bool) -> None:
    assert understand(query, NOW).history is past


# Asking when, how long, or in what order, phrased the ways people do (written from general
# usage, not from any conversation data set): each must reach the "told when" boost.
@pytest.mark.parametrize(
    "query",
    [
        "Since when has Maria been vegetarian?",
        "At what point did Tom decide to quit his job?",
        "How long ago did Sam move to Denver?",
        "What weekend did they go hiking?",
        "Which week was the conference?",
        "How many years has Leo played guitar?",
        "How many days was the trip to Lisbon?",
        "By when does the report need to be done?",
        "What season did they go skiing?",
        "Did Mia start her new job before or after her birthday?",
        "Which came first, the wedding or the move?",
        "What was the date of the concert?",
        "Do you know when Lisa graduated?",
        "Can you remind me when the dentist appointment is?",
        "At what age did Omar learn to drive?",
        "How soon after the interview did Jess hear back?",
        "What's the timeline for the kitchen remodel?",
        "Until when is the museum open?",
        "Was it in spring or summer that they visited Rome?",
        "Roughly when did Noah break his arm?",
        "How recently did Kai see his grandmother?",
        "Tell me when Jordan got promoted.",
        "你还记得我们是哪个月搬家的吗？",
        "小王学吉他多长时间了？",
        "Has Priya ever been to Lisbon, and if so when?",
        "What's the date Omar graduated?",
        "How much time passed between the move and the wedding?",
        "How much later did Lena start her new job?",
        "What was the last time Omar went camping?",
        "What's the time frame for the renovation?",
        "Over what period did Ken train for the marathon?",
        "During what part of the year does Ana visit her grandmother?",
        "At what stage of his life did Leo learn to swim?",
        "Do you remember roughly when Eli got his first guitar?",
        "What duration was the course Gus took?",
        "小王多少天前搬的家？",
        "你还记得我们是哪段时间去旅行的吗？",
        "他是在哪个年代出生的？",
        "她花了多少小时准备考试？",
        "Did Jon start the job before Gina opened her shop?",
        "Was Ravi promoted after he moved to Leeds?",
        "Had Ana visited Rome before she got married?",
    ],
)
def test_questions_about_time_are_temporal_however_phrased(query: str) -> None:
    assert understand(query, NOW).intent == "temporal"


@pytest.mark.parametrize(
    "query",
    [
        "What did I say when we talked about the budget?",  # "when" joins two clauses
        "Where did Caroline go when she was in Spain?",
        "How many cats does Ana have?",  # counting things, not time
        "What was first on the agenda?",
        "What point did Raj make about the rent?",
        "Which stage did the band play on?",  # a platform, not a stage of life
        "What did Ana cook when her parents visited?",
        "Did you live in Paris before?",
        "Did Tom eat before the game?",
    ],
)
def test_when_as_a_conjunction_or_a_count_is_not_a_time_question(query: str) -> None:
    assert understand(query, NOW).intent != "temporal"


def test_recency_cues_and_the_kinds_an_intent_prefers() -> None:
    assert understand("What is John currently reading?", NOW).recent
    assert not understand("What is John reading?", NOW).recent
    assert understand("When was the last time John went hiking?", NOW).recent
    assert understand("The CV I sent you last time: is it good?", NOW).recent
    assert not understand("Is this John's last climb this time?", NOW).recent
    assert understand("How do I release a new version?", NOW).kinds == ("procedural",)
    assert understand("What music do I like?", NOW).kinds == ("preference",)


@pytest.mark.parametrize(
    ("query", "how_often"),
    [
        ("How often does Sam go climbing?", True),
        ("How frequently do they meet?", True),
        ("How many times a week does Ana swim?", True),
        ("她多久一次去健身房？", True),
        ("每周几次跑步？", True),
        ("How many days a week does Sam work out?", True),
        ("How many hours per week does Ana practise piano?", True),
        ("On which days does Sam swim?", True),
        ("What days of the week do they play football?", True),
        ("How many days did the trip last?", False),  # a length
        ("What days did Ana spend in Rome?", False),  # which days, once
        ("How many times has Ana been to Paris?", False),  # a count, not a rate
        ("When did Sam start climbing?", False),
        ("Does Sam often climb?", False),
    ],
)
def test_a_question_asking_how_often(query: str, how_often: bool) -> None:
    assert understand(query, NOW).how_often is how_often
