"""Compact tool schemas: what a grammar-constrained server can compile, nothing lost that
the reply's validation needs."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from shiyi.llm.schema import compact_schema
from shiyi.memory.lifecycle.extraction import Extraction, extraction_tool


def test_the_extraction_schema_has_no_refs_and_no_bounds() -> None:
    text = json.dumps(extraction_tool().parameters)
    for word in ("$ref", "$defs", "maxLength", "minLength", "maximum", "minimum", "title"):
        assert word not in text, word
    facts = extraction_tool().parameters["properties"]["facts"]["items"]
    assert facts["required"] == ["key", "value", "confidence"]
    assert "preference" in facts["properties"]["kind"]["enum"]
    relation = extraction_tool().parameters["properties"]["relations"]["items"]
    assert set(relation["required"]) == {"from", "to", "type"}


def test_it_is_much_smaller_than_the_full_schema() -> None:
    full = json.dumps(Extraction.model_json_schema(by_alias=True))
    assert len(json.dumps(extraction_tool().parameters)) < 0.6 * len(full)


def test_the_bounds_still_hold_on_the_reply() -> None:
    too_long = {"facts": [{"key": "k", "value": "v" * 2001, "confidence": 0.9}]}
    with pytest.raises(ValueError, match="at most 2000 characters"):
        Extraction.model_validate(too_long)


class _Node(BaseModel):
    name: str
    children: list[_Node] = Field(default_factory=list)


def test_a_recursive_schema_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="recursive schema through '_Node'"):
        compact_schema(_Node.model_json_schema())
