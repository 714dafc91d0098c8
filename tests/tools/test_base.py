from __future__ import annotations

import threading
from pathlib import Path
from typing import Literal

import pytest

from shiyi.config.settings import ToolSettings
from shiyi.errors import ToolArgumentsError
from shiyi.tools.base import FunctionTool, ToolContext, parse_docstring, tool


@tool(read_only=True, timeout=5)
def search_notes(
    query: str,
    ctx: ToolContext,
    limit: int = 10,
    tags: list[str] | None = None,
    order: Literal["newest", "oldest"] = "newest",
) -> str:
    """Search the notes.

    Longer explanation that is still part of the description.

    Args:
        query: Words to look for.
        limit: How many notes to return;
            at most 100.
        tags: Only notes with all of these tags.
        order: Sort order.

    Returns:
        The matching notes.
    """
    return f"{query}|{limit}|{tags}|{order}|{ctx.workspace.root.name}"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext.for_dir(tmp_path, ToolSettings())


def test_schema_types_required_and_defaults() -> None:
    params = search_notes.spec.parameters
    assert params["type"] == "object"
    assert params["required"] == ["query"]
    props = params["properties"]
    assert list(props) == ["query", "limit", "tags", "order"]
    assert props["query"]["type"] == "string"
    assert props["limit"] == {
        "type": "integer",
        "default": 10,
        "description": "How many notes to return; at most 100.",
    }
    assert {"type": "array", "items": {"type": "string"}} in props["tags"]["anyOf"]
    assert props["order"]["enum"] == ["newest", "oldest"]
    assert params["additionalProperties"] is False


def test_description_and_param_docs_come_from_the_docstring() -> None:
    spec = search_notes.spec
    assert spec.name == "search_notes"
    assert spec.description.startswith("Search the notes.\n\nLonger explanation")
    assert "Returns" not in spec.description
    assert spec.parameters["properties"]["query"]["description"] == "Words to look for."


def test_context_parameter_is_hidden() -> None:
    assert "ctx" not in search_notes.spec.parameters["properties"]
    assert "ctx" not in search_notes.spec.parameters["required"]


def test_no_titles_leak_into_the_schema() -> None:
    params = search_notes.spec.parameters
    assert "title" not in params
    assert all("title" not in prop for prop in params["properties"].values())


def test_decorator_options() -> None:
    assert search_notes.read_only
    assert not search_notes.sequential
    assert search_notes.timeout == 5

    @tool(name="renamed", description="Custom.", sequential=True)
    def original() -> str:
        """Ignored."""
        return ""

    assert original.spec.name == "renamed"
    assert original.spec.description == "Custom."
    assert original.sequential
    assert original.timeout is None


def test_bare_decorator_and_missing_docstring() -> None:
    @tool
    def bare(x: int) -> str:
        return str(x)

    assert isinstance(bare, FunctionTool)
    assert bare.spec.description == "bare"
    assert "description" not in bare.spec.parameters["properties"]["x"]


def test_validation_coerces_and_fills_defaults() -> None:
    assert search_notes.validate({"query": "q", "limit": "3"}) == {
        "query": "q",
        "limit": 3,
        "tags": None,
        "order": "newest",
    }


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "query: Field required"),
        ({"query": "q", "limit": "many"}, "limit: Input should be a valid integer"),
        ({"query": "q", "order": "random"}, "order: Input should be 'newest' or 'oldest'"),
        ({"query": "q", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"query": "q", "ctx": "sneaky"}, "ctx: Extra inputs are not permitted"),
    ],
)
def test_validation_errors_name_the_problem_and_the_parameters(
    arguments: dict[str, object], expected: str
) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        search_notes.validate(arguments)
    message = str(info.value)
    assert message.startswith("invalid arguments for search_notes: ")
    assert expected in message
    assert "Expected parameters: query, limit?, tags?, order?." in message


async def test_invoke_passes_the_context(ctx: ToolContext) -> None:
    result = await search_notes.invoke(search_notes.validate({"query": "q"}), ctx)
    assert result == f"q|10|None|newest|{ctx.workspace.root.name}"


async def test_sync_tools_run_off_the_event_loop(ctx: ToolContext) -> None:
    @tool
    def which_thread() -> str:
        return threading.current_thread().name

    assert await which_thread.invoke({}, ctx) != threading.current_thread().name


async def test_async_tools_and_non_string_results(ctx: ToolContext) -> None:
    @tool
    async def answer(ctx: ToolContext) -> int:
        return 42

    assert answer.spec.parameters["properties"] == {}
    assert await answer.invoke({}, ctx) == "42"


def test_parse_docstring_rest_style() -> None:
    description, params = parse_docstring(
        """Do a thing.

        :param first: The first one.
        :param second: The second one.
        """
    )
    assert description == "Do a thing."
    assert params == {"first": "The first one.", "second": "The second one."}


def test_parse_docstring_typed_google_args() -> None:
    _, params = parse_docstring(
        """Summary.

        Args:
            path (str): Where.
            depth (int, optional): How deep.
        """
    )
    assert params == {"path": "Where.", "depth": "How deep."}


def test_context_for_dir_uses_settings(tmp_path: Path) -> None:
    settings = ToolSettings(allow_outside_workspace=True)
    ctx = ToolContext.for_dir(tmp_path, settings)
    assert ctx.settings is settings
    assert ctx.workspace.allow_outside
    assert ctx.workspace.root == tmp_path.resolve()
