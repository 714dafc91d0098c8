"""Message routing (seed 002): does a message join an active run or start a new one?

A cheap heuristic decides first: how similar the message is to each active run's goal (token
overlap, or the embedder's cosine when it is already loaded; a follow-up cue such as "also"
or "还有" counts as similar) and how recently the run last heard from the user.  Only an
ambiguous score asks the fast model, and only when ``routing.use_llm`` is on; its answer is
used when it is at least ``routing.llm_confidence`` sure.  Nothing here blocks the event
loop: embeddings run in a worker thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from shiyi.config.settings import RoutingSettings
from shiyi.errors import ModelError
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.protocol import ChatModel
from shiyi.llm.types import Message

log = logging.getLogger(__name__)

Embed = Callable[[list[str]], list[list[float]]]
Via = Literal["explicit", "heuristic", "model", "default"]

_WORD = re.compile(r"[a-z0-9_]+|[\u3400-\u9fff]+")
_STOPWORD_TEXT = (
    "a an and are as at be but by can could do does for from have how i in is it its me my "
    "no not of on or our please so than that the then this to too was we what when where "
    "which who why will with would you your also just now here there them they"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_CLASSIFY_PROMPT = (
    "You route a user's message in a chat with an AI agent that is working on the tasks "
    "below. Decide whether the message belongs to one of them (more information, a "
    "correction, a question about it, a change of how to do it) or is a new, separate "
    'request. Answer with JSON only: {"task": <the task number, or "new">, '
    '"confidence": <0.0 to 1.0>}.'
)


@dataclass(slots=True, frozen=True)
class Candidate:
    """An active run a message might belong to."""

    run_id: str
    text: str
    """The run's goal and the messages that already joined it."""
    last_input: float
    """``time.monotonic()`` of the run's start or its latest joined message."""


@dataclass(slots=True, frozen=True)
class Route:
    decision: Literal["join", "new"]
    run_id: str | None
    """The run to join (``None`` for a new run)."""
    reason: str
    via: Via
    score: float | None = None


class Router:
    def __init__(
        self,
        settings: RoutingSettings,
        *,
        model: ChatModel | None = None,
        embed: Callable[[], Embed | None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.model = model
        self._embed = embed
        self._clock = clock
        self._cues = [re.compile(p, re.IGNORECASE) for p in settings.join_cues]

    async def route(self, message: str, candidates: Sequence[Candidate]) -> Route:
        if not candidates:
            return Route("new", None, "no run is active", "default")
        scored = await self._scores(message, candidates)
        best, score, why = max(scored, key=lambda item: item[1])
        settings = self.settings
        if score >= settings.join_threshold:
            return Route("join", best.run_id, f"{why}: score {score:.2f}", "heuristic", score)
        if score < settings.new_threshold:
            reason = f"unrelated to every active run: best score {score:.2f} ({why})"
            return Route("new", None, reason, "heuristic", score)
        ambiguous = f"ambiguous: best score {score:.2f} ({why})"
        if settings.use_llm and self.model is not None:
            decided = await self._classify(message, candidates, score, ambiguous)
            if decided is not None:
                return decided
            ambiguous += "; the model was not sure enough"
        decision = settings.ambiguous
        return Route(
            decision,
            best.run_id if decision == "join" else None,
            f"{ambiguous}; routing.ambiguous is {decision!r}",
            "default",
            score,
        )

    # --- the heuristic -------------------------------------------------------------------

    async def _scores(
        self, message: str, candidates: Sequence[Candidate]
    ) -> list[tuple[Candidate, float, str]]:
        similarities = [token_similarity(message, c.text) for c in candidates]
        semantic = await self._cosines(message, candidates)
        cue = any(p.search(message.strip()) for p in self._cues)
        now = self._clock()
        weight = self.settings.similarity_weight
        out: list[tuple[Candidate, float, str]] = []
        for index, candidate in enumerate(candidates):
            similarity = max(similarities[index], semantic[index] if semantic else 0.0)
            why = f"similarity {similarity:.2f}"
            if cue and similarity < self.settings.cue_similarity:
                similarity = self.settings.cue_similarity
                why = "starts like a follow-up"
            age = max(0.0, now - candidate.last_input)
            recency = 0.5 ** (age / self.settings.recency_seconds)
            score = weight * similarity + (1 - weight) * recency
            out.append((candidate, score, f"{why}, last input {age:.0f} s ago"))
        return out

    async def _cosines(self, message: str, candidates: Sequence[Candidate]) -> list[float]:
        embed = self._embed()
        if embed is None:
            return []
        try:
            vectors = await asyncio.to_thread(embed, [message, *(c.text for c in candidates)])
        except Exception:  # routing must not fail because the embedder did
            log.warning("routing: embedding failed; using token overlap only", exc_info=True)
            return []
        first, rest = vectors[0], vectors[1:]
        return [max(0.0, cosine(first, other)) for other in rest]

    # --- the model -----------------------------------------------------------------------

    async def _classify(
        self, message: str, candidates: Sequence[Candidate], score: float, context: str
    ) -> Route | None:
        assert self.model is not None
        tasks = "\n".join(f"{i}. {_clip(c.text, 400)}" for i, c in enumerate(candidates, 1))
        prompt = [
            Message("system", _CLASSIFY_PROMPT),
            Message("user", f"Tasks:\n{tasks}\n\nMessage:\n{_clip(message, 1000)}"),
        ]
        try:
            text = await asyncio.wait_for(self._ask(prompt), self.settings.llm_timeout)
        except (ModelError, TimeoutError) as exc:
            log.warning("routing: the fast model did not answer (%s)", exc)
            return None
        answer = parse_answer(text, len(candidates))
        if answer is None:
            log.warning("routing: could not read the fast model's answer %r", text[:200])
            return None
        choice, confidence = answer
        if confidence < self.settings.llm_confidence:
            return None
        threshold = self.settings.llm_confidence
        sure = f"the fast model is {confidence:.2f} sure (>= {threshold}); {context}"
        if choice is None:
            return Route("new", None, f"a new request: {sure}", "model", score)
        target = candidates[choice]
        return Route("join", target.run_id, f"about task {choice + 1}: {sure}", "model", score)

    async def _ask(self, prompt: list[Message]) -> str:
        assert self.model is not None
        assembler = ReplyAssembler()
        async for chunk in self.model.stream(prompt, temperature=0.0, max_tokens=60):
            assembler.add(chunk)
        return assembler.message().content


def parse_answer(text: str, count: int) -> tuple[int | None, float] | None:
    """(candidate index or None for "new", confidence) from the model's JSON answer."""
    match = re.search(r"\{.*?\}", text, re.DOTALL)
    if match is None:
        return None
    try:
        data = json.loads(match.group(0))
        confidence = float(data.get("confidence", 0.0))
        task = data.get("task")
    except (ValueError, TypeError, AttributeError):
        return None
    if not 0.0 <= confidence <= 1.0:
        return None
    if isinstance(task, str) and task.strip().lower() == "new":
        return None, confidence
    try:
        index = int(task) - 1
    except (TypeError, ValueError):
        return None
    return (index, confidence) if 0 <= index < count else None


def tokens(text: str) -> set[str]:
    """Content words (Latin) and character bigrams (Chinese), lower-cased."""
    out: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if word[0] >= "\u3400":
            out.update(word[i : i + 2] for i in range(max(len(word) - 1, 1)))
        elif word not in _STOPWORDS and len(word) > 1:
            out.add(word[:-1] if word.endswith("s") and len(word) > 3 else word)
    return out


def token_similarity(message: str, goal: str) -> float:
    """Overlap coefficient: shared tokens over the smaller set (short follow-ups count)."""
    a, b = tokens(message), tokens(goal)
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _clip(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
