"""Recall on a Chinese conversation (LoCoMo format, two people, dated sessions): a question
placed in time the ways Chinese speakers write it ("2023年5月8日", "上个月", "上周") and naming
a speaker inside an unspaced sentence, or as people address each other ("小明", "老李"), finds
its turn.  Both backends, the real embedding model,
the real importer; each case also fails without the mechanism (the same words asked without
the date or of the other speaker)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.memory.service import Memory
from tests.support.conversations import locomo_chat, open_seeded, top_ids

SESSIONS = {
    "1:56 pm on 8 May, 2023": [
        ("王小明", "最近怎么样？"),
        ("李小红", "我今天早上画了一幅湖边的日出，挺满意的。"),
        ("王小明", "真厉害！我还在学做饭，昨天做了红烧肉。"),
        ("李小红", "红烧肉好吃吗？下次教教我。"),
        ("王小明", "没问题，周末来我家吧。"),
    ],
    "10:20 am on 9 June, 2023": [
        ("李小红", "我这周画了一幅女儿的肖像，她很喜欢。"),
        ("王小明", "好想看看！我报了一个游泳班。"),
        ("李小红", "游泳班每周几次课？"),
        ("王小明", "每周两次，周二和周四晚上。"),
    ],
    "4:05 pm on 20 July, 2023": [
        ("王小明", "我上周去成都出差了。"),
        ("李小红", "我上周去杭州出差了。"),
        ("王小明", "下次一起去旅行吧。"),
        ("李小红", "好啊，秋天去云南怎么样？"),
    ],
}


@pytest.fixture
def memory(tmp_path: Path, memory_store: str) -> Iterator[Memory]:
    chat = locomo_chat(tmp_path / "chat.json", ("王小明", "李小红"), SESSIONS)
    opened = open_seeded(tmp_path, memory_store, chat)
    yield opened
    opened.close()


@pytest.mark.parametrize(
    ("question", "turn"),
    [
        ("李小红二〇二三年五月八日画了什么？", "chat:D1:2"),
        ("李小红二〇二三年六月九号画了什么？", "chat:D2:1"),
        ("李小红在2023年5月8日画了什么？", "chat:D1:2"),
        ("李小红在2023年6月9日画了什么？", "chat:D2:1"),
    ],
)
def test_a_chinese_date_tells_two_paintings_apart(memory: Memory, question: str, turn: str) -> None:
    # the same words ask for either painting; only the date tells them apart
    assert top_ids(memory.retriever, question) == [turn]


def test_a_relative_chinese_time_counts_back_from_the_conversations_clock(
    memory: Memory,
) -> None:
    # the newest turn is from 20 July 2023: "上个月" reaches June, not May
    assert top_ids(memory.retriever, "李小红上个月画了什么？") == ["chat:D2:1"]


@pytest.mark.parametrize(
    ("question", "turn"),
    [
        ("王小明上周去哪里出差了？", "chat:D3:1"),  # the name, inside an unspaced sentence
        ("李小红上周去哪里出差了？", "chat:D3:2"),
        ("小明上周去哪里出差了？", "chat:D3:1"),  # the given name
        ("老李上周去哪里出差了？", "chat:D3:2"),  # 老 and the surname
        ("阿明上周去哪里出差了？", "chat:D3:1"),
    ],
)
def test_a_speaker_named_as_chinese_speakers_address_each_other_is_matched(
    memory: Memory, question: str, turn: str
) -> None:
    # both turns say "我上周去了…出差": only whom the question names tells them apart
    assert top_ids(memory.retriever, question) == [turn]
