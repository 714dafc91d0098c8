"""Echoes: turns that only repeat what memory showed the model.  Kept, but not evidence.

A memory tool's call and result (``query_memory``, ``expand_memory``, ``remember``) and a
reply that quotes memories shown to the model in its run say nothing new: recalled again, they
crowded out the memories they repeat (a saved script's procedure ranked 3rd behind the
``query_memory`` call and result that had found it), extraction learned "facts" from the
model's echo, and a forget of the original left the text alive inside them (issue 30).

So such turns are marked when they are recorded (:attr:`EventRecord.derived`): they stay in
the session log and in memory, where ``expand`` and the session timeline show them, but recall
leaves them out (:mod:`shiyi.memory.recall.retriever`), extraction windows skip them (the stores'
``session_window``) and a forget takes the echoes of what it forgets with it
(:mod:`shiyi.memory.lifecycle.forget`).

Quoting is detected by overlap, per memory shown (one hint line, one line of a tool result):
a reply quotes a memory when the search terms both share (stemmed, stop words out; at least
:data:`MIN_SHARED`) make up :data:`SHARED_SHARE` of the shorter one's terms, or when it
repeats :data:`RUN_WORDS` consecutive words of it.  "You live in Berlin." quotes "I live in
Berlin near the old canal" (live, berlin: all of the reply's terms); "I don't know where you
live" does not (live alone).  The shorter side counts so that a partial quote ("You live in
Berlin.") and a tool result holding a memory among others are both echoes.  A reply marked
wrongly is still in the log and in ``expand``; only recall and extraction pass it by.
A forget takes the derived turns that quote what it forgets by the same measure.

Stores written before the mark existed derive it where the record says enough: a memory
tool's call or result starts with the tool's name (:func:`legacy_mark`); an old reply's
quoting cannot be told any more.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import lru_cache

from shiyi.index.text import stem_word, tokenize
from shiyi.memory.models import EventRecord

MEMORY_TOOL, QUOTES_MEMORY = "memory_tool", "quotes_memory"
"""Why a turn is derived: a memory tool's traffic, or a reply quoting memories."""
MEMORY_TOOLS = ("query_memory", "expand_memory", "remember")
SHARED_SHARE = 0.6
MIN_SHARED = 2
RUN_WORDS = 6
KEPT_RUNS = 64
"""Runs whose shown memories are kept (the running ones; older runs are long finished)."""
KEPT_TEXTS = 200
"""Memory texts kept per run (a run that queries memory a hundred times stops there)."""
_QUOTING = ("response", "reasoning")
# (?<!\s): from a run of spaces' first only, linear on long runs
_META_TAIL = re.compile(r"(?<!\s)\s*\((?:no longer true|unconfirmed|confidence)[^()]*\)\s*$")
_META_HEAD = re.compile(
    r"^\s*(?:- )?(?:\[[^\]]*\]\s*)?(?:(?:user|assistant|tool):\s+)?", re.IGNORECASE
)
_TAG = re.compile(r"^\s*</?[a-z_]+>\s*$")
_PAST_RUNS = re.compile(
    r"\b(?:last|previous|earlier|past|prior)\s+(?:runs?|times?|sessions?|tasks?|attempts?)\b"
    r"|\bwhat\s+did\s+(?:we|you|i)\s+(?:do|try|work|decide)\b|\bruns?\s+(?:history|archive)"
    r"|\bwhen\s+did\s+(?:we|you)\b|上次|之前",
    re.IGNORECASE,
)


def legacy_mark(segment_type: str, content: str) -> str:
    """The mark a record written before marks existed gets: a memory tool's traffic only."""
    if segment_type == "tool_call" and content.startswith(tuple(f"{t}(" for t in MEMORY_TOOLS)):
        return MEMORY_TOOL
    if segment_type == "tool_result" and content.startswith(
        tuple(f"{t} -> " for t in MEMORY_TOOLS)
    ):
        return MEMORY_TOOL
    return ""


def legacy_prefixes(segment_type: str) -> list[str]:
    """What :func:`legacy_mark` looks for, for a store's bulk ``starts with`` update."""
    sep = "(" if segment_type == "tool_call" else " -> "
    return [f"{tool}{sep}" for tool in MEMORY_TOOLS]


def shown_texts(text: str) -> list[str]:
    """The memories one tool result or hint shows: its lines without tags, ids and ages
    (a ``<memory>`` block of :func:`~shiyi.memory.recall.present.format_hits`, ``expand_memory``'s
    ``[anchor] role: text`` lines)."""
    body = text.split(" -> ", 1)[1] if " -> " in text.split("\n", 1)[0] else text
    found: list[str] = []
    for line in body.splitlines():
        if not line.strip() or _TAG.match(line):
            continue
        found.append(_META_TAIL.sub("", _META_HEAD.sub("", line)).strip())
    return [t for t in found if t]


@lru_cache(maxsize=4096)
def terms(text: str) -> frozenset[str]:
    """Search terms as stems (as the keyword index and a forget by query compare them);
    cached, since every reply of a run is compared with the same shown memories."""
    return frozenset(stem_word(term) for term in tokenize(text))


def quotes(reply: str, memory: str) -> bool:
    """Whether ``reply`` repeats ``memory`` (see the module's note for the measure)."""
    wanted, said = terms(memory), terms(reply)
    if not wanted or not said:
        return False
    shared = len(wanted & said)
    if shared >= MIN_SHARED and shared >= SHARED_SHARE * min(len(wanted), len(said)):
        return True
    return _shares_run(_words(reply), _words(memory))


def quotes_any(reply: str, memories: Iterable[str]) -> bool:
    return any(quotes(reply, memory) for memory in memories)


def asks_about_runs(message: str) -> bool:
    """Whether a message asks about earlier runs ("what did we do last time?"): only then
    are run archives offered as its hint."""
    return _PAST_RUNS.search(message) is not None


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _shares_run(reply: list[str], memory: list[str]) -> bool:
    if len(memory) < RUN_WORDS:
        return False
    runs = {tuple(memory[i : i + RUN_WORDS]) for i in range(len(memory) - RUN_WORDS + 1)}
    return any(tuple(reply[i : i + RUN_WORDS]) in runs for i in range(len(reply) - RUN_WORDS + 1))


class Echoes:
    """Per process, shared by every view of one memory: the memory texts shown to the model
    in each recent run (its hint, its memory tools' results), to mark the turns that quote
    them as they are recorded."""

    def __init__(self) -> None:
        self._shown: OrderedDict[str, list[str]] = OrderedDict()
        self._lock = threading.Lock()

    def show(self, run_id: str, texts: Sequence[str]) -> None:
        with self._lock:
            kept = self._shown.pop(run_id, [])
            kept = [*kept, *(t for t in texts if t.strip())][-KEPT_TEXTS:]
            self._shown[run_id] = kept
            while len(self._shown) > KEPT_RUNS:
                self._shown.popitem(last=False)

    def shown(self, run_id: str) -> list[str]:
        with self._lock:
            return list(self._shown.get(run_id, ()))

    def mark(self, events: Sequence[EventRecord]) -> None:
        """Set ``derived`` on the events of one recorded message, in order (a memory tool's
        result is shown before the reply that may quote it)."""
        for event in events:
            tool = legacy_mark(event.segment_type, event.content)
            if tool:
                event.derived = tool
                if event.segment_type == "tool_result":
                    self.show(event.run_id, shown_texts(event.content))
            elif event.segment_type in _QUOTING and quotes_any(
                event.content, self.shown(event.run_id)
            ):
                event.derived = QUOTES_MEMORY
