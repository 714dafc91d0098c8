"""Tool profiles: how much of the tool set a model is shown.

Every tool schema is prompt the model reads before each reply. The embedded SmolLM2-135M
read 3,092 prompt tokens (persona plus 14 schemas) before its first word, 45 s on two cores
with a portable llama.cpp build. The compact profile offers the core tools, each with the
first sentence of its description and only its required parameters, bare.  Optional ones
(line ranges, limits, modes) are what a tiny model fills with invented values: SmolLM2 asked
for lines 10-10 of a two-line file, four times.  A call with them is still accepted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from shiyi.llm.types import ToolSpec
from shiyi.tools.base import Tool, ToolContext

COMPACT_TOOLS = (
    "read_file", "write_file", "edit_file", "list_dir", "grep", "bash", "query_memory",
    "remember",
)  # fmt: skip
"""What a small model needs to do work and use its memory."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_DROPPED = frozenset({"description", "title", "default", "additionalProperties"})


class CompactTool:
    """``inner`` offered with a one-line description and bare parameters; it runs as is."""

    def __init__(self, inner: Tool) -> None:
        self.inner = inner
        spec = inner.spec
        parameters = _bare(_required_only(spec.parameters))
        self._spec = ToolSpec(spec.name, first_sentence(spec.description), parameters)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def sequential(self) -> bool:
        return self.inner.sequential

    @property
    def read_only(self) -> bool:
        return self.inner.read_only

    @property
    def timeout(self) -> float | None:
        return self.inner.timeout

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.inner.validate(arguments)

    async def invoke(self, arguments: dict[str, Any], ctx: ToolContext) -> str:
        return await self.inner.invoke(arguments, ctx)


def compact(tools: Sequence[Tool], named: Sequence[str] | None = None) -> list[Tool]:
    """The tools ``named`` (default: :data:`COMPACT_TOOLS`), shortened."""
    keep = set(COMPACT_TOOLS if named is None else named)
    return [CompactTool(t) for t in tools if t.spec.name in keep]


def first_sentence(text: str) -> str:
    line = " ".join(text.split())
    return _SENTENCE_END.split(line, maxsplit=1)[0]


def _required_only(schema: dict[str, Any]) -> dict[str, Any]:
    """The object schema with its required properties only."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return schema
    required = [name for name in schema.get("required", ()) if name in properties]
    kept = {name: properties[name] for name in required}
    return {**schema, "properties": kept, "required": required}


def _bare(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema without descriptions, titles, defaults and ``additionalProperties``, an
    optional value as its plain type (the arguments are still validated in full)."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        typed = [o for o in options if isinstance(o, dict) and o.get("type") != "null"]
        if len(typed) == 1 and len(options) == 2:
            return _bare(typed[0])
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _bare(field) for name, field in value.items()}
        elif isinstance(value, dict):
            out[key] = _bare(value)
        else:
            out[key] = value
    return out
