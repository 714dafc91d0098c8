"""The embedded model's text format: chat turns, tool prompt, GBNF grammar, reply parsing.

Small GGUF models have no tool-calling API, so tools are described in the system prompt and
a call is the text ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (the
Hermes/Qwen convention many small models saw in training).  A GBNF grammar makes the shape
certain instead of hoped for: the reply is either plain text whose first character is not
``<`` or whitespace, or exactly one call whose name is an offered tool and whose arguments
follow that tool's JSON schema.  Nothing here imports llama_cpp at module import time.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from collections.abc import MutableMapping, Sequence
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
_TEXT_RULES = r"""tc-text ::= [^<\x20\t\r\n] tc-any*
tc-any ::= [^\x00]"""
_CALL_RULES = (
    r'tc-call ::= "<tool_call>" tc-ws "{" tc-ws "\"name\"" tc-ws ":" tc-ws tc-fn "}" tc-ws'
    ' "</tool_call>"\n'
    # At most one blank: unbounded optional whitespace is where tiny models get stuck.
    r"tc-ws ::= [ \n]?"
)
_GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r"}
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


def grammar_text(tools: Sequence[ToolSpec], *, allow_text: bool, use_schemas: bool = True) -> str:
    """GBNF for "text or one call" (``allow_text``) or "one call" over ``tools``.

    With ``use_schemas`` each tool's arguments follow its JSON schema; otherwise (or when a
    schema cannot be converted) they are any JSON object.
    """
    converter = _schema_converter()
    branches = []
    for index, spec in enumerate(tools):
        args_rule = _arguments_rule(converter, spec, index, use_schemas)
        name = _gbnf_literal(json.dumps(spec.name, ensure_ascii=False))
        branches.append(f'{name} tc-ws "," tc-ws "\\"arguments\\"" tc-ws ":" tc-ws {args_rule}')
    if not branches:  # tool_choice "none": text that does not open with a call
        return "root ::= tc-text\n" + _TEXT_RULES + "\n"
    root = "root ::= tc-text | tc-call" if allow_text else "root ::= tc-call"
    parts = [root, _CALL_RULES, "tc-fn ::= " + " | ".join(f"( {b} )" for b in branches)]
    if allow_text:
        parts.append(_TEXT_RULES)
    parts.append(converter.format_grammar())
    return "\n".join(parts) + "\n"


def _schema_converter() -> Any:
    """llama-cpp-python's JSON-schema-to-GBNF converter (untyped upstream)."""
    from llama_cpp.llama_grammar import SchemaConverter

    factory: Any = SchemaConverter
    return factory(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def _arguments_rule(converter: Any, spec: ToolSpec, index: int, use_schemas: bool) -> str:
    name = f"tool-args-{index}"
    generic: dict[str, Any] = {"type": "object"}
    schema = spec.parameters if use_schemas and spec.parameters else generic
    if schema.get("type", "object") != "object":
        schema = generic
    try:
        # A dry run on a throwaway converter: a schema that fails half-way must not leave
        # dangling rules in the shared grammar.
        trial = _schema_converter()
        trial.visit(trial.resolve_refs(copy.deepcopy(schema), f"tool{index}"), name)
    except Exception:
        schema = generic
    # resolve_refs rewrites the schema in place, hence the copy.
    resolved = converter.resolve_refs(copy.deepcopy(schema), f"tool{index}")
    return str(converter.visit(resolved, name))


def _gbnf_literal(text: str) -> str:
    return '"' + "".join(_GBNF_ESCAPES.get(char, char) for char in text) + '"'


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


class ReplyRouter:
    """Sorts generated text into streamed prose or one buffered tool call."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self._tools = tools
        self._mode = "undecided" if tools else "text"
        self._held: list[str] = []

    def feed(self, text: str) -> list[StreamChunk]:
        if self._mode == "text":
            return [TextChunk(text)]
        self._held.append(text)
        if self._mode == "call":
            return []
        head = "".join(self._held).lstrip()
        if not head:
            return []
        # The grammar lets plain text start with anything but "<", so one char decides.
        if head.startswith(CALL_OPEN[0]):
            self._mode = "call"
            return []
        self._mode = "text"
        held, self._held = "".join(self._held), []
        return [TextChunk(held)]

    def finish(self, prompt_tokens: int, completion_tokens: int, reason: str) -> list[StreamChunk]:
        """The buffered call (if any), usage and the finish reason."""
        chunks: list[StreamChunk] = []
        if self._mode == "call":
            name, arguments = parse_call("".join(self._held), self._tools)
            call_id = f"call_{secrets.token_hex(8)}"
            chunks.append(ToolCallDelta(0, id=call_id, name=name, arguments=arguments))
            reason = "tool_calls" if reason == "stop" else reason
        chunks.append(UsageChunk(Usage(prompt_tokens, completion_tokens, cost=0.0)))
        chunks.append(FinishChunk(reason))
        return chunks
