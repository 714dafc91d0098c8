"""The embedded runtime's reply router: prose streams as text, a call's arguments stream as
they are generated (so a caller may stop a call going wrong), and the pieces always join
into what the call said.  Raw generated text fed in small pieces; no model needed."""

from __future__ import annotations

import json

from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.local.grammar import CALL_CLOSE, CALL_OPEN, ReplyRouter
from shiyi.llm.types import FinishChunk, StreamChunk, TextChunk, ToolCallDelta, ToolSpec

REMEMBER = ToolSpec(
    "remember",
    "Store a memory.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
NOTE = ToolSpec("note", "Write a note.", {"type": "object", "properties": {}})


def routed(raw: str, tools: list[ToolSpec], size: int = 3) -> tuple[list[StreamChunk], int]:
    """The chunks of ``raw`` fed ``size`` characters at a time, and how many came out before
    the generation finished."""
    router = ReplyRouter(tools)
    streamed: list[StreamChunk] = []
    for at in range(0, len(raw), size):
        streamed += router.feed(raw[at : at + size])
    before = len(streamed)
    return streamed + router.finish(10, 20, "stop"), before


def assembled(chunks: list[StreamChunk]) -> tuple[str, str]:
    assembler = ReplyAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    (call,) = assembler.message().tool_calls
    return call.name, call.arguments


def test_a_calls_arguments_stream_before_the_call_ends_and_join_into_its_json() -> None:
    text = "My sister lives in Porto and works as a nurse at the city hospital."
    raw = f'{CALL_OPEN}{{"name": "remember", "arguments": {{"text": "{text}"}}}}{CALL_CLOSE}'
    chunks, before = routed(raw, [REMEMBER, NOTE])
    pieces = [c for c in chunks[:before] if isinstance(c, ToolCallDelta)]
    assert pieces[0].name == "remember" and pieces[0].id
    assert sum(len(p.arguments) for p in pieces) > len(text) // 2  # well before the end
    assert len(pieces) > 10  # piece by piece, as generated
    name, arguments = assembled(chunks)
    assert (name, json.loads(arguments)) == ("remember", {"text": text})
    assert chunks[-1] == FinishChunk("tool_calls")


def test_every_piece_size_joins_into_the_same_arguments() -> None:
    raw = f'{CALL_OPEN} {{ "name" : "remember" , "arguments" : {{"text": "a}}b"}} }} {CALL_CLOSE}'
    for size in (1, 2, 5, 13, len(raw)):  # 1: the space after "arguments": comes alone
        chunks, _ = routed(raw, [REMEMBER, NOTE], size)
        name, arguments = assembled(chunks)
        assert (name, json.loads(arguments)) == ("remember", {"text": "a}b"}), size


def test_a_call_cut_off_keeps_its_raw_arguments() -> None:
    raw = f'{CALL_OPEN}{{"name": "remember", "arguments": {{"text": "I like cats. I like cats. I'
    chunks, _ = routed(raw, [REMEMBER, NOTE])
    name, arguments = assembled(chunks)
    assert name == "remember"
    assert arguments == '{"text": "I like cats. I like cats. I'  # not JSON: the model is told


def test_arguments_given_as_a_json_string_are_unwrapped() -> None:
    raw = f'{CALL_OPEN}{{"name": "remember", "arguments": "{{\\"text\\": \\"hi\\"}}"}}{CALL_CLOSE}'
    chunks, _ = routed(raw, [REMEMBER, NOTE])
    assert assembled(chunks) == ("remember", '{"text": "hi"}')


def test_prose_streams_as_text() -> None:
    chunks, before = routed("Porto is in Portugal.", [REMEMBER])
    assert "".join(c.text for c in chunks[:before] if isinstance(c, TextChunk)) == (
        "Porto is in Portugal."
    )
    assert chunks[-1] == FinishChunk("stop")
