"""Shared by the OpenAI-compatible client tests: a scripted server per test, and helpers
that read a model's stream."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.openai.model import OpenAICompatModel
from shiyi.llm.types import Message, StreamChunk
from tests.support.fake_openai import FakeOpenAIServer

HI = [Message("user", "hi")]


@pytest.fixture
def srv() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


class Sleeps:
    """Injected sleep: records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def collect(
    model: OpenAICompatModel, messages: Sequence[Message] = HI, **kwargs: Any
) -> list[StreamChunk]:
    return [chunk async for chunk in model.stream(messages, **kwargs)]


async def drain_into(seen: list[StreamChunk], model: OpenAICompatModel) -> None:
    """Like :func:`collect`, but keeps what arrived before an exception."""
    async for chunk in model.stream(HI):
        seen.append(chunk)


def assemble(chunks: Sequence[StreamChunk]) -> ReplyAssembler:
    assembler = ReplyAssembler()
    for chunk in chunks:
        assembler.add(chunk)
    return assembler


def model_for(
    srv: FakeOpenAIServer, sleeps: Sleeps | None = None, **overrides: Any
) -> OpenAICompatModel:
    return OpenAICompatModel(srv.model_settings(**overrides), sleep=sleeps or Sleeps())
