"""The RealMem protocol's baselines, online: BM25, MiniLM and RRF over earlier sessions only
(and RRF with one turn per session first, the order shiyi gives a user's memory).

Each turn is written ``"(<current_time>) <Speaker>: <text>"`` (``../shared/data/README.md``).
A query in session s ranks the turns of sessions before s: BM25 (``bm25s``, English stop
words) is re-indexed at every session that asks something, so its IDF is that of what memory
holds then; MiniLM vectors are computed once and masked to the earlier turns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Ranked = list[str]


@dataclass(frozen=True)
class Item:
    """One turn as the baselines see it: its id (``persona:session:index``) and text."""

    id: str
    text: str
    session: int
    """The position of its session in time order."""


class OnlineBaselines:
    """Ranks a query among the items of sessions before ``session``, three ways."""

    def __init__(self, items: Sequence[Item], embed: Callable[[list[str]], list[list[float]]]):
        self._items = list(items)
        self._embed = embed
        self._sessions = np.array([item.session for item in self._items])
        self._matrix = np.array(embed([item.text for item in self._items]), dtype=np.float32)
        self._bm25_for: int | None = None
        self._bm25: object | None = None

    def _visible(self, session: int) -> np.ndarray:
        return np.flatnonzero(self._sessions < session)

    def bm25(self, query: str, session: int, limit: int) -> Ranked:
        import bm25s

        visible = self._visible(session)
        if not len(visible):
            return []
        if self._bm25_for != session:
            index = bm25s.BM25()
            texts = [self._items[i].text for i in visible]
            corpus = bm25s.tokenize(texts, stopwords="en", show_progress=False)
            index.index(corpus, show_progress=False)
            self._bm25, self._bm25_for = index, session
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = self._bm25.retrieve(  # type: ignore[attr-defined]
            tokens, k=min(len(visible), limit), show_progress=False
        )
        return [self._items[visible[i]].id for i in docs[0]]

    def minilm(self, query: str, session: int, limit: int) -> Ranked:
        visible = self._visible(session)
        if not len(visible):
            return []
        vector = np.array(self._embed([query])[0], dtype=np.float32)
        scores = self._matrix[visible] @ vector
        return [self._items[visible[i]].id for i in np.argsort(-scores)[:limit]]

    def rrf(self, query: str, session: int, limit: int, k: int = 60) -> Ranked:
        scores: dict[str, float] = defaultdict(float)
        for ranked in (self.bm25(query, session, 50), self.minilm(query, session, 50)):
            for position, key in enumerate(ranked, start=1):
                scores[key] += 1 / (k + position)
        return sorted(scores, key=scores.__getitem__, reverse=True)[:limit]

    def rrf_one_per_session(self, query: str, session: int, limit: int) -> Ranked:
        """RRF, reordered as shiyi orders a user's memory: every session's best turn before
        any session's second (what that rule alone is worth, without shiyi's recall)."""
        ranked = self.rrf(query, session, 100)
        tiers: dict[str, int] = {}
        keyed = []
        for position, key in enumerate(ranked):
            owner = key.rsplit(":", 1)[0]
            keyed.append((tiers.get(owner, 0), position, key))
            tiers[owner] = tiers.get(owner, 0) + 1
        return [key for _, _, key in sorted(keyed)][:limit]
