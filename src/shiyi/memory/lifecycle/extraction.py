"""LLM extraction: the fast model reads the last few messages and returns entities,
relations and facts through one tool call, validated against a schema.

Invalid output is repaired once (the model is shown the validation error); a second failure
raises :class:`ExtractionFailed`, so the job fails visibly instead of silently writing nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shiyi.errors import EndpointBusy, ExtractionFailed, ModelError, ModelNotReady
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.protocol import ChatModel
from shiyi.llm.schema import compact_schema
from shiyi.llm.types import Message, ToolCall, ToolSpec

TOOL_NAME = "record_memories"
MAX_MESSAGE_CHARS = 2000
MAX_WINDOW_CHARS = 24_000
BUSY_RETRY = 10.0
"""Seconds before an extraction that gave way to a conversation tries again."""
"""About 6k tokens: a whole-session consolidation keeps its latest messages within this."""


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class ExtractedEntity(_Loose):
    name: str = Field(min_length=1, max_length=200)
    type: str = Field(default="concept", max_length=40)
    aliases: list[str] = Field(default_factory=list)


class ExtractedRelation(_Loose):
    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)
    type: str = Field(min_length=1, max_length=60)
    weight: float = Field(default=1.0, ge=0, le=1)


FactKindName = Literal[
    "preference", "semantic", "episodic", "procedural", "decision", "convention", "todo", "mood"
]


class ExtractedFact(_Loose):
    key: str = Field(min_length=1, max_length=120)
    value: str = Field(min_length=1, max_length=2000)
    kind: FactKindName = "semantic"
    scope: Literal["user", "agent", "workspace"] = "user"
    confidence: float = Field(ge=0, le=1)
    about: list[str] = Field(default_factory=list)
    when: str = ""
    trigger: str = ""
    steps: list[str] = Field(default_factory=list)

    @field_validator("key", "value")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()


class Extraction(_Loose):
    entities: list[ExtractedEntity] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)


EXTRACTION_PROMPT = """You maintain the long-term memory of an assistant. Read the conversation \
excerpt and call record_memories exactly once with what is worth remembering about the user, \
their work and the world they describe.

- entities: people, places, organisations, projects, tools, files (name as written, type, \
aliases such as nicknames or abbreviations).
- relations: directed links between entities ({from, to, type, weight 0-1}), e.g. works_at.
- facts: one per attribute. `key` names a single slot ("lives_in", "favourite_editor", \
"deadline of project X"); use the same key again when the value changes. `value` is the \
current value as a short phrase. `kind`: preference, semantic, episodic, procedural, decision, \
convention, todo or mood. `scope`: user (about this user), agent (how this assistant should \
work) or workspace (shared project knowledge). `about`: entity names the fact concerns. \
`when`: a date phrase if the fact happened at a time ("last Saturday", "2024-05-01"). \
Procedural facts also give `trigger` and ordered `steps`.
- confidence: 0.9+ stated plainly by the user, 0.6-0.75 implied or uncertain, lower: omit.
Only record what the messages say; known entities are listed for consistent naming. \
Return empty lists when nothing is worth remembering."""


def extraction_tool() -> ToolSpec:
    """The forced tool; its schema is compacted so grammar-constrained servers (llama.cpp)
    can compile it, and the reply is validated against :class:`Extraction` in full."""
    schema = compact_schema(Extraction.model_json_schema(by_alias=True))
    return ToolSpec(TOOL_NAME, "Record memories extracted from the conversation.", schema)


@dataclass(slots=True, frozen=True)
class WindowMessage:
    role: str
    text: str
    ts: float


def render_window(
    messages: Sequence[WindowMessage], known_entities: Sequence[str], *, extra: str = ""
) -> str:
    """The user turn the extraction model reads: timestamped messages and known entities."""
    lines = []
    for message in messages:
        when = datetime.fromtimestamp(message.ts, UTC).strftime("%Y-%m-%d %a %H:%M UTC")
        text = message.text
        if len(text) > MAX_MESSAGE_CHARS:
            text = text[:MAX_MESSAGE_CHARS] + "…"
        lines.append(f"[{when}] {message.role}: {text}")
    while len(lines) > 1 and sum(len(line) + 1 for line in lines) > MAX_WINDOW_CHARS:
        lines.pop(0)  # the oldest go first: the end of a session holds its conclusions
    known = ", ".join(known_entities) if known_entities else "(none yet)"
    tail = f"\n\n{extra}" if extra else ""
    return "Conversation:\n" + "\n".join(lines) + f"\n\nKnown entities: {known}{tail}"


async def extract(
    model: ChatModel,
    user_text: str,
    *,
    system_prompt: str = EXTRACTION_PROMPT,
    max_tokens: int = 1500,
) -> Extraction:
    """One extraction call, plus one repair call if the first output does not validate."""
    tool = extraction_tool()
    messages = [Message("system", system_prompt), Message("user", user_text)]
    reply = await _ask(model, messages, tool, max_tokens)
    try:
        return parse_reply(reply)
    except ExtractionFailed as first:
        repair = [
            *messages,
            reply,
            *_tool_results(reply, f"Invalid: {first}"),
            Message(
                "user",
                f"Your {TOOL_NAME} output was invalid: {first}. Call {TOOL_NAME} again with "
                "arguments that match its schema exactly.",
            ),
        ]
        second = await _ask(model, repair, tool, max_tokens)
        try:
            return parse_reply(second)
        except ExtractionFailed as again:
            raise ExtractionFailed(
                f"extraction output invalid after one repair: {again} (first error: {first})"
            ) from None


def parse_reply(reply: Message) -> Extraction:
    """The Extraction in a tool call (or, from models without tools, a JSON text reply)."""
    call = next((c for c in reply.tool_calls if c.name == TOOL_NAME), None)
    raw = call.arguments if call is not None else _json_in_text(reply.content)
    if raw is None:
        raise ExtractionFailed(f"the model did not call {TOOL_NAME} and returned no JSON")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ExtractionFailed(
            f"arguments are not valid JSON ({exc.msg} at char {exc.pos})"
        ) from None
    if not isinstance(data, dict):
        raise ExtractionFailed("arguments must be a JSON object with entities/relations/facts")
    try:
        return Extraction.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()[:5]
        )
        raise ExtractionFailed(problems) from None


def _json_in_text(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def _tool_results(reply: Message, text: str) -> list[Message]:
    # A tool call must be answered before the next user turn on OpenAI-style APIs.
    return [Message("tool", text, tool_call_id=c.id, name=c.name) for c in reply.tool_calls]


async def _ask(
    model: ChatModel, messages: Sequence[Message], tool: ToolSpec, max_tokens: int
) -> Message:
    assembler = ReplyAssembler()
    try:
        async for chunk in model.stream(
            messages, tools=[tool], tool_choice=TOOL_NAME, temperature=0.0, max_tokens=max_tokens
        ):
            assembler.add(chunk)
    except EndpointBusy as exc:  # a conversation has the endpoint: try again soon
        raise ModelNotReady(str(exc), retry_in=BUSY_RETRY) from exc
    except ModelError as exc:
        if exc.retryable or exc.status is None:
            raise ModelNotReady(f"extraction model {model.model_name} unavailable: {exc}") from exc
        raise ExtractionFailed(f"extraction model {model.model_name} refused: {exc}") from exc
    calls: tuple[ToolCall, ...] = assembler.tool_calls()
    return Message("assistant", "".join(assembler.text), tool_calls=calls)
