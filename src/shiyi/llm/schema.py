"""Tool schemas as small as a grammar-constrained server can compile.

llama.cpp-based servers turn a forced tool's JSON schema into a grammar.  Length and range
bounds become repetition rules (``maxLength: 2000`` alone is thousands of them) and ``$ref``
needs resolving: the extraction schema with both made llama-cpp-python fail to parse the
grammar and then crash.  The bounds still hold where they matter: the reply is validated
against the full pydantic model after it arrives.
"""

from __future__ import annotations

import copy
from typing import Any

_DROPPED = frozenset(
    {"maxLength", "minLength", "maximum", "minimum", "maxItems", "minItems", "title", "default"}
)


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with ``$defs`` inlined and bounds, titles and defaults dropped."""
    definitions = schema.get("$defs", {})

    def visit(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in seen:
                    raise ValueError(f"recursive schema through {name!r} cannot be inlined")
                return visit(copy.deepcopy(definitions[name]), (*seen, name))
            return {k: visit(v, seen) for k, v in node.items() if k not in _DROPPED | {"$defs"}}
        if isinstance(node, list):
            return [visit(item, seen) for item in node]
        return node

    result = visit(schema, ())
    assert isinstance(result, dict)
    return result
