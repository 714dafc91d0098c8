"""What the index toolkit hands back and what it needs: a scored id and an embedder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable


@dataclass(slots=True, frozen=True)
class Scored:
    """An id found by one recall path, with that path's score (higher is better)."""

    id: str
    score: float
    node: Literal["event", "fact"] | None = None
    """What the id is, when the path knows (the keyword index does); None: either."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float vectors of a fixed dimension."""

    @property
    def model_id(self) -> str:
        """Stable name of the model; stored with the vectors to refuse mixing models."""
        ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Blocking; call from a worker thread, never from the reply path."""
        ...
