"""The wire shapes of ``/v1/knowledge``: documents, search passages and ingest reports."""

from __future__ import annotations

from pydantic import BaseModel, Field


class DocumentOut(BaseModel):
    id: str
    path: str = Field(description="Where the document was read from, on the server.")
    shown: str = Field(description="The path relative to the workspace when inside it.")
    title: str
    format: str
    sections: int
    chunks: int
    added_at: float
    bytes: int
    summary_method: str
    missing: bool = Field(description="The file is gone: re-indexing fails, remove it.")


class DocumentList(BaseModel):
    exists: bool = Field(description="False until the first document is added.")
    documents: list[DocumentOut]


class PassageOut(BaseModel):
    doc_id: str
    doc_path: str = Field(description="Relative to the workspace when inside it.")
    doc_title: str
    heading_path: str = Field(description="The section the chunk is in: titles joined by ›.")
    chunk: str = Field(description="The chunk that matched.")
    text: str = Field(description="The passage: the chunk widened to its section/neighbours.")
    score: float
    paths: dict[str, int] = Field(description="Recall path -> rank it found the chunk at.")
    expansion: str


class KnowledgeHits(BaseModel):
    passages: list[PassageOut]
    read_as: dict[str, str] = Field(
        default_factory=dict,
        description="The question's typing slips and the words they were searched as"
        ' ({"restroes": "restores"}); empty when it was searched as typed.',
    )


class PathIn(BaseModel):
    path: str = Field(
        min_length=1,
        max_length=4096,
        pattern=r"^[^\x00-\x1f]+$",
        description="A file or directory inside the server's workspace (relative to it).",
    )


class IngestFailure(BaseModel):
    path: str
    reason: str


class IngestOut(BaseModel):
    added: list[str]
    updated: list[str]
    unchanged: list[str]
    skipped: list[str]
    failed: list[IngestFailure]
    chunks: int
    sections: int
    seconds: float


class RemovedOut(BaseModel):
    removed: list[DocumentOut]
