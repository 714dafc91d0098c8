"""English time phrases as windows on event time (:mod:`shiyi.memory.recall.english_time`),
through :func:`understand`.  Phrasings written from general usage, not from any data set;
NOW is Wednesday 16 August 2023, noon."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shiyi.memory.recall.query_signals import understand

NOW = datetime(2023, 8, 16, 12, tzinfo=UTC).timestamp()


def windows(query: str, now: float = NOW) -> list[tuple[str, str]]:
    def show(ts: float) -> str:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")

    return [(show(a), show(b)) for a, b in understand(query, now).windows]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # the day itself, and the days just before it
        ("What did Ana eat last night?", [("2023-08-15", "2023-08-17")]),
        ("What did Ana do today?", [("2023-08-16", "2023-08-17")]),
        ("What is Ana cooking tonight?", [("2023-08-16", "2023-08-17")]),
        ("What did Ana say this morning?", [("2023-08-16", "2023-08-17")]),
        ("What did Ana mention the other day?", [("2023-08-06", "2023-08-17")]),
        # "before last": one more back than "last"
        ("What did Ana do the week before last?", [("2023-07-26", "2023-08-17")]),
        ("What did Ana do the Friday before last?", [("2023-08-04", "2023-08-17")]),
        # up to now
        ("What did Ana do over the past few days?", [("2023-08-12", "2023-08-17")]),
        ("What did Ana read in the last two weeks?", [("2023-08-01", "2023-08-17")]),
        ("What did Ana do this month?", [("2023-08-01", "2023-08-17")]),
        ("What did Ana do earlier this year?", [("2023-01-01", "2023-08-17")]),
        # weekdays and weekends: the latest one
        ("What did Ana do on Saturday?", [("2023-08-12", "2023-08-17")]),
        ("What did Ana do over the weekend?", [("2023-08-12", "2023-08-17")]),
        ("Where did Ana go at the weekend?", [("2023-08-12", "2023-08-17")]),
        # counted back: that day, or give or take one unit
        ("What did Ana do two Fridays ago?", [("2023-08-04", "2023-08-05")]),
        ("What did Ana do two weekends ago?", [("2023-08-05", "2023-08-07")]),
        ("What did Ana buy a fortnight ago?", [("2023-07-19", "2023-08-16")]),
        ("What did Ana do three days back?", [("2023-08-12", "2023-08-14")]),
        ("What did Ana do several weeks ago?", [("2023-07-19", "2023-08-02")]),
        ("What did Ana start a month and a half ago?", [("2023-05-31", "2023-08-01")]),
        # a named month, season or holiday: the latest that is over (or this year's)
        ("What did Ana do last August?", [("2022-08-01", "2022-09-01")]),
        # a season in both hemispheres' readings (the asker's is not known)
        (
            "What did Ana do last summer?",
            [("2022-06-01", "2022-09-01"), ("2022-12-01", "2023-03-01")],
        ),
        (
            "What did Ana do last winter?",
            [("2022-12-01", "2023-03-01"), ("2022-06-01", "2022-09-01")],
        ),
        ("What did Ana plant this spring?", [("2023-03-01", "2023-06-01")]),
        ("What did Ana get last Christmas?", [("2022-12-25", "2022-12-26")]),
        # holidays with their year: the day (moving feasts computed)
        ("What did Ana do on New Year's Eve 2022?", [("2022-12-31", "2023-01-01")]),
        ("What did Ana do on New Year’s Eve 2022?", [("2022-12-31", "2023-01-01")]),
        ("What did Ana do at Easter 2023?", [("2023-04-09", "2023-04-10")]),
        ("What did Ana do at Easter 2024?", [("2024-03-31", "2024-04-01")]),
        ("Who came over for Thanksgiving 2022?", [("2022-11-24", "2022-11-25")]),
        ("What did Ana wear on Halloween 2021?", [("2021-10-31", "2021-11-01")]),
        # a year written short
        ("Where did Ana live in '22?", [("2022-01-01", "2023-01-01")]),
        # the week a date falls in (Monday on)
        ("What did Ana do in the week of May 10, 2023?", [("2023-05-08", "2023-05-15")]),
        ("What happened the week of the 3rd of May 2023?", [("2023-05-01", "2023-05-08")]),
        # a day of the month alone: the latest one (a month without it is passed over)
        ("What happened on the 5th?", [("2023-08-05", "2023-08-06")]),
        ("What did Ana do on the 20th?", [("2023-07-20", "2023-07-21")]),
        ("What did Ana say on the 31st?", [("2023-07-31", "2023-08-01")]),
        ("What did Ana do on the 5th when Joe left?", [("2023-08-05", "2023-08-06")]),
        ("What did Ana buy on the 21st of last month?", [("2023-07-21", "2023-07-22")]),
        # part of a year counted back: those months, not the whole year
        ("What did Ana do at the end of last year?", [("2022-11-01", "2023-01-01")]),
        ("What did Ana do at the beginning of this year?", [("2023-01-01", "2023-03-01")]),
        # holidays on a weekday of their month, and on fixed days
        ("What did Ana do last Memorial Day?", [("2023-05-29", "2023-05-30")]),
        ("What did Ana cook on Father's Day 2022?", [("2022-06-19", "2022-06-20")]),
        ("Where did Ana go on Labor Day 2022?", [("2022-09-05", "2022-09-06")]),
        ("Where was Ana on the Fourth of July 2022?", [("2022-07-04", "2022-07-05")]),
        ("What did Ana drink on St. Patrick's Day 2023?", [("2023-03-17", "2023-03-18")]),
    ],
)
def test_english_times_are_read_however_people_say_them(
    query: str, expected: list[tuple[str, str]]
) -> None:
    assert windows(query) == expected


@pytest.mark.parametrize(
    ("query", "months"),
    [
        ("What did Ana do in late June?", {6}),
        ("What did Ana do in mid-June?", {6}),
        ("What did Ana do in early June?", {6}),
        ("What did Ana do at the end of May?", {5}),
        ("What did Ana do on 3rd August?", {8}),
        ("What did Ana cook on Christmas?", {12}),
        ("What did Ana get on Valentine's Day?", {2}),
        ("Where did Ana go over Easter?", {3, 4}),
        ("What did Ana do between May and July?", {5, 6, 7}),
        ("Where did Ana live from November to February?", {11, 12, 1, 2}),
        ("Where was Ana June 5?", {6}),
        ("What did Ana do from June 1 to June 10?", {6}),
        ("What did Ana do on 7/15?", {7}),
        ("What did Ana do on 3/4?", {3, 4}),  # March 4 or 3 April
        ("What did Ana do at the start of the year?", {1, 2}),
        ("What did Ana plan for the end of the year?", {11, 12}),
        ("What did Ana do over Memorial Day weekend?", {5}),
        ("What did Ana drink on St. Patrick's Day?", {3}),
    ],
)
def test_a_month_season_or_holiday_without_a_year_is_those_months(
    query: str, months: set[int]
) -> None:
    signals = understand(query, NOW)
    assert (signals.windows, signals.months) == ((), months)


@pytest.mark.parametrize(
    "query",
    [
        "What is Ana doing on Friday? She will fly out.",  # the future: nothing to recall yet
        "What is Ana going to do this Saturday?",
        "What is Ana doing on Saturday?",
        "What does Ana do on Fridays?",  # every Friday, not one
        "What will Ana do next week?",
        "Did Ana read about the fall of Rome?",
        "Did Ana drink from the spring?",
        "What did Ana do over the summer?",  # half the year, north or south: no months
        "Is Ana late?",
        "What is Ana doing on the 25th?",  # a day still ahead
        "Did Ana live on the 5th floor?",
        "Did Ana pass on the 2nd try?",
        "Ana rated it 7/10; what else did she rate?",
        "Ana may 3D print it; what did she print?",
    ],
)
def test_phrases_that_place_nothing_in_time_give_no_window(query: str) -> None:
    signals = understand(query, NOW)
    assert (signals.windows, signals.months) == ((), frozenset())


def test_a_season_still_ahead_this_year_gives_no_window() -> None:
    may = datetime(2023, 5, 10, 12, tzinfo=UTC).timestamp()
    # (south of the equator this autumn began in March)
    assert windows("What is Ana doing this summer?", may) == []
    # in January, this winter began last December
    january = datetime(2024, 1, 20, 12, tzinfo=UTC).timestamp()
    assert windows("What did Ana do this winter?", january) == [("2023-12-01", "2024-03-01")]


@pytest.mark.parametrize(
    "query",
    [
        "What did Ana do the week before last?",
        "What did Ana say earlier today?",
        "What did Ana buy earlier this month?",
        "What did Ana do in the past few days?",
    ],
)
def test_a_relative_time_is_not_a_question_about_the_past_versions(query: str) -> None:
    # "before", "earlier" and "past" here place the question in time; they do not ask what
    # was true before (which would show superseded facts)
    signals = understand(query, NOW)
    assert (signals.history, signals.intent) == (False, "temporal")


def test_a_question_about_before_is_still_one() -> None:
    assert understand("Where did Ana live before?", NOW).history


def test_now_is_asked_for_the_new_relative_phrases() -> None:
    asked: list[bool] = []

    def now() -> float:
        asked.append(True)
        return NOW

    for query in ("What did Ana eat last night?", "What did Ana do over the weekend?"):
        understand(query, now)
    assert asked == [True, True]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # news told in passing: the time is when it happened, not what is asked about
        ("Hi! The dinner was last night. I used the plan we practised. What should I do next?", []),
        ("Busy day today. Can we move the lesson?", []),
        ("我昨天去了医院。接下来该做什么？", []),
        # the question (or request) itself asks about the time
        ("Quick one. What did I eat last night?", [("2023-08-15", "2023-08-17")]),
        ("I'm bored. Remind me what we did last weekend.", [("2023-08-10", "2023-08-17")]),
        ("我很累。我昨天吃了什么？", [("2023-08-15", "2023-08-17")]),
        # one sentence: all of it (a search written as a phrase, an abbreviated month)
        ("dinner last night", [("2023-08-15", "2023-08-17")]),
        ("What did Ana do on Aug. 3, 2023?", [("2023-08-03", "2023-08-04")]),
    ],
)
def test_a_message_of_several_sentences_is_placed_by_what_it_asks(
    message: str, expected: list[tuple[str, str]]
) -> None:
    assert windows(message) == expected
