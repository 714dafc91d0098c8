"""A second client nobody here wrote: LangChain's ChatOpenAI against the endpoint."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from shiyi.llm.scripted import ScriptedReply, ScriptedRequest
from shiyi.llm.types import Usage
from tests.interfaces.server.conftest import LiveFactory

langchain_openai = pytest.importorskip("langchain_openai")
messages = pytest.importorskip("langchain_core.messages")

TOKEN = "langchain-token"


def count_turns(request: ScriptedRequest) -> ScriptedReply:
    users = sum(1 for m in request.messages if m.role == "user")
    return ScriptedReply(text=f"user turns seen: {users}", usage=Usage(30, 4))


def test_chat_openai_invokes_and_streams_shiyis_agent(live: LiveFactory) -> None:
    server = live([count_turns], repeat_last=True, token=SecretStr(TOKEN))
    chat = langchain_openai.ChatOpenAI(
        base_url=f"{server.url}/v1", api_key=TOKEN, model="shiyi", max_retries=0
    )
    first = chat.invoke("Hello from LangChain")
    assert first.content == "user turns seen: 1"
    assert first.usage_metadata is not None
    assert first.usage_metadata["input_tokens"] == 30
    assert first.usage_metadata["output_tokens"] == 4
    assert first.response_metadata["finish_reason"] == "stop"

    history = [
        messages.HumanMessage("Hello from LangChain"),
        messages.AIMessage(first.content),
        messages.HumanMessage("And now?"),
    ]
    pieces = list(chat.stream(history))
    assert "".join(str(p.content) for p in pieces) == "user turns seen: 2"  # one session
    assert [p.response_metadata.get("finish_reason") for p in pieces].count("stop") == 1


def test_chat_openai_sees_an_unknown_model_as_an_error(live: LiveFactory) -> None:
    import openai

    server = live([count_turns], repeat_last=True, token=SecretStr(TOKEN))
    chat = langchain_openai.ChatOpenAI(
        base_url=f"{server.url}/v1", api_key=TOKEN, model="gpt-4o", max_retries=0
    )
    with pytest.raises(openai.NotFoundError, match=r"does not exist"):
        chat.invoke("hi")
