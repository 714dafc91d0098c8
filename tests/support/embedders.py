"""An embedder for tests: deterministic vectors, no model, and a record of what it embedded."""

from __future__ import annotations

import threading
from collections.abc import Sequence


class CountingEmbedder:
    """Deterministic fake: vector from the text's length and first character."""

    def __init__(self, model_id: str = "fake", dimension: int = 4) -> None:
        self._model_id = model_id
        self._dimension = dimension
        self.seen: list[str] = []
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        with self._lock:
            self.seen.extend(texts)
        return [self.vector(t) for t in texts]

    def vector(self, text: str) -> list[float]:
        head = float(ord(text[0])) if text else 0.0
        return [float(len(text)), head, 0.5, -0.25][: self._dimension] + [0.0] * max(
            0, self._dimension - 4
        )
