"""The wire models of ``POST /v1/memory/import``: past conversations, sent in parts.

The client reads the file (``shiyi memory import`` parses JSONL or LoCoMo on the caller's
machine) and sends each conversation's turns in parts of at most ``MAX_TURNS``; the server
stamps them with the caller's identity and picks the names they are stored under.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_TURNS = 500
"""Turns per request: a LoCoMo conversation (~600 turns) takes two."""

_NAME = r"^[^\t\n\r\f\v ]+$"  # ids and run names: no whitespace (anchors split on it)


class ImportTurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200, pattern=_NAME)
    run: str = Field(
        min_length=1,
        max_length=100,
        pattern=_NAME,
        description="The turn's run within the session (a day, a part): the stored run is "
        "``<session_id>:<run>``, so a conversation's runs are its own.",
    )
    ts: float = Field(
        ge=0, lt=1e11, allow_inf_nan=False, description="When it was said, epoch seconds."
    )
    role: str = Field(min_length=1, max_length=100, description="The speaker, lower-cased.")
    content: str = Field(max_length=100_000)
    iteration: int = Field(default=0, ge=0, le=1_000_000)


class ImportIn(BaseModel):
    """A part of one conversation (every turn in the session ``session_id``)."""

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(min_length=1, max_length=200, pattern=_NAME)
    turns: list[ImportTurnIn] = Field(min_length=1, max_length=MAX_TURNS)


class ImportOut(BaseModel):
    session_id: str = Field(description="The session the turns are stored in.")
    renamed_from: str = Field(
        default="",
        description="The session's name in the request when another user's memory already "
        "used it (the turns' ids and runs carry the same tag).",
    )
    queued: int = Field(description="Turns queued; the worker embeds and links them next.")
