"""The wire models of ``/v1/scripts``: the saved script library (see the ``scripts`` tool)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ScriptParameterOut(BaseModel):
    name: str
    description: str = ""
    required: bool = True


class ScriptOut(BaseModel):
    name: str
    description: str
    language: Literal["bash", "sh", "python"]
    usage: str = Field(description="The name and parameters, optional ones bracketed.")
    parameters: list[ScriptParameterOut]
    created_at: float
    updated_at: float
    saved_by: str = Field(description="user_id/agent_id of the last save.")


class ScriptDetail(ScriptOut):
    body: str


class ScriptList(BaseModel):
    scripts: list[ScriptOut]


class ScriptDeleted(BaseModel):
    name: str
    forgotten: int = Field(description="Procedural memories of the script forgotten with it.")
