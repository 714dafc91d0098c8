"""The steps the agent takes itself for a guided small model (shiyi.agent.dispatch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shiyi.agent.dispatch import arithmetic, named_files, noted, plan_dispatch

TOOLS = {"read_file", "list_dir", "write_file"}


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        ("How much is 12 x 4?", "12 * 4 = 48"),
        ("what's 9 plus 8", "9 + 8 = 17"),
        ("Calculate 100 divided by 8", "100 / 8 = 12.5"),
        ("What is 15 minus 20?", "15 - 20 = -5"),
        ("What is the sum of 4 and 9?", "4 + 9 = 13"),
        ("what is (3+4)*2?", "(3+4)*2 = 14"),
        ("Please work out 3.5 multiplied by 2.", "3.5 * 2 = 7"),
    ],
)
def test_arithmetic_in_everyday_words_is_evaluated_exactly(message: str, fact: str) -> None:
    assert arithmetic(message) == fact


@pytest.mark.parametrize(
    "message",
    [
        "I have 3 cats and 2 dogs.",  # numbers, but no sum asked for
        "What is on 2026-11-28?",  # a date, not 2026 - 11 - 28
        "What is between 3 and 5?",
        "Call me at 10-12.",
        "What is 1/0?",  # no value: left to the model
        "What is 10 ** 3?",  # not the four operations
        "What is 1234567890123456789 * 2?",  # longer than anyone asks a chat assistant
        "What is 1e308 * 10?",  # scientific notation: not 308 * 10
        "What is v2.5 + 1?",  # a version, not a number
        "What is " + " * ".join(["999999999999999"] * 30) + "?",  # beyond a float
        "What is " + "(" * 3000 + "1 + 2" + ")" * 3000 + "?",  # deeper than the parser
    ],
)
def test_no_fact_is_made_up_from_numbers_that_ask_for_no_sum(message: str) -> None:
    assert arithmetic(message) == ""


def test_a_named_workspace_file_is_read_and_a_folder_request_is_listed(tmp_path: Path) -> None:
    (tmp_path / "diary.md").write_text("Tuesday: rain.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "plan.txt").write_text("step one\n")
    opened = plan_dispatch("Open diary.md and docs/plan.txt for me.", tmp_path, TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in opened.calls] == [
        ("read_file", {"path": "diary.md"}),
        ("read_file", {"path": "docs/plan.txt"}),
    ]
    listed = plan_dispatch("Which files are here in this directory?", tmp_path, TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in listed.calls] == [
        ("list_dir", {"path": "."})
    ]
    assert len({c.id for c in opened.calls}) == 2


def test_changes_missing_files_and_missing_tools_are_left_to_the_model(tmp_path: Path) -> None:
    (tmp_path / "diary.md").write_text("Tuesday: rain.\n")
    assert plan_dispatch("Delete diary.md please.", tmp_path, TOOLS).calls == ()
    assert plan_dispatch("Add a line to diary.md", tmp_path, TOOLS).calls == ()
    assert plan_dispatch("Read journal.md", tmp_path, TOOLS).calls == ()
    assert plan_dispatch("Read diary.md", tmp_path, {"list_dir"}).calls == ()
    assert plan_dispatch("Good morning!", tmp_path, TOOLS) == plan_dispatch("", tmp_path, TOOLS)


def test_only_files_inside_the_workspace_count(tmp_path: Path) -> None:
    (tmp_path / "inside").mkdir()
    (tmp_path / "secret.txt").write_text("no\n")
    assert named_files("read ../secret.txt", tmp_path / "inside") == []
    assert named_files("read secret.txt and secret.txt", tmp_path) == ["secret.txt"]


def test_what_the_user_told_before_is_quoted_from_the_recalled_memories(tmp_path: Path) -> None:
    memories = (
        "User: Remember that my sister lives in Lyon.",
        "User: Say hello.",
        "Assistant: Your sister lives in Lyon.",  # only the user's own words are quoted
    )
    asked = plan_dispatch("Do you remember where my sister lives?", tmp_path, TOOLS, memories)
    assert asked == plan_dispatch(
        "Do you remember where my sister lives?", tmp_path, TOOLS, memories
    )
    assert asked.answer == 'You told me: "Remember that my sister lives in Lyon."'
    assert asked.calls == asked.facts == ()
    where = plan_dispatch("Where does my sister live?", tmp_path, TOOLS, memories)
    assert where.answer == asked.answer  # a question of fact about the user's own things
    # No recall asked for, or nothing recalled about it: the model answers.
    advice = plan_dispatch("What should I cook for my sister?", tmp_path, TOOLS, memories)
    assert advice.answer == ""
    assert plan_dispatch("Where does my brother live?", tmp_path, TOOLS, memories).answer == ""
    unrelated = plan_dispatch("What did I say about the weather?", tmp_path, TOOLS, memories)
    assert unrelated.answer == ""


def test_a_question_about_the_users_own_doings_quotes_the_current_facts(tmp_path: Path) -> None:
    held = ("I usually go running on Tuesdays now.", "lives in: My sister Ana lives in Porto.")
    memories = ("User: I usually go running on Mondays.", *held)
    when = plan_dispatch("When do I usually go running?", tmp_path, TOOLS, memories, held)
    assert when.answer == 'I have noted: "I usually go running on Tuesdays now."'
    sister = plan_dispatch("Where does my sister live?", tmp_path, TOOLS, memories, held)
    assert sister.answer == 'I have noted: "My sister Ana lives in Porto."'  # slot left out
    short = plan_dispatch("Where do I live?", tmp_path, TOOLS, (), ("lives in: Berlin",))
    assert short.answer == 'I have noted: "lives in: Berlin"'  # the slot asked after
    hers = ("lives in: My sister Ana lives in Porto.",)
    assert plan_dispatch("Where do I live?", tmp_path, TOOLS, (), hers).answer == ""
    city = plan_dispatch("Where do I live?", tmp_path, TOOLS, (), ("lives in: I live in Bonn",))
    assert city.answer == 'I have noted: "I live in Bonn"'
    # No facts held about it: the user's own words, as before; "how" questions: the model.
    told = plan_dispatch("When do I go running?", tmp_path, TOOLS, memories)
    assert told.answer == 'You told me: "I usually go running on Mondays."'
    assert (
        plan_dispatch("How do I go running faster?", tmp_path, TOOLS, memories, held).answer == ""
    )
    assert plan_dispatch("When do I pay rent?", tmp_path, TOOLS, memories, held).answer == ""


def test_whether_the_user_still_has_or_is_something_quotes_what_memory_believes(
    tmp_path: Path,
) -> None:
    held = (
        "number of motorbike: I sold my motorbike.",
        "job: I'm a midwife now.",
        "number of cats: I have three cats now.",
    )

    def answer(question: str) -> str:
        return plan_dispatch(question, tmp_path, TOOLS, (), held).answer

    assert answer("Do I have a motorbike?") == 'I have noted: "I sold my motorbike."'
    assert answer("What's my job?") == 'I have noted: "I\'m a midwife now."'
    assert answer("How many cats do I have?") == 'I have noted: "I have three cats now."'
    assert answer("Am I a midwife?") == 'I have noted: "I\'m a midwife now."'
    # a yes-no question asks after the slot its words would state
    slots = ("diet: I started eating meat again.", "marital status: We got married in June.")
    assert (
        plan_dispatch("Am I vegetarian?", tmp_path, TOOLS, (), slots).answer
        == 'I have noted: "I started eating meat again."'
    )
    assert (
        plan_dispatch("Am I still single?", tmp_path, TOOLS, (), slots).answer
        == 'I have noted: "We got married in June."'
    )
    # ... and so does a question asking for a slot's value, in whatever words it is held
    held_by_slot = (
        "lives in: I moved to Porto last month.",
        "age: I'm 34",
        "number of cat: I have a cat.",
    )
    for question, quoted in [
        ("Where do I live?", 'I have noted: "I moved to Porto last month."'),
        ("What city do I live in now?", 'I have noted: "I moved to Porto last month."'),
        ("How old am I?", 'I have noted: "age: I\'m 34"'),
        ("How many cats do I have?", 'I have noted: "I have a cat."'),
    ]:
        assert plan_dispatch(question, tmp_path, TOOLS, (), held_by_slot).answer == quoted
    # in Chinese too, answered in Chinese
    zh = ("lives in: 我搬到了上海", "age: 我今年34岁")
    assert (
        plan_dispatch("我住在哪里？", tmp_path, TOOLS, (), zh).answer
        == "我记下的是：“我搬到了上海”"
    )
    assert plan_dispatch("我多大了？", tmp_path, TOOLS, (), zh).answer == "我记下的是：“我今年34岁”"
    # the user's own earlier question tells nothing
    asked_before = ("User: How old am I?",)
    assert plan_dispatch("How old am I?", tmp_path, TOOLS, asked_before).answer == ""
    # Asking for help, not for what is known: the model answers.
    assert answer("Do I need a licence for a motorbike?") == ""
    assert answer("Should I get a motorbike?") == ""


def test_a_request_to_remember_is_a_remember_call_of_the_statement(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x\n")
    tools = {*TOOLS, "remember"}
    asked = plan_dispatch("Remember that my notes live in notes.txt.", tmp_path, tools)
    assert [(c.name, json.loads(c.arguments)) for c in asked.calls] == [
        ("remember", {"text": "My notes live in notes.txt."})  # not a read of notes.txt
    ]
    assert plan_dispatch("Remember to water the plants", tmp_path, tools).calls == ()
    assert plan_dispatch("Remember that I live in Oslo", tmp_path, TOOLS).calls == ()  # no tool


def test_the_answer_after_remember_says_what_memory_now_holds() -> None:
    word = noted("My sister lives in Porto.")
    stored = "Remembered (semantic, user, id fact_1): lives in: My sister lives in Porto."
    assert word(stored) == 'Noted: "My sister lives in Porto."'
    replaced = f"{stored} It replaces 'My sister lives in Rome.' (kept in history)."
    assert word(replaced) == (
        "Noted: \"My sister lives in Porto.\" It replaces 'My sister lives in Rome.' "
        "(kept in history)."
    )
    held = "Already remembered (semantic, user, id fact_1): lives in: My sister lives in Porto."
    assert word(held) == 'I already had that noted: "My sister lives in Porto."'
    assert word("not run: nothing was stored") == ""  # the model says what went wrong


def test_a_chinese_request_is_answered_in_chinese() -> None:
    word = noted("我妹妹住在波尔图")
    stored = "Remembered (semantic, user, id fact_1): lives in: 我妹妹住在波尔图"
    assert word(stored) == "记下了：“我妹妹住在波尔图”"
    replaced = f"{stored} It replaces '我妹妹住在里斯本' (kept in history)."
    assert (
        word(replaced)
        == "记下了：“我妹妹住在波尔图”（替换了之前的 '我妹妹住在里斯本'，旧的保留在历史中）"
    )
    assert word("Already remembered (semantic, user, id fact_1): …").startswith("这个我已经记下了")
