"""ToolCall.parsed_arguments: the one place a call's raw JSON text becomes an object."""

from __future__ import annotations

import pytest

from shiyi.llm.types import ToolCall


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"text": "Ana lives in Porto"}', {"text": "Ana lives in Porto"}),
        ("", {}),
        ("{}", {}),
        ('{"text": "cut off', None),
        ('["a list", "not an object"]', None),
        ("42", None),
        ("null", None),
    ],
)
def test_parsed_arguments_accepts_only_a_json_object(
    raw: str, expected: dict[str, object] | None
) -> None:
    assert ToolCall(id="c1", name="remember", arguments=raw).parsed_arguments() == expected
