"""Echo and repetition rules: what counts as a reply copying shiyi's text or itself."""

from __future__ import annotations

from shiyi.agent.echo import echoed, repeated_sentence, split_request
from shiyi.context.builder import MEMORY_HINT
from shiyi.llm.types import Message

NOTE = "Do not call a tool now: answer in plain text with what you have."
PERSONA_LINE = "Be honest about what you know. Say when you are unsure"


def test_an_echo_is_a_run_of_words_from_shiyi_text_the_user_did_not_write() -> None:
    request = split_request(
        [
            Message("system", "You are shiyi.\n\n" + PERSONA_LINE),
            Message("user", "<context>\nCurrent time: 2026-11-28 03:00 UTC.\n</context>\n\nhi"),
            Message("tool", "milk and eggs and bread and butter\n\n[shiyi] Do not repeat it."),
        ],
        notes=[NOTE],
    )
    assert echoed(NOTE, request) == "do not call a tool now answer in plain text with what you have"
    assert echoed("Hello! " + PERSONA_LINE + ".", request).startswith("be honest about")
    assert echoed("Current time: 2026-11-28 03:00 UTC.", request) != ""
    # A tool's output is fair to repeat; short overlaps are no echo.
    assert echoed("It says: milk and eggs and bread and butter.", request) == ""
    assert echoed("I am shiyi, hello!", request) == ""


def test_saying_who_it_is_is_no_echo_but_repeating_its_rules_is() -> None:
    identity = (
        "You are shiyi (十一), a personal assistant that works with tools and a long-term memory."
    )
    request = split_request([Message("system", f"{identity}\n\n- {PERSONA_LINE}.")])
    hello = "Hello! I'm shiyi, a personal assistant that works with tools and a long-term memory."
    assert echoed(hello, request) == ""
    assert echoed(f"Hello. {PERSONA_LINE}.", request).startswith("be honest about")
    # Only the opening line is an identity: the same words later in the prompt are shiyi's.
    later = split_request([Message("system", f"- {PERSONA_LINE}.\n{identity}")])
    assert echoed(hello, later) != ""


def test_a_sentence_said_three_times_is_found() -> None:
    assert repeated_sentence("I am here. I am here. I am here.") == "i am here"
    assert repeated_sentence("I am here. I am here. Bye now.") == ""
    assert repeated_sentence("Yes. Yes. Yes.") == ""  # too short to call a loop


def test_in_a_text_meant_as_one_sentence_a_clause_said_three_times_is_a_loop() -> None:
    looping = "I am Ana, I will remember you, I will remember you, I will remember you, I"
    assert repeated_sentence(looping) == ""  # prose may run on with commas
    assert repeated_sentence(looping, clauses=True) == "i will remember you"
    listing = "My sister likes tea, coffee, and hot chocolate, and she lives in Porto."
    assert repeated_sentence(listing, clauses=True) == ""


def test_quoting_a_recalled_memory_is_no_echo_but_the_hint_header_is() -> None:
    context = (
        "<context>\nCurrent time: 2026-11-28 03:00 UTC.\n\n"
        f"{MEMORY_HINT}\n- user: Remember that my favourite colour is green.\n</context>"
    )
    request = split_request([Message("system", "You are shiyi."), Message("user", context)])
    assert echoed("You said: remember that my favourite colour is green.", request) == ""
    assert echoed(MEMORY_HINT, request).startswith("possibly relevant memories")


def test_the_plain_layouts_memories_are_fair_to_quote_but_its_own_line_is_not() -> None:
    from shiyi.context.plain import plain_request

    history = [Message("user", "Where does my sister live?")]
    request = split_request(plain_request(history, memories=["User: my sister lives in Lyon now."]))
    assert echoed("You said my sister lives in Lyon now.", request) == ""
    assert echoed("you are a helpful assistant answer the user", request) != ""


def test_only_memory_writes_that_copy_shiyis_text_are_caught() -> None:
    from shiyi.agent.echo import echoed_calls
    from shiyi.llm.types import ToolCall

    request = split_request([Message("system", "You are shiyi.")], notes=[NOTE])
    calls = [
        ToolCall("a", "remember", '{"text": "Do not call a tool now: answer in plain text."}'),
        ToolCall("b", "remember", '{"text": "Ana lives in Porto."}'),
        ToolCall("c", "write_file", '{"path": "x", "content": "Do not call a tool now: answer"}'),
        ToolCall("d", "remember", "not json"),
        ToolCall("e", "remember", '{"text": 7}'),
    ]
    assert echoed_calls(calls, request) == {"a": "do not call a tool now answer in plain text"}
