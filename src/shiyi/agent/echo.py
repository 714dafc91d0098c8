"""Echo: a reply that copies shiyi's own text (persona, notes, hints) instead of answering.

Tiny models do it a lot: SmolLM2-135M answered "Say hello" with the runtime's note "Do not
call a tool now: answer in plain text with what you have.", and the notes.txt task with the
"Already fetched" note.  Such a reply is no answer; remembered, it came back as the next
run's memory hint.  So the run loop checks every final answer against what shiyi wrote into
the request: a run of :data:`RUN_WORDS` consecutive words copied from it, which the user's
words and the tools' output do not also hold (a file's text is fair to repeat), is an echo.

Shiyi's text in a request: the system message (its opening "You are shiyi, a personal
assistant that ..." may come back in the first person: an assistant asked to say hello may
say who it is, and SmolLM2-135M answers "Say hello" with just that self-introduction), the
``<context>`` blocks framed into user and tool messages (but not the recalled memories of a
hint: quoting those is remembering), the notes the run loop or tool memory append to a tool
result (``[shiyi]`` and ``[from this session's tool memory ...]``), and what the runtime says
it adds itself (``prompt_notes`` on the model, when it has them).

The same check guards memory writes: a call that would store shiyi's text (``remember``'s
``text``, :data:`STORED_ARGUMENTS`) is not run, and its answer tells the model why
(:func:`echoed_calls`, :func:`refusal`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shiyi.context.builder import CONTEXT_CLOSE, CONTEXT_OPEN, MEMORY_HINT
from shiyi.context.plain import MEMORY_LABEL
from shiyi.llm.types import Message, ToolCall, ToolCallDelta, ToolSpec

RUN_WORDS = 6
"""Consecutive words a reply must share with shiyi's text to be an echo (the measure
:mod:`shiyi.memory.text.echoes` uses for quoted memories)."""

_WORD = re.compile(r"\w+")
_FRAMED = re.compile(re.escape(CONTEXT_OPEN) + r".*?" + re.escape(CONTEXT_CLOSE), re.S)
_TOOL_NOTE = re.compile(r"\n*\[(?:shiyi\]|from this session's tool memory).*", re.S)


@dataclass(slots=True, frozen=True)
class RequestText:
    """One request split by author: what shiyi wrote, and what the user or a tool did."""

    shiyi: tuple[str, ...]
    fair: tuple[str, ...]


def split_request(messages: Sequence[Message], notes: Iterable[str] = ()) -> RequestText:
    """``notes``: text the runtime adds to the prompt itself."""
    shiyi: list[str] = [note for note in notes if note]
    fair: list[str] = []
    for message in messages:
        if message.role == "system":
            # The plain layout's memories close its system message: quoting them is fine.
            notes_part, memories = _hint_split(message.content, MEMORY_LABEL)
            shiyi.append(notes_part)
            fair += [_self_introduction(notes_part), memories]
        elif message.role in ("user", "tool"):
            for block in _FRAMED.findall(message.content):
                notes_part, memories = _hint_split(block)
                shiyi.append(notes_part)
                fair.append(memories)
            rest = _FRAMED.sub(" ", message.content)
            if message.role == "tool":
                shiyi += _TOOL_NOTE.findall(rest)
                rest = _TOOL_NOTE.sub(" ", rest)
            fair.append(rest)
    return RequestText(tuple(shiyi), tuple(fair))


_IDENTITY = re.compile(r"\A\s*You are ([^\n.!?]*[.!?]?)")


def _self_introduction(system: str) -> str:
    """The system message's opening "You are X." as the assistant would say it ("I am X."):
    saying who it is is fair, repeating an instruction ("You are ... Answer briefly") is not."""
    match = _IDENTITY.match(system)
    return f"I am {match.group(1)}" if match else ""


def _hint_split(block: str, label: str = MEMORY_HINT) -> tuple[str, str]:
    """A run context block as (shiyi's notes, the recalled memories it ends with): a
    reply may quote what the user said before ("what did I tell you about X?")."""
    at = block.find(label)
    if at < 0:
        return block, ""
    end = at + len(label)
    return block[:end], block[end:]


def echoed(reply: str, request: RequestText, run_words: int = RUN_WORDS) -> str:
    """The longest run of the reply's words copied from shiyi's text ("" if none)."""
    words = _words(reply)
    if len(words) < run_words:
        return ""
    theirs = _grams(_words("\n".join(request.shiyi)), run_words)
    fair = _grams(_words("\n".join(request.fair)), run_words)
    copied = [tuple(words[i : i + run_words]) for i in range(len(words) - run_words + 1)]
    hits = [gram in theirs and gram not in fair for gram in copied]
    best_start, best_length, start = 0, 0, None
    for index, hit in enumerate([*hits, False]):
        if hit and start is None:
            start = index
        elif not hit and start is not None:
            if index - start > best_length:
                best_start, best_length = start, index - start
            start = None
    if not best_length:
        return ""
    return " ".join(words[best_start : best_start + best_length + run_words - 1])


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _grams(words: list[str], size: int) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


REPEATS = 3
"""A sentence said this many times in one reply ends it: a tiny model that starts repeating
itself goes on until the token cap (one reply ran 9+ minutes)."""
# The end mark is optional so that every match succeeds where it starts: with it required,
# a long text without one was scanned again from every position (116 s at 32k chars).
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]?")
_CLAUSE = re.compile(r"[^.!?\n,;:]+[.!?\n,;:]?")
_MIN_SENTENCE_WORDS = 3


def repeated_sentence(text: str, repeats: int = REPEATS, *, clauses: bool = False) -> str:
    """A finished sentence of 3+ words that ``text`` holds ``repeats`` times ("" if none).
    ``clauses``: a clause counts as well ("I am going to remember you, I will remember you,
    I will remember you, ..."): for a text that should be one sentence."""
    seen: dict[tuple[str, ...], int] = {}
    pattern, ends = (_CLAUSE, ".!?\n,;:") if clauses else (_SENTENCE, ".!?\n")
    for match in pattern.finditer(text):
        if match.group()[-1] not in ends:
            continue  # unfinished: the text ends mid-sentence
        words = tuple(_words(match.group()))
        if len(words) < _MIN_SENTENCE_WORDS:
            continue
        seen[words] = seen.get(words, 0) + 1
        if seen[words] >= repeats:
            return " ".join(words)
    return ""


STORED_ARGUMENTS: dict[str, tuple[str, ...]] = {"remember": ("text",)}
"""Tools whose arguments become memory, and which arguments: a tiny model forced to call a
tool copied the runtime's note ("You must call one of the tools now.") into ``remember``, and
the note was stored as a fact about the user."""


def tool_texts(specs: Iterable[ToolSpec]) -> list[str]:
    """What the offered tools say of themselves: descriptions and argument descriptions."""
    texts: list[str] = []
    for spec in specs:
        texts.append(spec.description)
        properties = spec.parameters.get("properties", {})
        if isinstance(properties, dict):
            texts += [
                str(prop.get("description", ""))
                for prop in properties.values()
                if isinstance(prop, dict)
            ]
    return [text for text in texts if text]


def echoed_calls(calls: Sequence[ToolCall], request: RequestText) -> dict[str, str]:
    """The calls that would store shiyi's own text as memory: call id -> the copied words."""
    found: dict[str, str] = {}
    for call in calls:
        stored = STORED_ARGUMENTS.get(call.name)
        if not stored:
            continue
        arguments = call.parsed_arguments() or {}
        values = [arguments.get(name) for name in stored]
        text = "\n".join(value for value in values if isinstance(value, str))
        if echo := echoed(text, request):
            found[call.id] = echo
    return found


class LoopingWrites:
    """Watches the streamed calls whose arguments become memory.  A sentence said three
    times in one is a model looping until its token cap (SmolLM2-135M repeated one about 70
    times in a ``remember`` call), so the stream may stop there: that saves the rest of the
    generation, from OpenAI-compatible servers and the embedded runtime alike (both stream
    a call's arguments).  Only these calls: a file's content may repeat a line."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}
        self._text: dict[int, str] = {}
        self.said: dict[int, str] = {}
        """Stream index of a looping call -> the sentence it repeated."""

    def add(self, chunk: ToolCallDelta) -> bool:
        """Whether the call ``chunk`` belongs to now repeats itself."""
        if chunk.name:
            self._names.setdefault(chunk.index, chunk.name)
        if self._names.get(chunk.index) not in STORED_ARGUMENTS or not chunk.arguments:
            return False
        text = self._text.get(chunk.index, "") + chunk.arguments
        self._text[chunk.index] = text
        if said := repeated_sentence(text, clauses=True):  # a memory is one sentence
            self.said[chunk.index] = said
        return bool(said)


def looping_refusal(said: str) -> str:
    return (
        f"nothing was stored: the text said one sentence over and over ({_shown(said)!r}) "
        "and was cut there. Remember the thing once, in one sentence"
    )


def refusal(echo: str) -> str:
    """The answer a refused call gets: what was wrong and what to do instead."""
    return (
        f"nothing was stored: the text copies shiyi's own instructions ({_shown(echo)!r}), "
        "not anything the user or a tool said. Remember only what the conversation says, "
        "in your own words, or answer without remembering"
    )


def _shown(echo: str) -> str:
    return echo if len(echo) <= 80 else echo[:79] + "…"


def echo_detail(echo: str) -> str:
    return (
        f"the reply repeated shiyi's own text ({_shown(echo)!r}) instead of answering; it stays in "
        "the session log, but memory does not take it for news and the run is not archived"
    )
