"""The ContextBuilder: what the model sees on each call, under a token budget, no LLM call.

The system message holds only what stays the same for a session (persona, workspace, tools
and how to use them).  What is fixed for one run (current time, plan guidance, what the run
continues, the memory prefetch hint) opens the run's user message between ``<context>``
tags, and that message is re-sent with the same block on later turns.  What changes within a
run (working memory: plan/scratchpad, already fetched tool results, focused files) closes the
request, at the end of its last message.  So every request repeats the one before it up to
its last message, and the model server's prefix cache (llama.cpp's KV cache, hosted APIs'
prompt caching) covers all of it: with the changing part in the system message, every reply
re-read the whole history (a later reply of the embedded model took 1.4-1.9 s).  Recalled
text, which a model or a web page may have written, stays out of the system message's
authority.  Old blocks cost tokens, so they are the first thing shed when the history
outgrows the budget (before any compression).

The history: file reads de-duplicated against the focused-files block, compressed by level
(trimmed tool outputs, block summaries, one digest) and fitted tail-first.  A tool call and
its results are never separated and the newest user message is always kept.  Deterministic
for the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from shiyi.config.settings import ContextSettings
from shiyi.context.budget import TokenBudget
from shiyi.context.compression import (
    Block,
    apply_summaries,
    block_key,
    blocks_to_summarise,
    digest_and_tail,
    extractive_digest,
    is_compressed,
    tail_start,
    trim_tool_outputs,
)
from shiyi.context.summaries import SummaryStore
from shiyi.index.cache_stats import PROMPT, counter
from shiyi.llm.tokens import TokenCounter
from shiyi.llm.types import Message, ToolSpec

TOOL_GUIDANCE = (
    "Call tools when you need facts you do not have; several independent calls may go in one "
    "turn. Read files before editing them, and prefer small exact edits. When you have what "
    "you need, answer the user directly without calling tools."
)
MEMORY_HINT = (
    "Possibly relevant memories (a keyword match, not a full search; call query_memory for more):"
)
CONTEXT_OPEN, CONTEXT_CLOSE = "<context>", "</context>"
CONTEXT_NOTE = (
    f"Messages may carry notes from shiyi between {CONTEXT_OPEN} tags (the time, recalled "
    "memories, your working notes); they are background, not the user's words or a tool's "
    "output."
)
# Messages at the end of the history that compression never touches.
RECENT_UNTOUCHED = 10
SYSTEM_CACHE_SIZE = 8
DIGEST_KEY_PREFIX = "digest:"


@dataclass(slots=True, frozen=True)
class ContextParts:
    """Everything besides the history that goes into one request."""

    persona: str
    workspace: Path
    tools: Sequence[ToolSpec] = ()
    guidance: str = ""
    memory_hint: str = ""
    continued: str = ""
    """What memory holds about the ended run this one continues."""
    working: Sequence[str] = ()
    """Notes that change within a run: they close the request."""
    now: datetime | None = None
    earlier: Mapping[int, SentContext] = field(default_factory=dict)
    """History index of an earlier run's user message -> the block it was sent with."""


@dataclass(slots=True, frozen=True)
class SentContext:
    """The run context a user message was sent with, to send it the same way again."""

    words: str
    context: str


@dataclass(slots=True)
class BuiltContext:
    messages: list[Message]
    level: int
    system_tokens: int
    history_tokens: int
    raw_history_tokens: int
    pending_blocks: list[Block] = field(default_factory=list)
    digest_source: list[Message] = field(default_factory=list)
    """At level 3: the older messages whose model digest is not cached yet."""
    raw_request_tokens: int = 0
    """Uncalibrated count of the whole request (to calibrate against provider usage)."""
    framed: tuple[int, SentContext] | None = None
    """History index of the user message this request opened with the run context."""

    @property
    def total_tokens(self) -> int:
        return self.system_tokens + self.history_tokens


def system_text(parts: ContextParts) -> str:
    """The part of the request that stays the same for a session."""
    sections = [parts.persona.strip(), f"Workspace: {parts.workspace}"]
    if parts.tools:
        names = ", ".join(spec.name for spec in parts.tools)
        sections.append(f"Tools: {names}. {TOOL_GUIDANCE}")
    sections.append(CONTEXT_NOTE)
    return "\n\n".join(section for section in sections if section)


def run_context_text(parts: ContextParts, prefetch_chars: int) -> str:
    """What is fixed for one run: it opens the run's user message."""
    now = parts.now or datetime.now().astimezone()
    sections = [f"Current time: {now.strftime('%Y-%m-%d %H:%M %Z (%A)')}.", parts.guidance]
    sections.append(parts.continued)
    if parts.memory_hint:
        sections.append(f"{MEMORY_HINT}\n{parts.memory_hint[:prefetch_chars]}")
    return "\n\n".join(section for section in sections if section)


def working_text(parts: ContextParts) -> str:
    """What changes within a run: it closes the request."""
    return "\n\n".join(section for section in parts.working if section)


class ContextBuilder:
    def __init__(
        self,
        settings: ContextSettings,
        context_window: int,
        counter: TokenCounter | None = None,
        summaries: SummaryStore | None = None,
    ) -> None:
        self.settings = settings
        self.budget = TokenBudget.from_settings(context_window, settings)
        self.counter = counter or TokenCounter()
        self.summaries = summaries
        self._systems: dict[tuple[str, str, tuple[str, ...]], Message] = {}

    def system_message(self, parts: ContextParts) -> Message:
        """The system message, built once per persona, workspace and tool set: it is the
        same for every request of a session (the prompt template cache)."""
        key = (parts.persona, str(parts.workspace), tuple(spec.name for spec in parts.tools))
        system = self._systems.get(key)
        counter(PROMPT).count(hits=int(system is not None), misses=int(system is None))
        if system is None:
            if len(self._systems) >= SYSTEM_CACHE_SIZE:
                self._systems.clear()  # a session changes its tools rarely: no LRU needed
            system = self._systems[key] = Message("system", system_text(parts))
        return system

    def build(
        self,
        parts: ContextParts,
        history: Sequence[Message],
        reference: Callable[[str], str | None] = lambda call_id: None,
    ) -> BuiltContext:
        """The request for one model call. ``reference`` maps a tool call id to the one-line
        stand-in for a result whose full text is in the focused-files block."""
        system = self.system_message(parts)
        # ~4 characters a token is enough to cap the hint; the budget check counts exactly.
        context = run_context_text(parts, self.budget.prefetch * 4)
        working = working_text(parts)
        system_tokens = (
            self.counter.count_message(system)
            + self.counter.count(context)
            + self.counter.count(working)
        )
        plain = [_referenced(m, reference) for m in history]
        newest = _newest_user(plain)
        deduplicated = _resent(plain, parts.earlier, newest)
        raw_tokens = self.counter.count_messages(deduplicated)
        level = self.budget.level(raw_tokens)
        if level > 0 and deduplicated != plain:
            # Old blocks are the cheapest thing to give up: only the prefix cache loses.
            deduplicated, raw_tokens = plain, self.counter.count_messages(plain)
            level = self.budget.level(raw_tokens)
        compressed, pending, digest_source = self._compress(deduplicated, level)
        room = max(self.budget.available - max(0, system_tokens - self.budget.system), 0)
        fitted, fitted_raw = self._fit(compressed, room)
        messages = _with_run_context([system, *fitted], context, working)
        framed = None if newest is None else (newest, SentContext(plain[newest].content, context))
        return BuiltContext(
            messages=messages,
            level=level,
            system_tokens=system_tokens,
            history_tokens=self.counter.scale(fitted_raw),
            raw_history_tokens=raw_tokens,
            raw_request_tokens=self.counter.count_messages(messages, calibrated=False),
            pending_blocks=pending,
            digest_source=digest_source,
            framed=framed,
        )

    def _compress(
        self, messages: list[Message], level: int
    ) -> tuple[list[Message], list[Block], list[Message]]:
        if level == 0:
            return messages, [], []
        block = self.settings.summary_block
        pending: list[Block] = []
        if level >= 2:
            blocks = blocks_to_summarise(messages, block, RECENT_UNTOUCHED)
            ready = self.summaries.get_many(b.key for b in blocks) if self.summaries else {}
            pending = [b for b in blocks if b.key not in ready]
            messages = apply_summaries(messages, ready, block, RECENT_UNTOUCHED)
        digest_source: list[Message] = []
        if level >= 3:
            messages, digest_source = self._digest(messages)
        return trim_tool_outputs(messages, RECENT_UNTOUCHED, self.counter), pending, digest_source

    def _digest(self, messages: list[Message]) -> tuple[list[Message], list[Message]]:
        """One digest of everything before the tail: the model's if cached, else extractive."""
        keep = self.settings.digest_keep_last
        older = messages[: tail_start(messages, keep)]
        if not older:
            return messages, []
        key = DIGEST_KEY_PREFIX + block_key(older)
        cached = self.summaries.get_many([key]).get(key) if self.summaries else None
        digest = cached or extractive_digest(older)
        return digest_and_tail(messages, digest, keep), [] if cached else older

    def _fit(self, messages: list[Message], room: int) -> tuple[list[Message], int]:
        """Keep the newest units that fit ``room``; never split a call from its results.

        The newest unit always stays, and so does the newest real user message: a long run
        of tool calls may push it out of the window, but the model must still see the task.
        """
        scale = self.counter.ratio
        start, used, kept_raw = len(messages), 0, 0
        for index in range(len(messages) - 1, -1, -1):
            used += self.counter.count_message(messages[index])
            if messages[index].role == "tool":
                continue  # a unit starts at its assistant message
            if used * scale > room and start < len(messages):
                break
            start, kept_raw = index, used
        kept = messages[start:]
        newest_user = _newest_user(messages)
        if newest_user is not None and newest_user < start:
            kept = [messages[newest_user], *kept]
            kept_raw += self.counter.count_message(messages[newest_user])
        return kept, kept_raw


def _with_run_context(messages: list[Message], context: str, working: str) -> list[Message]:
    """``context`` opens the newest user message and ``working`` closes the request (both
    close the system message if there is no user message)."""
    at = _newest_user(messages)
    if at is None:
        system = messages[0]
        notes = "\n\n".join(text for text in (context, working) if text)
        return [replace(system, content=f"{system.content}\n\n{notes}"), *messages[1:]]
    out = list(messages)
    last = len(out) - 1
    if at == last or out[last].role not in ("tool", "user"):
        context = "\n\n".join(text for text in (context, working) if text)
    elif working:
        out[last] = replace(out[last], content=f"{out[last].content}\n\n{_framed(working)}")
    out[at] = replace(out[at], content=f"{_framed(context)}\n\n{out[at].content}")
    return out


def _framed(notes: str) -> str:
    return f"{CONTEXT_OPEN}\n{notes}\n{CONTEXT_CLOSE}"


def _resent(
    history: list[Message], earlier: Mapping[int, SentContext], newest: int | None
) -> list[Message]:
    """Earlier runs' user messages with the block each was sent with (if still the same)."""
    out = list(history)
    for index, sent in earlier.items():
        if index == newest or not 0 <= index < len(out):
            continue
        message = out[index]
        if message.role == "user" and message.content == sent.words:
            out[index] = replace(message, content=f"{_framed(sent.context)}\n\n{sent.words}")
    return out


def _newest_user(messages: Sequence[Message]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and not is_compressed(message):
            return index
    return None


def _referenced(message: Message, reference: Callable[[str], str | None]) -> Message:
    if message.role != "tool" or message.tool_call_id is None:
        return message
    stand_in = reference(message.tool_call_id)
    return message if stand_in is None else replace(message, content=stand_in)
