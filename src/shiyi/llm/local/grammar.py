"""The embedded model's text format: chat turns, tool prompt, grammar, reply parsing.

Small GGUF models have no tool-calling API, so tools are described in the system prompt and
a call is the text ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (the
Hermes/Qwen convention many small models saw in training).  A grammar (LLGuidance's Lark
dialect, which llama.cpp's server takes per request) makes the shape
certain instead of hoped for: the reply is either plain text whose first character is not
``<`` or whitespace, or exactly one call whose name is an offered tool and whose arguments
follow that tool's JSON schema.  Nothing here imports the llama.cpp runtime.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from shiyi.errors import ModelError
from shiyi.llm.types import (
    FinishChunk,
    Message,
    StreamChunk,
    TextChunk,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolSpec,
    Usage,
    UsageChunk,
)

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"

# Plain text may not start with "<" (that would be a call) nor with whitespace (which would
# let the model slip an unconstrained "<tool_call>" in after a leading space).
_TEXT_RULE = r"tc_text: /[^<\s][\s\S]*/"
_CALL_RULES = (
    r'tc_call: "<tool_call>" tc_ws "{" tc_ws "\"name\"" tc_ws ":" tc_ws tc_fn "}" tc_ws'
    ' "</tool_call>"\n'
    # At most one blank: unbounded optional whitespace is where tiny models get stuck.
    r"tc_ws: /[ \n]?/"
)
_INTEGER_BOUND = 10**16 - 1
_SEPARATORS = {"item_separator": ", ", "key_separator": ": "}
_NAME_RE = re.compile(r'"name"\s*:\s*"([^"\\]+)"')


def constrained_tools(tools: Sequence[ToolSpec], tool_choice: ToolChoice) -> list[ToolSpec]:
    """The tools the reply may call: none, all offered, or the one ``tool_choice`` names."""
    if not tools or tool_choice == "none":
        return []
    if tool_choice in ("auto", "required"):
        return list(tools)
    named = [spec for spec in tools if spec.name == tool_choice]
    if not named:
        offered = ", ".join(spec.name for spec in tools)
        raise ModelError(f"tool_choice names {tool_choice!r}, which is not offered ({offered}).")
    return named


def tool_prompt(tools: Sequence[ToolSpec]) -> str:
    """The system-prompt section that teaches the model the tools and the call format.

    The same for every request offering these tools, whatever ``tool_choice`` says (that
    goes in :func:`choice_note`), so it can stay cached.
    """
    lines = ["# Tools", "", "You can call these tools:"]
    for spec in tools:
        entry = {"name": spec.name, "description": spec.description, "parameters": spec.parameters}
        lines.append(json.dumps(entry, ensure_ascii=False))
    example = '{"name": "<tool name>", "arguments": {<arguments as a JSON object>}}'
    lines += ["", "To call a tool, reply with only:", f"{CALL_OPEN}{example}{CALL_CLOSE}"]
    return "\n".join(lines)


def choice_note(tool_choice: ToolChoice) -> str:
    """What this request allows, for the end of the last user turn."""
    if tool_choice == "auto":
        return "If no tool is needed, answer in plain text."
    if tool_choice == "required":
        return "You must call one of the tools now."
    if tool_choice == "none":
        return "Do not call a tool now: answer in plain text with what you have."
    return f"You must call the tool {tool_choice} now."


def prompt_notes() -> tuple[str, ...]:
    """Every sentence this format adds to a prompt by itself: tiny models copy them as their
    answer, so the agent's echo check (:mod:`shiyi.agent.echo`) must know them."""
    notes = [choice_note(choice) for choice in ("auto", "required", "none")]
    section = tool_prompt([]).splitlines()
    return (*notes, *(line for line in section if len(line.split()) >= 4))


def render_call(call: ToolCall) -> str:
    """An earlier call as the model would have written it (for the chat history)."""
    try:
        json.loads(call.arguments)
        arguments = call.arguments
    except ValueError:
        # Malformed arguments stay visible to the model as a string, not as broken JSON.
        arguments = json.dumps(call.arguments, ensure_ascii=False)
    name = json.dumps(call.name, ensure_ascii=False)
    return f'{CALL_OPEN}{{"name": {name}, "arguments": {arguments}}}{CALL_CLOSE}'


def template_messages(
    messages: Sequence[Message],
    tool_section: str,
    note: str = "",
    sent_notes: MutableMapping[str, str] | None = None,
) -> list[dict[str, str]]:
    """History in the plain system/user/assistant shape every chat template accepts.

    The system turn is the tool section, then the caller's system text; ``note`` (what this
    request allows) closes the last user turn, next to where the model answers, and so that
    the note changing between a forced call and an answer in words re-reads only that turn.
    ``sent_notes`` (user turn text -> the note it went out with) puts an earlier turn's note
    back, so the prompt repeats the one before and the KV cache keeps the reply after it;
    this request's note is added to it.
    """
    names = {call.id: call.name for message in messages for call in message.tool_calls}
    turns: list[dict[str, str]] = []
    for message in messages:
        role, content = _plain_turn(message, names)
        if turns and turns[-1]["role"] == role:
            # Many templates insist on alternating roles; tool results often come in a row.
            turns[-1]["content"] += "\n\n" + content
        else:
            turns.append({"role": role, "content": content})
    if sent_notes:
        for turn in turns[:-1]:
            if turn["role"] == "user" and (earlier := sent_notes.get(turn["content"])):
                turn["content"] += "\n\n" + earlier
    if note:
        if turns and turns[-1]["role"] == "user":
            if sent_notes is not None:
                _remember_note(sent_notes, turns[-1]["content"], note)
            turns[-1]["content"] += "\n\n" + note
        else:
            turns.append({"role": "user", "content": note})
    # The tool section goes first: it is the same on every request with the same tools, so
    # the KV cache (and the on-disk prompt cache) can keep it while the rest changes.
    if not tool_section:
        return turns
    if not turns or turns[0]["role"] != "system":
        turns.insert(0, {"role": "system", "content": ""})
    parts = (tool_section, turns[0]["content"])
    turns[0]["content"] = "\n\n".join(part for part in parts if part)
    return turns


SENT_NOTES_KEPT = 64
"""Notes remembered per model: far more turns than a context window holds."""


def _remember_note(sent_notes: MutableMapping[str, str], turn: str, note: str) -> None:
    sent_notes.pop(turn, None)
    sent_notes[turn] = note  # newest last: the oldest go first
    while len(sent_notes) > SENT_NOTES_KEPT:
        del sent_notes[next(iter(sent_notes))]


def _plain_turn(message: Message, names: dict[str, str]) -> tuple[str, str]:
    if message.role == "tool":
        # Small models never saw a "tool" role; a user turn with the result reads naturally.
        name = message.name or names.get(message.tool_call_id or "", "unknown")
        return "user", f"Tool {name} returned:\n{message.content}"
    if message.role == "assistant" and message.tool_calls:
        calls = "\n".join(render_call(call) for call in message.tool_calls)
        return "assistant", f"{message.content}\n{calls}" if message.content else calls
    return message.role, message.content


def grammar_text(
    tools: Sequence[ToolSpec], *, allow_text: bool, schemas: Mapping[str, bool] | None = None
) -> str:
    """An LLGuidance (Lark) grammar for "text or one call" (``allow_text``) or "one call".

    Each tool's arguments follow its JSON schema (compact JSON, no properties beyond the
    schema's) unless ``schemas`` marks the tool's schema unusable (False), or it is not an
    object schema: then any JSON object.  Every rule is shiyi's own, so only a schema can
    make the grammar invalid, and llama.cpp's LLGuidance sampler ignores an invalid grammar
    instead of failing: :func:`schema_probe` checks each schema first.
    """
    branches, rules = [], []
    for index, spec in enumerate(tools):
        usable = schemas is None or schemas.get(spec.name, True)
        name = _lark_literal(json.dumps(spec.name, ensure_ascii=False))
        branches.append(f"tc_fn_{index}")
        rules.append(
            f'tc_fn_{index}: {name} tc_ws "," tc_ws "\\"arguments\\"" tc_ws ":" tc_ws '
            f"%json {json.dumps(arguments_schema(spec, use_schema=usable))}"
        )
    if not branches:  # tool_choice "none": text that does not open with a call
        return "%llguidance {}\nstart: tc_text\n" + _TEXT_RULE + "\n"
    start = "start: tc_text | tc_call" if allow_text else "start: tc_call"
    parts = ["%llguidance {}", start, _CALL_RULES, "tc_fn: " + " | ".join(branches), *rules]
    if allow_text:
        parts.append(_TEXT_RULE)
    return "\n".join(parts) + "\n"


def arguments_schema(spec: ToolSpec, *, use_schema: bool = True) -> dict[str, Any]:
    """The JSON schema a call's arguments are generated by (LLGuidance's dialect)."""
    schema: dict[str, Any] = {"type": "object"}
    if use_schema and spec.parameters and spec.parameters.get("type", "object") == "object":
        schema = _closed(copy.deepcopy(spec.parameters))
    # One spacing, the prompt example's: unbounded optional whitespace is where tiny
    # models get stuck.
    schema["x-guidance"] = {"whitespace_flexible": False, **_SEPARATORS}
    return schema


def schema_probe(spec: ToolSpec) -> str:
    """A grammar that forces ``"Z"`` then ``spec``'s arguments: the first generated text
    starts with "Z" only if the grammar took effect (the probe of :func:`grammar_text`)."""
    return f'%llguidance {{}}\nstart: "Z" %json {json.dumps(arguments_schema(spec))}\n'


def _closed(schema: Any) -> Any:
    """``additionalProperties: false`` wherever an object schema leaves it unsaid, and at
    most 16 digits in an unbounded integer (what llama.cpp's GBNF converter did): a tiny
    model otherwise invents keys, or writes digits until max_tokens."""
    if isinstance(schema, dict):
        for value in schema.values():
            _closed(value)
        if "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
        if schema.get("type") == "integer":
            schema.setdefault("minimum", -_INTEGER_BOUND)
            schema.setdefault("maximum", _INTEGER_BOUND)
    elif isinstance(schema, list):
        for item in schema:
            _closed(item)
    return schema


def _lark_literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse_call(text: str, tools: Sequence[ToolSpec]) -> tuple[str, str]:
    """``(name, arguments JSON)`` of a generated call; never raises.

    When the text is not a well-formed call (cut off by max_tokens, say), the name is
    guessed and the raw text becomes the arguments, so the tool registry can tell the model
    its JSON was malformed.
    """
    body = text.strip().removeprefix(CALL_OPEN).removesuffix(CALL_CLOSE).strip()
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("name"), str):
        arguments = data.get("arguments", {})
        if isinstance(arguments, str):
            return data["name"], arguments
        return data["name"], json.dumps(arguments, ensure_ascii=False)
    match = _NAME_RE.search(body)
    fallback = tools[0].name if len(tools) == 1 else ""
    return (match.group(1) if match else fallback), body


# A call's head as the grammar writes it: the name, then its arguments.
_CALL_HEAD = re.compile(
    r"^\s*"
    + re.escape(CALL_OPEN)
    + r'\s*\{\s*"name"\s*:\s*"([^"\\]+)"\s*,\s*"arguments"\s*:\s*(?=\S)'
)  # (?=\S): where the arguments start, not a space still before them
# Held back while a call streams: its last characters may be the envelope's "}" and close.
_TAIL = len(CALL_CLOSE) + 12


class ReplyRouter:
    """Sorts generated text into streamed prose or one tool call, whose arguments stream as
    they are generated (as an OpenAI-compatible server streams them): a caller may stop a
    call that goes wrong mid-way (a model looping inside a ``remember`` call until its token
    cap) instead of waiting for all of it."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self._tools = tools
        self._mode = "undecided" if tools else "text"
        self._held: list[str] = []
        self._call_id = f"call_{secrets.token_hex(8)}"
        self._name = ""
        self._arguments_at = -1
        """Where the arguments start in the held text (-1: not yet known)."""
        self._sent = 0
        """How many characters of the arguments went out."""

    def feed(self, text: str) -> list[StreamChunk]:
        if self._mode == "text":
            return [TextChunk(text)]
        self._held.append(text)
        if self._mode == "call":
            return self._streamed_arguments()
        head = "".join(self._held).lstrip()
        if not head:
            return []
        # The grammar lets plain text start with anything but "<", so one char decides.
        if head.startswith(CALL_OPEN[0]):
            self._mode = "call"
            return self._streamed_arguments()
        self._mode = "text"
        held, self._held = "".join(self._held), []
        return [TextChunk(held)]

    def _streamed_arguments(self) -> list[StreamChunk]:
        held = "".join(self._held)
        chunks: list[StreamChunk] = []
        if self._arguments_at < 0:
            head = _CALL_HEAD.match(held)
            if head is None:
                return []
            self._name, self._arguments_at = head.group(1), head.end()
            chunks.append(ToolCallDelta(0, id=self._call_id, name=self._name))
        if not held.startswith("{", self._arguments_at):
            return chunks  # not an object (yet): parse_call makes sense of it at the end
        ready = len(held) - _TAIL
        if ready > self._arguments_at + self._sent:
            piece = held[self._arguments_at + self._sent : ready]
            self._sent += len(piece)
            chunks.append(ToolCallDelta(0, arguments=piece))
        return chunks

    def finish(self, prompt_tokens: int, completion_tokens: int, reason: str) -> list[StreamChunk]:
        """The rest of the call (if any), usage and the finish reason."""
        chunks: list[StreamChunk] = []
        if self._mode == "call":
            chunks += self._rest_of_call()
            reason = "tool_calls" if reason == "stop" else reason
        chunks.append(UsageChunk(Usage(prompt_tokens, completion_tokens, cost=0.0)))
        chunks.append(FinishChunk(reason))
        return chunks

    def _rest_of_call(self) -> list[StreamChunk]:
        held = "".join(self._held)
        name, arguments = parse_call(held, self._tools)
        if self._arguments_at < 0:  # nothing went out: the call whole
            return [ToolCallDelta(0, id=self._call_id, name=name, arguments=arguments)]
        if not self._sent:  # the name went out, none of the arguments
            return [ToolCallDelta(0, arguments=arguments)]
        raw = held[self._arguments_at :].rstrip()
        raw = raw.removesuffix(CALL_CLOSE).rstrip()
        sent = raw[: self._sent]
        if json_ok(arguments) and raw.endswith("}") and json_ok(raw[:-1]):
            raw = raw[:-1]  # the envelope's closing brace: the arguments are what it holds
        # What went out is a prefix of the raw arguments; the rest completes them as written.
        return [ToolCallDelta(0, arguments=raw[len(sent) :])] if len(raw) > len(sent) else []


def json_ok(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
