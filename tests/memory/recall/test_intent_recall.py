"""``query_memory`` favours the kinds its query's intent wants (seed 001 section 3.3)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shiyi.config import load_settings
from shiyi.memory.recall.query_signals import understand
from shiyi.memory.service import Memory


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.embedder = "none"
    opened = Memory.open(settings, start_worker=False)
    yield opened
    opened.close()


def test_a_query_quoting_an_error_favours_past_problems(memory: Memory) -> None:
    # the same words, so only the kind tells them apart (semantic outranks episodic alone)
    memory.remember("export module KeyError crash: note alpha", kind="semantic")
    memory.remember("export module KeyError crash: run gamma", kind="episodic")
    hits = memory.search("the export module crashes with KeyError", mode="keyword")
    assert hits[0].fact_kind == "episodic"


def test_only_a_clear_cue_steers_the_kinds() -> None:
    assert "episodic" in understand("it fails with KeyError", 0.0).kinds
    assert understand("implement a CSV export", 0.0).kinds == ("semantic", "procedural")
    assert understand("Caroline's sister", 0.0).kinds == ()
    assert understand("how do I deploy?", 0.0).kinds == ("procedural",)  # its own intent
