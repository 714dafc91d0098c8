"""server.profiles: agent profiles the OpenAI-compatible endpoint serves as model names."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from shiyi.config.server_settings import ServerSettings


def test_a_profile_may_narrow_server_tools() -> None:
    server = ServerSettings.model_validate(
        {"profiles": {"notes": {"tools": ["query_memory"], "description": "memory only"}}}
    )
    assert server.profiles["notes"].tools == ["query_memory"]
    assert server.profiles["notes"].description == "memory only"


def test_a_profile_may_not_widen_server_tools() -> None:
    with pytest.raises(ValidationError, match=r"server.profiles.ops.tools names bash"):
        ServerSettings.model_validate({"profiles": {"ops": {"tools": ["bash", "grep"]}}})


def test_with_every_tool_allowed_any_profile_is_valid() -> None:
    server = ServerSettings.model_validate(
        {"tools": None, "profiles": {"ops": {"tools": ["bash"]}}}
    )
    assert server.profiles["ops"].tools == ["bash"]
