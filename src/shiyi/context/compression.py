"""The three compression levels of the conversation history, as pure functions.

Level 1 trims old tool outputs, level 2 replaces old blocks by their summaries (computed in
the background by :mod:`shiyi.context.summaries`), level 3 keeps one digest plus the tail.
A tool call and its results are one *unit*: no function here ever separates them, because
OpenAI-compatible APIs reject a result without its call and vice versa.

Summaries are sent as ``user`` messages with a bracketed prefix: every OpenAI-compatible
server accepts a user message anywhere (consecutive user messages included), whereas a
``system`` message in mid-history is rejected by several chat templates (Qwen, llama.cpp),
and an ``assistant`` message would read as something the model itself said.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from shiyi.llm.tokens import TokenCounter
from shiyi.llm.types import Message

SUMMARY_PREFIX = "[summary of earlier conversation]"
DIGEST_PREFIX = "[session digest]"
_FIRST_LINE_CHARS = 80
_SENTENCE_CHARS = 240


def is_compressed(message: Message) -> bool:
    """A summary or digest message this module made (not a real user request)."""
    return message.role == "user" and message.content.startswith((SUMMARY_PREFIX, DIGEST_PREFIX))


def _unit_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes where a unit (a message plus the tool results that follow it) begins."""
    return [i for i, m in enumerate(messages) if m.role != "tool" or i == 0]


def _last_user_index(messages: Sequence[Message]) -> int | None:
    users = (i for i, m in enumerate(messages) if m.role == "user" and not is_compressed(m))
    return max(users, default=None)


def tail_start(messages: Sequence[Message], keep_last: int) -> int:
    """Start of the protected tail: the last ``keep_last`` messages, moved back so that it
    starts a unit and includes the newest user message."""
    start = max(0, len(messages) - keep_last)
    while 0 < start < len(messages) and messages[start].role == "tool":
        start -= 1
    newest_user = _last_user_index(messages)
    return start if newest_user is None else min(start, newest_user)


# --- level 1 ---------------------------------------------------------------------------


def trim_tool_outputs(
    messages: Sequence[Message], keep_last_n: int, counter: TokenCounter
) -> list[Message]:
    """Replace tool results older than the tail by a one-line note (only when shorter)."""
    protected = tail_start(messages, keep_last_n)
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    out = list(messages)
    for index in range(protected):
        message = messages[index]
        if message.role != "tool":
            continue
        name = message.name or names.get(message.tool_call_id or "", "tool")
        note = _trim_note(name, message.content)
        if counter.count(note) < counter.count(message.content):
            out[index] = replace(message, content=note)
    return out


def _trim_note(name: str, content: str) -> str:
    lines = content.splitlines() or [""]
    first = _fit(lines[0].strip(), _FIRST_LINE_CHARS)
    return f"[tool output trimmed: {name}, {len(lines)} lines; first line: {first}]"


# --- level 2 ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Block:
    """Consecutive whole units of old history, summarised together."""

    start: int
    messages: tuple[Message, ...]
    key: str

    @property
    def end(self) -> int:
        return self.start + len(self.messages)


def block_key(messages: Sequence[Message]) -> str:
    """sha256 of the block's roles, contents and tool calls: the summary cache key."""
    digest = hashlib.sha256()
    for m in messages:
        parts = [m.role, m.content, m.tool_call_id or ""]
        parts += [f"{c.id}\x1f{c.name}\x1f{c.arguments}" for c in m.tool_calls]
        digest.update("\x1e".join(parts).encode("utf-8", "surrogatepass") + b"\x1d")
    return digest.hexdigest()


def blocks_to_summarise(
    messages: Sequence[Message], block_size: int, keep_last: int
) -> list[Block]:
    """Full blocks of at least ``block_size`` messages before the protected tail.

    Blocks are cut greedily from the start at unit boundaries, so a block's content, and
    hence its key, does not change as the conversation grows; pass the raw (untrimmed)
    history so the keys stay stable.  Compressed messages are never summarised again.
    """
    limit = tail_start(messages, keep_last)
    starts = [*(s for s in _unit_starts(messages) if s < limit), limit]
    blocks: list[Block] = []
    begin = 0
    for boundary in starts[1:]:
        if any(is_compressed(m) for m in messages[begin:boundary]):
            begin = boundary  # a summary stays a boundary; never summarise a summary
            continue
        if boundary - begin >= block_size:
            chunk = tuple(messages[begin:boundary])
            blocks.append(Block(begin, chunk, block_key(chunk)))
            begin = boundary
    return blocks


def apply_summaries(
    messages: Sequence[Message],
    summaries: Mapping[str, str],
    block_size: int,
    keep_last: int,
) -> list[Message]:
    """Replace each block with a ready summary by one summary message; keep the others."""
    out: list[Message] = []
    position = 0
    for block in blocks_to_summarise(messages, block_size, keep_last):
        summary = summaries.get(block.key)
        if summary is None:
            continue  # not computed yet: the block stays raw this turn
        out.extend(messages[position : block.start])
        out.append(Message("user", f"{SUMMARY_PREFIX} {summary.strip()}"))
        position = block.end
    out.extend(messages[position:])
    return out


# --- level 3 ---------------------------------------------------------------------------


def digest_and_tail(messages: Sequence[Message], digest: str, keep_last: int) -> list[Message]:
    """One digest message plus the protected tail of the conversation."""
    tail = list(messages[tail_start(messages, keep_last) :])
    return [Message("user", f"{DIGEST_PREFIX}\n{digest.strip()}"), *tail]


# --- extractive fallbacks --------------------------------------------------------------

_DECISION = re.compile(
    r"\b(decided?|decision|agreed|chose|chosen|go with|settled on|will use)\b"
    r"|决定|确定|选择|采用|就用|定了|同意",
    re.IGNORECASE,
)
_TODO = re.compile(
    r"\b(todo|to-do|need to|needs to|must|should|next step|remember to|will|later)\b"
    r"|需要|待办|要做|下一步|记得|别忘|必须|之后|稍后",
    re.IGNORECASE,
)
_CONVENTION = re.compile(
    r"\b(always|never|prefer|convention|style|don't|do not|remember)\b"
    r"|总是|不要|别用|习惯|约定|规范|记住|偏好|喜欢",
    re.IGNORECASE,
)
_FACT = re.compile(
    r"\d|`[^`]+`|\b\w+\.\w{1,5}\b|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
    r"|(?<=[a-z,] )[A-Z][a-z]{2,}"
)
# ASCII stops need a following space, so "shiyi.toml" or "3.5" stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")
_SECTIONS = ("Decisions", "Todos", "Conventions", "Key facts")


def _sentences(text: str) -> list[str]:
    out = []
    for raw in _SENTENCE_END.split(text):
        sentence = raw.strip(" \t-*#>")
        if len(sentence) >= 4:
            out.append(sentence[:_SENTENCE_CHARS])
    return out


def _score(sentence: str) -> int:
    patterns = (_DECISION, _TODO, _CONVENTION)
    return 2 * sum(bool(p.search(sentence)) for p in patterns) + bool(_FACT.search(sentence))


def _talk(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.role in ("user", "assistant") and m.content.strip()]


def extractive_summary(messages: Sequence[Message], max_chars: int = 600) -> str:
    """A deterministic summary without a model: the first request, the sentences with
    decisions, todos, numbers and identifiers, the tools used and the last conclusion."""
    talk = _talk(messages)
    first = next((m for m in talk if m.role == "user"), None)
    last = next((m for m in reversed(talk) if m.role == "assistant"), None)
    parts = []
    if first is not None:
        parts.append("Asked: " + (_sentences(first.content) or [first.content[:200]])[0])
    tools = sorted({c.name for m in messages for c in m.tool_calls})
    if tools:
        parts.append("Tools: " + ", ".join(tools))
    if last is not None:
        parts.append("Outcome: " + (_sentences(last.content) or [last.content[:200]])[-1])
    room = max_chars - sum(len(p) + 1 for p in parts)
    skip = {id(first), id(last)}
    candidates = [s for m in talk if id(m) not in skip for s in _sentences(m.content)]
    points = _pick(candidates, room)
    if points:
        parts.insert(1, "Points: " + " ".join(points))
    return _fit("\n".join(parts), max_chars)


def _pick(sentences: list[str], room: int) -> list[str]:
    """The best-scoring sentences that fit ``room``, in their original order."""
    ranked = sorted(
        (i for i, s in enumerate(sentences) if _score(s) > 0),
        key=lambda i: (-_score(sentences[i]), i),
    )
    chosen: list[int] = []
    for index in ranked:
        cost = len(sentences[index]) + 1
        if cost <= room:
            chosen.append(index)
            room -= cost
    return [sentences[i] for i in sorted(chosen)]


def extractive_digest(messages: Sequence[Message], max_chars: int = 2000) -> str:
    """A deterministic session digest with Decisions / Todos / Conventions / Key facts.

    Items of an earlier digest in ``messages`` are carried over into the same sections.
    """
    sections: dict[str, list[str]] = {name: [] for name in _SECTIONS}
    for message in _talk(messages):
        if message.content.startswith(DIGEST_PREFIX):
            _carry_over(message.content, sections)
            continue
        for sentence in _sentences(message.content.removeprefix(SUMMARY_PREFIX)):
            section = _classify(sentence)
            if section is not None and sentence not in sections[section]:
                sections[section].append(sentence)
    share = max_chars // len(_SECTIONS)
    lines = []
    for name in _SECTIONS:
        items = _newest_that_fit(sections[name], share - len(name) - 4)
        if items:
            lines.append(f"## {name}")
            lines.extend(f"- {item}" for item in items)
    return _fit("\n".join(lines), max_chars)


def _classify(sentence: str) -> str | None:
    if _DECISION.search(sentence):
        return "Decisions"
    if _CONVENTION.search(sentence):
        return "Conventions"
    if _TODO.search(sentence):
        return "Todos"
    return "Key facts" if _FACT.search(sentence) else None


def _carry_over(digest: str, sections: dict[str, list[str]]) -> None:
    current: str | None = None
    for line in digest.splitlines():
        if line.startswith("## "):
            current = line[3:].strip() if line[3:].strip() in sections else None
        elif current is not None and line.startswith("- "):
            sections[current].append(line[2:].strip())


def _newest_that_fit(items: list[str], room: int) -> list[str]:
    # Newer items win: a later todo or decision usually supersedes an earlier one.
    kept: list[str] = []
    for item in reversed(items):
        if len(item) + 3 > room:
            break
        kept.append(item)
        room -= len(item) + 3
    return kept[::-1]


def _fit(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[: max(0, max_chars - 1)] + "…"
