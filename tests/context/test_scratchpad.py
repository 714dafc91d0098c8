from __future__ import annotations

import json

import pytest

from shiyi.context.scratchpad import MAX_RENDERED_DECISIONS, Scratchpad
from shiyi.errors import StorageError


def planned() -> Scratchpad:
    pad = Scratchpad()
    pad.from_plan("实现用户注册功能", ["设计数据库表", "实现 API", "编写测试"])
    return pad


def test_empty_renders_nothing() -> None:
    assert Scratchpad().render() == ""
    assert Scratchpad().is_empty()


def test_plan_progress_renders_marks() -> None:
    pad = planned()
    pad.step_started("设计数据库表")
    pad.step_completed("设计数据库表")
    pad.step_started("实现 API")
    pad.add_decision("使用 bcrypt 加密密码", "安全性最佳实践")
    assert pad.current_step == "实现 API"
    assert pad.completed == ["设计数据库表"]
    assert pad.render() == "\n".join(
        [
            "Scratchpad (your working notes for this task):",
            "Goal: 实现用户注册功能",
            "Steps:",
            "  [x] 设计数据库表",
            "  [>] 实现 API",
            "  [ ] 编写测试",
            "Decisions:",
            "  - 使用 bcrypt 加密密码 (安全性最佳实践)",
        ]
    )


def test_failed_step_becomes_a_blocker_until_it_succeeds() -> None:
    pad = planned()
    pad.step_started("实现 API")
    pad.step_failed("实现 API", "port 8000 in use")
    assert pad.current_step is None
    assert pad.blockers == ["step '实现 API' failed: port 8000 in use"]
    assert "  [!] 实现 API" in pad.render()
    pad.step_failed("实现 API", "")
    assert pad.blockers == ["step '实现 API' failed: no reason given"]
    pad.step_completed("实现 API")
    assert pad.blockers == []


def test_unplanned_steps_are_tracked() -> None:
    pad = Scratchpad()
    pad.step_started("look around")
    assert pad.sub_goals == ["look around"]
    assert "[>] look around" in pad.render()


def test_set_goal_starts_over_but_keeps_decisions() -> None:
    pad = planned()
    pad.step_completed("设计数据库表")
    pad.add_blocker("no database password")
    pad.add_decision("use SQLite", "no server needed")
    pad.set_goal("  now write the docs ")
    assert pad.current_goal == "now write the docs"
    assert (pad.sub_goals, pad.completed, pad.current_step, pad.blockers) == ([], [], None, [])
    assert [d.what for d in pad.decisions] == ["use SQLite"]


def test_from_plan_deduplicates_steps() -> None:
    pad = Scratchpad()
    pad.from_plan("g", ["a", "b", "a"])
    assert pad.sub_goals == ["a", "b"]


def test_decisions_update_in_place_and_render_only_the_latest() -> None:
    pad = Scratchpad()
    pad.add_decision("db", "first reason")
    pad.add_decision("db", "better reason")
    assert [(d.what, d.why) for d in pad.decisions] == [("db", "better reason")]
    for i in range(MAX_RENDERED_DECISIONS + 2):
        pad.add_decision(f"d{i}", "")
    rendered = pad.render()
    assert "db" not in rendered
    assert f"  - d{MAX_RENDERED_DECISIONS + 1}" in rendered


def test_blockers() -> None:
    pad = Scratchpad()
    pad.add_blocker("waiting for API key")
    pad.add_blocker("waiting for API key")
    assert pad.blockers == ["waiting for API key"]
    assert "Blocker: waiting for API key" in pad.render()
    assert pad.clear_blocker("waiting for API key")
    assert not pad.clear_blocker("waiting for API key")
    assert pad.render() == ""


def test_long_goal_is_clipped_in_the_prompt() -> None:
    pad = Scratchpad()
    pad.set_goal("x" * 1000)
    goal_line = pad.render().splitlines()[1]
    assert len(goal_line) < 220
    assert goal_line.endswith("…")
    assert pad.current_goal == "x" * 1000


def test_round_trip_through_json() -> None:
    pad = planned()
    pad.step_started("实现 API")
    pad.add_decision("使用 bcrypt 加密密码", "安全性最佳实践")
    pad.add_blocker("need a mail server")
    data = json.loads(json.dumps(pad.to_dict(), ensure_ascii=False))
    assert data["decisions"] == [{"what": "使用 bcrypt 加密密码", "why": "安全性最佳实践"}]
    restored = Scratchpad.from_dict(data)
    assert restored == pad
    assert restored.render() == pad.render()


def test_from_dict_tolerates_missing_and_unknown_keys() -> None:
    restored = Scratchpad.from_dict({"current_goal": "g", "added_later": 1})
    assert restored.current_goal == "g"
    assert restored.sub_goals == []


@pytest.mark.parametrize("data", [{"sub_goals": "not a list"}, [1, 2], {"decisions": [{}]}])
def test_from_dict_rejects_malformed_data(data: object) -> None:
    with pytest.raises(StorageError, match="scratchpad"):
        Scratchpad.from_dict(data)
