"""``infer=True``: shiyi's extraction derives facts from the user's messages (here with the
scripted extraction model); the facts are mem0 memories like the messages."""

from __future__ import annotations

from pathlib import Path

from shiyi.compat.mem0 import Memory
from shiyi.config import load_settings
from shiyi.llm.scripted import ScriptedModel
from tests.memory.lifecycle.conftest import extraction, fact


def test_infer_extracts_facts_the_api_can_change(tmp_path: Path, memory_store: str) -> None:
    settings = load_settings(cwd=tmp_path, workspace=tmp_path)
    settings.memory.store = memory_store
    model = ScriptedModel(
        [
            extraction(
                facts=[fact("diet", "vegetarian", kind="preference"), fact("allergy", "nuts", 0.95)]
            )
        ]
    )
    with Memory(settings=settings, fast=model) as m:
        added = m.add(
            [
                {"role": "user", "content": "Hi, I'm Alex. I'm a vegetarian and allergic to nuts."},
                {"role": "assistant", "content": "Noted: vegetarian, no nuts."},
            ],
            user_id="alex",
        )["results"]
        facts = [r for r in added if r["memory"] in ("diet: vegetarian", "allergy: nuts")]
        assert [r["event"] for r in facts] == ["ADD", "ADD"]
        assert len(added) == 4  # the two messages are kept too

        found = m.search("What does Alex eat?", user_id="alex", limit=5)["results"]
        assert "diet: vegetarian" in [r["memory"] for r in found]
        assert m.search("allergy", user_id="someone-else")["results"] == []

        allergy = next(r["id"] for r in facts if r["memory"] == "allergy: nuts")
        m.update(allergy, "Allergic to nuts and shellfish")
        got = m.get(allergy)
        assert got is not None and got["memory"] == "Allergic to nuts and shellfish"
        hits = m.search("shellfish", user_id="alex", limit=1)["results"]
        assert [h["id"] for h in hits] == [allergy]
        assert [h["event"] for h in m.history(allergy)] == ["ADD", "UPDATE"]


def test_without_a_model_the_messages_are_kept(mem0: Memory) -> None:
    added = mem0.add("I'm a vegetarian", user_id="alex")["results"]
    assert [(r["memory"], r["event"]) for r in added] == [("I'm a vegetarian", "ADD")]
    assert mem0.search("vegetarian", user_id="alex")["results"][0]["id"] == added[0]["id"]
