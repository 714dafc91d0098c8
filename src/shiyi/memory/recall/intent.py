"""What a user message is asking for, read without a model (seed 001 section 3.3).

The intent decides which kinds of memory the context builder prefetches for a run
(:mod:`shiyi.memory.recall.prefetch`):

==============  ====================================  =====================================
intent          drawn first                           then
==============  ====================================  =====================================
new_task        semantic facts (knowledge)            procedures (how such work was done)
follow_up       episodic memories (what happened)     facts, on the topic of the last turns
bug_fix         past problems and their fixes         documents (the knowledge base)
preference      preference facts                      the newest short-term preference
cross_agent     shared (workspace) facts              the named agent's procedures
==============  ====================================  =====================================

Rules over the words, English and Chinese, in priority order: another agent named (from
the configuration) or asked for; an error, a traceback or a failure; a stated preference;
a follow-up cue ("also", "还有", "why") or words shared with the session's last turns;
anything else is a new task.  Runs on every message, so it stays well under a millisecond:
patterns are compiled once and only the first :data:`SCAN_CHARS` characters are read.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from shiyi.index.text import query_terms

IntentKind: TypeAlias = Literal["new_task", "follow_up", "bug_fix", "preference", "cross_agent"]
INTENT_KINDS: tuple[IntentKind, ...] = (
    "new_task", "follow_up", "bug_fix", "preference", "cross_agent"
)  # fmt: skip
SCAN_CHARS = 2000
"""A pasted log is long; its first lines say what kind of message it is."""
OVERLAP = 0.5
"""Share of the message's terms the last turns already used that makes it a follow-up."""
SHORT = 8
"""Terms: a message this short leans on the conversation before it."""

_TRACEBACK = re.compile(
    r"traceback \(most recent call last\)|\b\w+(?:error|exception)\b|\berrno\b|\bpanic:"
    r"|\bsegmentation fault\b|\bstack ?trace\b|\bexit (?:code|status) [1-9]"
)
_FAILURE = re.compile(
    r"\b(?:bug|bugs|crash(?:es|ed|ing)?|broken|fails?|failing|failed|failure|error|errors"
    r"|regression|not working|doesn'?t work|does not work|won'?t (?:start|run|build)|fix)\b"
    r"|报错|错误|异常|崩溃|失败|出错|挂了|修复|修一下|不工作|跑不起来|不能用|有问题"
)
_PREFERENCE = re.compile(
    r"\bi(?:'d| would)? (?:really |much |also )?(?:prefer|like|love|hate|dislike|rather)\b"
    r"|\bmy (?:favou?rite|preference|preferred)\b|\bplease (?:always|never)\b"
    r"|\b(?:don'?t|do not|never) (?:use|write|give|add|call)\b|\bwhat do i (?:prefer|like)\b"
    r"|\bhow do i like\b|\bi want (?:you )?to always\b"
    r"|我(?:更|比较|很|最)?喜欢|我(?:的)?偏好|偏好|我讨厌|我习惯|不要|别用|以后都|总是用|我爱用"
)
_OTHER_AGENT = re.compile(
    r"\b(?:another|other|the \w+) agent\b|\bhand(?:ed)? (?:it |this )?(?:off|over) to\b"
    r"|其他\s*agent|另一个\s*agent|别的\s*agent|交给|转给"
)
_FOLLOW_UP = re.compile(
    r"^(?:also|and|then|but|so|plus|what about|how about|same|again|why|instead|ok(?:ay)?"
    r"|what else|and then|one more)\b"
    r"|^(?:还有|那|然后|再|另外|也|为什么|那么|继续|接着|同样|顺便|刚才)"
)
_TASK = re.compile(
    r"^(?:please )?(?:implement|create|add|write|build|set up|make|design|generate|refactor"
    r"|start|plan|draft|migrate)\b|^(?:请)?(?:实现|创建|添加|写|新建|设计|生成|重构|搭建|开发)"
)


@dataclass(slots=True, frozen=True)
class MessageIntent:
    """The verdict on one message: ``kind``, how sure the rule is, which rule fired and,
    for ``cross_agent``, the agent named (empty when the message names none)."""

    kind: IntentKind
    confidence: float
    reason: str
    agent: str = ""


def detect_intent(
    message: str, *, previous: Sequence[str] = (), agents: Collection[str] = ()
) -> MessageIntent:
    """The intent of ``message``; ``previous``: the session's last turns (newest last),
    ``agents``: the ids of the other agents this one works with (from the configuration)."""
    text = " ".join(message[:SCAN_CHARS].lower().split())
    named = _named_agent(text, agents)
    if named:
        return MessageIntent("cross_agent", 0.9, f"names agent {named!r}", named)
    if _TRACEBACK.search(text):
        return MessageIntent("bug_fix", 0.95, "an error or traceback")
    if _OTHER_AGENT.search(text):
        return MessageIntent("cross_agent", 0.7, "asks another agent")
    if _FAILURE.search(text):
        return MessageIntent("bug_fix", 0.75, "describes a failure")
    if _PREFERENCE.search(text):
        return MessageIntent("preference", 0.85, "states or asks a preference")
    follow = _follow_up(text, previous)
    if follow is not None:
        return follow
    if _TASK.search(text):
        return MessageIntent("new_task", 0.8, "asks for new work")
    return MessageIntent("new_task", 0.5, "no other intent's cue")


def _named_agent(text: str, agents: Collection[str]) -> str:
    for agent in agents:
        name = agent.strip().lower()
        if name and name != "*" and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            return agent
    return ""


def _follow_up(text: str, previous: Sequence[str]) -> MessageIntent | None:
    """A follow-up needs turns to follow: a cue word at the start, or the last turns'
    words (a short message, most of whose terms were just used)."""
    if not any(p.strip() for p in previous):
        return None
    if _FOLLOW_UP.search(text):
        return MessageIntent("follow_up", 0.8, "opens with a follow-up cue")
    terms = set(query_terms(text))
    if not terms:
        return None
    before = set(query_terms(" ".join(previous[-2:]).lower()))
    shared = len(terms & before) / len(terms)
    if shared >= OVERLAP or (len(terms) <= SHORT and shared >= OVERLAP / 2):
        return MessageIntent("follow_up", 0.6, f"{shared:.0%} of its terms were just used")
    return None


FAVOURED: dict[IntentKind, tuple[str, ...]] = {
    "new_task": ("semantic", "procedural"),
    "follow_up": ("episodic", "event"),
    "bug_fix": ("episodic", "event"),
    "preference": ("preference",),
    "cross_agent": ("convention", "decision", "procedural"),
}
"""The kinds of memory ``query_memory`` favours for a query of each intent ("event": a
turn of a past conversation)."""
SURE = 0.75
"""A query's intent steers ``query_memory`` only when a cue said so (the default guess,
a new task at 0.5, steers nothing)."""


def favoured_kinds(query: str) -> tuple[str, ...]:
    """The memory kinds a query's intent favours, when its cue is clear."""
    intent = detect_intent(query)
    return FAVOURED[intent.kind] if intent.confidence >= SURE else ()
