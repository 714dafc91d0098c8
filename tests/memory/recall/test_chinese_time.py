"""Time in Chinese questions, read as the English ones are: phrasings written from everyday
usage (not from any data set).  NOW is Wednesday 16 August 2023."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from shiyi.memory.recall.query_signals import understand

NOW = datetime(2023, 8, 16, 12, tzinfo=UTC).timestamp()


def windows(query: str) -> list[tuple[str, str]]:
    def show(ts: float) -> str:
        return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")

    return [(show(a), show(b)) for a, b in understand(query, NOW).windows]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # a day, however written
        ("我2023年5月7日去了哪里？", [("2023-05-07", "2023-05-08")]),
        ("2023年5月7号那天我们聊了什么", [("2023-05-07", "2023-05-08")]),
        ("二〇二三年五月七日他说了什么？", [("2023-05-07", "2023-05-08")]),
        ("２０２３年５月７日的会议", [("2023-05-07", "2023-05-08")]),  # full-width digits
        ("2023年12月31日的晚饭", [("2023-12-31", "2024-01-01")]),
        # a month or a year with its year
        ("2022年12月我捐了什么？", [("2022-12-01", "2023-01-01")]),
        ("2022年十二月份的旅行", [("2022-12-01", "2023-01-01")]),
        ("我2022年去了几次海边？", [("2022-01-01", "2023-01-01")]),
        ("2022年夏天她在学什么？", [("2022-01-01", "2023-01-01")]),
        ("2023年2月30日", [("2023-02-01", "2023-03-01")]),  # no such day: its month
        # counted back from now, each including today
        ("我昨天吃了什么？", [("2023-08-15", "2023-08-17")]),
        ("昨晚看的电影叫什么", [("2023-08-15", "2023-08-17")]),
        ("前天他去哪儿了", [("2023-08-14", "2023-08-17")]),
        ("大前天的会议", [("2023-08-13", "2023-08-17")]),
        ("今天早上我说过什么", [("2023-08-16", "2023-08-17")]),
        ("我上周说的那家餐厅叫什么？", [("2023-08-02", "2023-08-17")]),
        ("上个星期谁来过？", [("2023-08-02", "2023-08-17")]),
        ("上礼拜买的书", [("2023-08-02", "2023-08-17")]),
        ("上上周的计划", [("2023-07-26", "2023-08-17")]),
        ("上周末我们去哪儿了", [("2023-08-10", "2023-08-17")]),
        ("上个月的会议说了什么", [("2023-06-15", "2023-08-17")]),
        ("这周我做了什么", [("2023-08-09", "2023-08-17")]),
        ("本月的开销", [("2023-07-16", "2023-08-17")]),
        ("今年读了哪些书", [("2022-08-15", "2023-08-17")]),
        ("去年她搬到哪里了", [("2021-08-14", "2023-08-17")]),
        ("前年的工作", [("2020-08-13", "2022-08-15")]),
        # a weekday: "上周六" read both ways (the latest Saturday, last week's Saturday)
        ("上周六我们去哪儿了", [("2023-08-12", "2023-08-17")]),
        ("上星期天打了球", [("2023-08-13", "2023-08-17")]),
        ("上周一开会说了什么", [("2023-08-07", "2023-08-17")]),
        ("这周一谁请假了", [("2023-08-14", "2023-08-17")]),
        # so long ago, give or take one unit
        ("三天前我去了哪里", [("2023-08-12", "2023-08-14")]),
        ("两个星期前买的鞋", [("2023-07-26", "2023-08-09")]),
        ("一个多月前认识的朋友", [("2023-06-15", "2023-08-16")]),
        ("半年前的体检结果", [("2022-08-15", "2023-08-16")]),
        ("两年前他在哪里工作", [("2020-08-13", "2022-08-15")]),
        ("前两天说的那本书", [("2023-08-14", "2023-08-17")]),
        # part of a year with its year: those months, not the whole year
        ("去年年底他买了什么？", [("2022-11-01", "2023-01-01")]),
        ("今年年初我们去了哪里", [("2023-01-01", "2023-03-01")]),
        ("前年上半年她在哪工作", [("2021-01-01", "2021-07-01")]),
        ("今年中他做了什么", [("2022-08-15", "2023-08-17")]),  # during this year (as 今年)
        # a day of the month: the latest one gone by, this month's or last month's
        ("3号我们做了什么？", [("2023-08-03", "2023-08-04")]),
        ("他20号去了哪儿", [("2023-07-20", "2023-07-21")]),
        ("本月5号的会议说了什么？", [("2023-08-05", "2023-08-06")]),
        ("上个月5号她买了什么", [("2023-07-05", "2023-07-06")]),
        # from a date in the question: before and after it
        (
            "2023年5月5日两天后她做了什么",
            [("2023-05-05", "2023-05-06"), ("2023-05-05", "2023-05-08")],
        ),
        (
            "2023年5月20日的前一周",
            [("2023-05-20", "2023-05-21"), ("2023-05-13", "2023-05-21")],
        ),
    ],
)
def test_chinese_times_are_read_however_people_write_them(
    query: str, expected: list[tuple[str, str]]
) -> None:
    assert windows(query) == expected
    assert understand(query, NOW).intent == "temporal"


@pytest.mark.parametrize(
    ("query", "month"),
    [
        ("五月份我读了哪本书？", 5),
        ("5月7号那天", 5),
        ("十二月去哪儿旅行了", 12),
        ("她三月初搬的家", 3),
    ],
)
def test_a_month_without_a_year_is_that_month_of_any_year(query: str, month: int) -> None:
    signals = understand(query, NOW)
    assert (signals.windows, signals.months) == ((), {month})


@pytest.mark.parametrize(
    ("query", "months"),
    [
        ("国庆节他去了哪里？", {10}),
        ("五一假期我们去哪玩了", {5}),
        ("元旦那天吃了什么", {1}),
        ("圣诞节收到了什么礼物？", {12}),
        ("春节回老家了吗", {1, 2}),  # lunar: over two months
        ("中秋节吃了什么月饼", {9, 10}),
        ("年底的计划是什么", {11, 12}),
        ("年初定的目标", {1, 2}),
    ],
)
def test_a_holiday_or_a_part_of_a_year_without_a_year_is_its_months(
    query: str, months: set[int]
) -> None:
    signals = understand(query, NOW)
    assert (signals.windows, signals.months) == ((), months)


@pytest.mark.parametrize(
    "query",
    [
        "三个月的学习计划",  # a span, not a time
        "我每月存多少钱？",  # every month
        "这周围有什么好吃的？",  # 周围: the surroundings
        "这周天气怎么样",  # 天 after 周 is the weather, not Sunday
        "三天后我要去哪",  # the future: memory does not hold it
        "五月前要交的报告",  # before May, not five months ago
        "我以前住在哪？",
        "前面说的那个方案",
        "3号要做什么？",  # a day still ahead
        "坐3号线去了哪里？",  # a subway line
        "他住在5号楼了吗",  # a building
    ],
)
def test_words_that_look_like_time_but_are_not_a_window(query: str) -> None:
    assert windows(query) == []


def test_now_is_asked_for_only_when_a_chinese_query_counts_back() -> None:
    asked: list[bool] = []

    def now() -> float:
        asked.append(True)
        return NOW

    understand("小王喜欢什么运动？", now)
    assert asked == []
    understand("小王上个月喜欢什么运动？", now)
    assert asked == [True]


@pytest.mark.parametrize(
    "query",
    [
        "她啥时候回来的？",
        "我们是哪一天见的面？",
        "会议是几点开始的？",
        "他几岁开始学钢琴？",
        "你们在一起几年了？",
        "搬家是在结婚之前还是之后？",
        "他们哪个季节去的北海道？",
    ],
)
def test_chinese_questions_about_time_are_temporal(query: str) -> None:
    assert understand(query, NOW).intent == "temporal"


def test_a_name_inside_an_unspaced_chinese_sentence_is_among_the_names() -> None:
    names = understand("小明上周去哪里出差了？", NOW).names
    assert {"小明", "上周", "出差"} <= names


@pytest.mark.parametrize(
    ("english", "chinese"),
    [
        ("What did I eat yesterday?", "我昨天吃了什么？"),
        ("Where did I go last week?", "我上周去了哪里？"),
        ("What did we plan last month?", "我们上个月计划了什么？"),
        ("Where did she move last year?", "她去年搬到哪里了？"),
        ("What did I buy three days ago?", "我三天前买了什么？"),
        ("What did I do this week?", "我这周做了什么？"),
        ("Who called on May 7, 2023?", "2023年5月7日谁打来电话？"),
        ("Where did we travel in May 2023?", "2023年5月我们去哪里旅行了？"),
        ("What did she learn in 2022?", "她2022年学了什么？"),
        ("What happened two days after May 5, 2023?", "2023年5月5日两天后发生了什么？"),
        ("What did John do the week before August 3, 2023?", "2023年8月3日的前一周做了什么？"),
    ],
)
def test_a_chinese_question_gets_the_windows_of_its_english_twin(
    english: str, chinese: str
) -> None:
    assert windows(chinese) == windows(english)


def test_a_month_without_a_year_reads_as_its_english_twin() -> None:
    english = understand("When did Melanie go camping in June?", NOW)
    chinese = understand("Melanie六月什么时候去露营的？", NOW)
    assert (chinese.windows, chinese.months, chinese.intent) == (
        english.windows,
        english.months,
        english.intent,
    )
