"""The memories a run starts with, chosen by what the message asks for (seed 001, 3.3).

One keyword search (cheap: no embedding) finds the candidates; the message's intent
(:mod:`shiyi.memory.recall.intent`) then draws from them in its own order, each draw a kind of
memory and how many, and facts only when their confidence reaches the active threshold:
the seed wants one or two trusted memories in the hint, not any hit that shares a word.

* ``new_task``: a semantic fact (knowledge, decisions, conventions), then a procedure.
* ``follow_up``: an episodic memory (a past turn or run archive), then a fact, on the topic of the
  message *and* of the last turns, since a follow-up's own words are few ("and the tests?").
  This conversation's own messages stay out (the keep filter): the history holds them.
* ``bug_fix``: past turns and archives that look like a problem or its fix, on the error's
  words; documents come from the knowledge base (the agent adds them).
* ``preference``: the best-matching preference, then the newest short-term preference
  (what the user said lately wins over an older match).
* ``cross_agent``: shared (workspace) facts, then the named agent's procedures.

When no draw finds anything, the best keyword hits stand in (one per run, up to the limit,
as without an intent), so a question about something said before still gets its hint: a
later question's archive ("when is X? -> March 1") would otherwise crowd out the turn that
said it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shiyi.config.settings import MemorySettings
from shiyi.memory.models import FactRecord, MemoryHit
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.recall.intent import IntentKind, MessageIntent
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.echoes import asks_about_runs

Keep = Callable[[MemoryHit], bool]
KNOWLEDGE = ("semantic", "decision", "convention")
EPISODES = ("event", "episodic")
TURN_CHARS = 300
NEWEST_FACTS = 200
"""Newest facts read for the newest short-term preference (a short list: preferences
are few, and the newest is all that is wanted)."""
_PROBLEM = re.compile(
    r"\b(?:\w+error|\w+exception|traceback|bug|crash\w*|fail\w*|broken|fix(?:ed|es)?"
    r"|workaround|solved|resolved|root cause|regression)\b"
    r"|报错|错误|异常|崩溃|失败|修复|解决|原因",
    re.IGNORECASE,
)


@dataclass(slots=True, frozen=True)
class Draw:
    """Up to ``take`` candidates of these ``kinds`` (fact kinds, "event" for turns)."""

    kinds: tuple[str, ...]
    take: int = 1
    facts_trusted: bool = True
    """Facts only at or above the confidence threshold."""
    problems: bool = False
    """Only memories that look like a problem or its fix."""
    shared: bool = False
    """Only workspace-scoped (shared) facts."""


PLANS: dict[IntentKind, tuple[Draw, ...]] = {
    "new_task": (Draw(KNOWLEDGE), Draw(("procedural",))),
    "follow_up": (Draw(EPISODES), Draw((*KNOWLEDGE, "procedural", "preference"))),
    "bug_fix": (Draw(EPISODES, take=2, problems=True),),
    "preference": (Draw(("preference",)),),
    "cross_agent": (Draw((*KNOWLEDGE, "procedural", "preference"), shared=True),),
}


def kind_of(hit: MemoryHit) -> str:
    return (hit.fact_kind or "event") if hit.node == "fact" else "event"


def matches(hit: MemoryHit, draw: Draw, threshold: float) -> bool:
    if kind_of(hit) not in draw.kinds:
        return False
    if hit.node == "fact" and draw.facts_trusted and hit.confidence < threshold:
        return False
    if draw.shared and hit.scope != "workspace":
        return False
    return not draw.problems or bool(_PROBLEM.search(hit.text))


def draw(
    candidates: Sequence[MemoryHit], plan: Sequence[Draw], limit: int, threshold: float
) -> list[MemoryHit]:
    """The plan's picks from ``candidates`` (best first within each draw), up to ``limit``."""
    chosen: list[MemoryHit] = []
    for step in plan:
        picked = [h for h in candidates if h not in chosen and matches(h, step, threshold)]
        chosen += picked[: min(step.take, limit - len(chosen))]
        if len(chosen) >= limit:
            break
    return chosen


def query_for(intent: MessageIntent, message: str, previous: Sequence[str]) -> str:
    """A follow-up is searched with the last turns' words too (its own are few); their
    openings only, so a long reply does not drown the message's own words."""
    if intent.kind != "follow_up":
        return message
    return "\n".join([message, *(turn[:TURN_CHARS] for turn in previous[-2:])])


def newest_preference(
    store: MemoryStore, viewer: Viewer, keep: Keep, threshold: float
) -> MemoryHit | None:
    """The newest short-term preference ``viewer`` sees: the latest word on a taste."""
    facts = store.get_facts(store.fact_ids(NEWEST_FACTS))
    for fact in sorted(facts, key=lambda f: f.updated_at or f.created_at, reverse=True):
        if not (fact.kind == "preference" and fact.status == "active" and fact.tier == "short"):
            continue
        if fact.confidence < threshold or not viewer.sees_fact(fact):
            continue
        hit = fact_hit(fact)
        if keep(hit):
            return hit
    return None


def fact_hit(fact: FactRecord, path: str = "") -> MemoryHit:
    """A fact offered as a hint, as a search would offer it; ``path``: what found it."""
    return MemoryHit(
        paths={path: 1} if path else {},
        id=fact.id,
        node="fact",
        text=fact.text,
        ts=fact.updated_at or fact.created_at,
        fact_kind=fact.kind,
        confidence=fact.confidence,
        tier=fact.tier,
        scope=fact.scope,
    )


def agent_procedures(
    retriever: Retriever, query: str, viewer: Viewer, agent: str, keep: Keep, threshold: float
) -> list[MemoryHit]:
    """The procedures the named agent (of the same user) keeps for itself: how that agent
    does the work the message hands to it."""
    if not agent or agent == viewer.agent_id:
        return []
    other = Viewer(viewer.user_id, agent, viewer.workspace_id)
    hits = retriever.search(query, mode="keyword", kinds=["procedural"], touch=False, viewer=other)
    # the agent's own (agent scope): the user's procedures are in the main draw already
    return [h for h in hits if h.scope == "agent" and h.confidence >= threshold and keep(h)][:1]


@dataclass(frozen=True, slots=True)
class Asked:
    """A message to prefetch for: its intent, its text, the session's previous turns and
    which hits the caller keeps."""

    intent: MessageIntent
    message: str
    previous: Sequence[str]
    keep: Keep


def for_intent(
    retriever: Retriever, viewer: Viewer, asked: Asked, settings: MemorySettings
) -> list[MemoryHit]:
    """The memories ``asked``'s intent wants (:data:`PLANS`), up to the prefetch limit;
    the best keyword matches when none of them is there."""
    limit, threshold = settings.prefetch_limit, settings.lifecycle.active_threshold
    query = query_for(asked.intent, asked.message, asked.previous)
    found = retriever.search(
        query, mode="keyword", limit=settings.candidates, touch=False, viewer=viewer
    )
    candidates = offered(asked.message, found, asked.keep)
    chosen = draw(candidates, PLANS[asked.intent.kind], limit, threshold)
    if len(chosen) < limit:  # the second search costs ~5 ms: only for room left
        taken = {c.id for c in chosen}
        extra = _intent_extra(retriever, viewer, asked, query, threshold)
        chosen += [h for h in extra if h.id not in taken][: limit - len(chosen)]
    # Nothing the intent wants: the best matches, as without an intent.
    return chosen or candidates[:limit]


def _intent_extra(
    retriever: Retriever, viewer: Viewer, asked: Asked, query: str, threshold: float
) -> list[MemoryHit]:
    """What a preference or cross-agent message draws beyond the keyword matches."""
    if asked.intent.kind == "preference":
        newest = newest_preference(retriever.store, viewer, asked.keep, threshold)
        return [newest] if newest is not None else []
    if asked.intent.kind == "cross_agent":
        return agent_procedures(retriever, query, viewer, asked.intent.agent, asked.keep, threshold)
    return []


def offered(message: str, hits: Sequence[MemoryHit], keep: Keep) -> list[MemoryHit]:
    """The hits a hint may offer, best first: those ``keep`` keeps, one per run, and run
    archives only for a message about earlier runs (issue 30: each run's archive came back
    as the next run's hint, and a weak model's answers fed on its own earlier ones)."""
    runs = asks_about_runs(message)
    return one_per_run([h for h in hits if keep(h) and (runs or h.source != "archive")])


def one_per_run(hits: Sequence[MemoryHit]) -> list[MemoryHit]:
    """The best hit of each run: a run's archive and its messages say the same thing, and a
    hint has room for two memories."""
    seen: set[str] = set()
    kept: list[MemoryHit] = []
    for hit in hits:
        run = hit.anchor.run_id if hit.anchor is not None else ""
        if run in seen:
            continue
        if run:
            seen.add(run)
        kept.append(hit)
    return kept
