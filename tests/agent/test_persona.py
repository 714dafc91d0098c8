from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.agent.persona import default_persona, load_persona
from shiyi.config import Settings
from shiyi.config.loader import user_config_dir
from shiyi.errors import ConfigError


def test_default_persona_ships_with_the_package(settings: Settings) -> None:
    text = default_persona()
    assert text.startswith("You are shiyi")
    assert "language" in text
    assert load_persona(settings) == text


def test_user_persona_file_overrides_the_default(settings: Settings, tmp_path: Path) -> None:
    config_dir = user_config_dir()
    # The test conftest points XDG_CONFIG_HOME at a temporary directory.
    assert config_dir == tmp_path / "xdg-config" / "shiyi"
    config_dir.mkdir(parents=True)
    (config_dir / "persona.md").write_text("  你是十一。\n", encoding="utf-8")
    assert load_persona(settings) == "你是十一。"


def test_explicit_persona_file_wins(settings: Settings, tmp_path: Path) -> None:
    user_file = user_config_dir() / "persona.md"
    user_file.parent.mkdir(parents=True)
    user_file.write_text("user persona", encoding="utf-8")
    explicit = tmp_path / "mine.md"
    explicit.write_text("explicit persona\n", encoding="utf-8")
    settings.context.persona_file = explicit
    assert load_persona(settings) == "explicit persona"


def test_missing_persona_file_is_a_config_error(settings: Settings, tmp_path: Path) -> None:
    settings.context.persona_file = tmp_path / "nope.md"
    with pytest.raises(ConfigError, match=r"context\.persona_file.*nope\.md"):
        load_persona(settings)


def test_persona_file_that_is_a_directory(settings: Settings, tmp_path: Path) -> None:
    settings.context.persona_file = tmp_path
    with pytest.raises(ConfigError, match=r"context\.persona_file"):
        load_persona(settings)


def test_persona_file_that_is_not_utf8(settings: Settings, tmp_path: Path) -> None:
    bad = tmp_path / "latin1.md"
    bad.write_bytes(b"\xff\xfe caf\xe9")
    settings.context.persona_file = bad
    with pytest.raises(ConfigError, match="UTF-8"):
        load_persona(settings)
