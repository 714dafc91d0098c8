"""The recall settings in one place agree with each other and with what the retriever runs."""

from __future__ import annotations

from dataclasses import fields

import pytest

from shiyi.memory.recall.config import (
    DEFAULT_PATH_WEIGHTS,
    MODE_PATHS,
    MODES,
    Boosts,
    RerankWeights,
)
from shiyi.memory.recall.retriever import Retriever


def test_every_mode_has_its_paths_and_hybrid_runs_them_all() -> None:
    assert set(MODES) == set(MODE_PATHS)
    single = {path for mode, paths in MODE_PATHS.items() if mode != "hybrid" for path in paths}
    assert single == set(MODE_PATHS["hybrid"])
    assert (
        set(MODE_PATHS["hybrid"]) == set(RerankWeights().path_weights) == set(DEFAULT_PATH_WEIGHTS)
    )


def test_no_boosts_turns_every_boost_off() -> None:
    assert all(getattr(Boosts(), f.name) for f in fields(Boosts))
    assert not any(getattr(Boosts.none(), f.name) for f in fields(Boosts))


def test_an_unknown_mode_is_refused_naming_the_modes() -> None:
    retriever = Retriever(store=None, embedder=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="use one of hybrid, semantic, graph, recent, keyword"):
        retriever.search("anything", mode="fuzzy")  # type: ignore[arg-type]
