"""The OpenAI-compatible endpoint, driven by the official ``openai`` SDK against a real server."""

from __future__ import annotations

import re
import time
from typing import Any

import openai
import pytest
from pydantic import SecretStr

from shiyi.config.server_settings import AgentProfile
from shiyi.errors import ContextTooLong, ModelError
from shiyi.llm.scripted import ScriptedReply, ScriptedRequest, call, reply
from shiyi.llm.types import Usage
from tests.interfaces.server.conftest import Live, LiveFactory
from tests.interfaces.server.two_users import (
    A_TOKEN,
    B_TOKEN,
    MARK_A,
    brain,
    client_for,
    remembered_event,
    users,
)

TOKEN = "openai-token"
CONTEXT = re.compile(r"<context>.*?</context>", re.S)


def sdk(server: Live, token: str = TOKEN, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{server.url}/v1", api_key=token, max_retries=0, default_headers=headers
    )


def echo(request: ScriptedRequest) -> ScriptedReply:
    """Replies with what it was sent, so a test can see the conversation the agent built."""
    said = [
        CONTEXT.sub("", m.content).strip()
        for m in request.messages
        if m.role in ("user", "assistant")
    ]
    return ScriptedReply(text="seen: " + " | ".join(said), usage=Usage(20, 5))


@pytest.fixture
def server(live: LiveFactory) -> Live:
    return live(
        [echo],
        repeat_last=True,
        token=SecretStr(TOKEN),
        profiles={"notes": AgentProfile(description="memory only", tools=["query_memory"])},
    )


def user_turns(server: Live, session_id: str) -> list[str]:
    return [m.message.content for m in server.service.log.messages(session_id)]


def test_models_lists_the_default_agent_and_each_profile(server: Live) -> None:
    client = sdk(server)
    ids = [m.id for m in client.models.list()]
    assert ids == ["shiyi", "notes"]
    assert client.models.retrieve("notes").owned_by == "shiyi"
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("gpt-4o")
    assert caught.value.code == "model_not_found"


def test_a_completion_is_a_run_of_the_agent_with_usage(server: Live) -> None:
    done = sdk(server).chat.completions.create(
        model="shiyi", messages=[{"role": "user", "content": "hello agent"}]
    )
    assert done.object == "chat.completion"
    assert done.choices[0].message.role == "assistant"
    assert done.choices[0].message.content == "seen: hello agent"
    assert done.choices[0].finish_reason == "stop"
    assert done.usage is not None
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (20, 5)
    assert done.usage.total_tokens == 25
    # shiyi's agent built the prompt: its persona and tools went to the model, not a relay
    first = server.model.requests[0]
    assert first.messages[0].role == "system"
    assert "query_memory" in first.tool_names


def test_a_profile_runs_with_its_own_tools(server: Live) -> None:
    sdk(server).chat.completions.create(
        model="notes", messages=[{"role": "user", "content": "anything"}]
    )
    assert server.model.requests[-1].tool_names == ["query_memory"]


def test_streaming_sends_chunks_a_finish_reason_and_usage_last(server: Live) -> None:
    stream = sdk(server).chat.completions.create(
        model="shiyi",
        messages=[{"role": "user", "content": "stream please"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "seen: stream please"
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert reasons[-1] == "stop" and set(reasons[:-1]) == {None}
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 25
    assert all(c.usage is None for c in chunks[:-1])


def test_streaming_without_include_usage_sends_no_usage(server: Live) -> None:
    chunks = list(
        sdk(server).chat.completions.create(
            model="shiyi", messages=[{"role": "user", "content": "x"}], stream=True
        )
    )
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_the_agents_tool_calls_stay_inside_the_run(live: LiveFactory) -> None:
    def brain(request: ScriptedRequest) -> ScriptedReply:
        if request.last.role == "tool":
            return reply("I looked it up.")
        return reply("", call("query_memory", query="ada"))

    server = live([brain], repeat_last=True, token=SecretStr(TOKEN))
    client = sdk(server)
    done = client.chat.completions.create(
        model="shiyi", messages=[{"role": "user", "content": "what do you know about ada?"}]
    )
    message = done.choices[0].message
    assert message.content == "I looked it up."
    assert message.tool_calls is None
    chunks = list(
        client.chat.completions.create(
            model="shiyi", messages=[{"role": "user", "content": "and again?"}], stream=True
        )
    )
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "I looked it up."
    notes = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices
    )
    assert "query_memory" in notes
    assert all(c.choices[0].delta.tool_calls is None for c in chunks if c.choices)


def test_errors_come_back_as_the_sdks_exceptions(server: Live) -> None:
    with pytest.raises(openai.AuthenticationError) as denied:
        sdk(server, token="wrong").chat.completions.create(
            model="shiyi", messages=[{"role": "user", "content": "hi"}]
        )
    assert denied.value.status_code == 401
    assert denied.value.type == "authentication_error"
    client = sdk(server)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
    assert missing.value.param == "model" and "shiyi" in missing.value.message
    bad: list[dict[str, Any]] = [
        {"model": "shiyi", "messages": []},
        {"model": "shiyi", "messages": [{"role": "assistant", "content": "x"}]},
        {"model": "shiyi", "messages": [{"role": "user", "content": "x"}], "n": 2},
        {
            "model": "shiyi",
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        },
        {
            "model": "shiyi",
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "data:,"}}],
                }
            ],
        },
    ]
    params = []
    for body in bad:
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(**body)
        assert refused.value.type == "invalid_request_error"
        params.append(refused.value.param)
    assert params == ["messages", "messages", "n", "tools", "messages[0].content"]
    assert server.model.requests == []  # none of them reached the agent


def test_a_failed_run_is_a_server_error_streaming_or_not(live: LiveFactory) -> None:
    server = live([ModelError("upstream exploded")], repeat_last=True, token=SecretStr(TOKEN))
    client = sdk(server)
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="shiyi", messages=[{"role": "user", "content": "x"}])
    assert failed.value.status_code == 500
    assert "upstream exploded" in failed.value.message
    with pytest.raises(openai.APIError, match="upstream exploded"):
        list(
            client.chat.completions.create(
                model="shiyi", messages=[{"role": "user", "content": "y"}], stream=True
            )
        )


def test_a_busy_model_is_a_503(live: LiveFactory) -> None:
    busy = ModelError("rate limited", retryable=True, status=429)
    server = live([busy], repeat_last=True, token=SecretStr(TOKEN))
    with pytest.raises(openai.InternalServerError) as failed:
        sdk(server).chat.completions.create(
            model="shiyi", messages=[{"role": "user", "content": "x"}]
        )
    assert failed.value.status_code == 503


def test_a_prompt_too_long_for_the_model_is_the_callers_400_never_retried(
    live: LiveFactory,
) -> None:
    too_long = ContextTooLong(
        "The prompt has 20045 tokens but the local model's context holds 8192"
    )
    server = live([too_long], repeat_last=True, token=SecretStr(TOKEN))
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=TOKEN)  # the SDK's 2 retries
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="shiyi", messages=[{"role": "user", "content": "zebra " * 50}]
        )
    assert refused.value.status_code == 400
    assert refused.value.code == "context_length_exceeded"
    assert "20045 tokens" in refused.value.message
    assert len(server.model.requests) == 1  # a 500 had made the SDK send it three times
    with pytest.raises(openai.APIError, match="20045 tokens"):
        list(
            client.chat.completions.create(
                model="shiyi", messages=[{"role": "user", "content": "y"}], stream=True
            )
        )


def _ask(client: openai.OpenAI, messages: list[dict[str, str]], **extra: Any) -> tuple[str, str]:
    """(reply, session id) of one non-streaming call."""
    raw = client.chat.completions.with_raw_response.create(
        model="shiyi", messages=messages, **extra
    )  # type: ignore[call-overload]
    return raw.parse().choices[0].message.content or "", raw.headers["x-shiyi-session"]


def test_resending_the_history_continues_one_session_without_duplicates(server: Live) -> None:
    client = sdk(server)
    history = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "I am Ada"}]
    first, session = _ask(client, history)
    history += [{"role": "assistant", "content": first}, {"role": "user", "content": "Who am I?"}]
    second, again = _ask(client, history)
    assert again == session
    # the agent's own log supplied the history: each turn once
    assert second == f"seen: I am Ada | {first} | Who am I?"
    assert user_turns(server, session).count("I am Ada") == 1
    # streaming continues it too
    history += [{"role": "assistant", "content": second}, {"role": "user", "content": "Bye"}]
    raw = client.chat.completions.with_raw_response.create(
        model="shiyi",
        messages=history,  # type: ignore[arg-type]
        stream=True,
    )
    assert raw.headers["x-shiyi-session"] == session
    list(raw.parse())
    assert user_turns(server, session).count("Who am I?") == 1


def test_two_chats_with_the_same_opening_line_stay_apart(live: LiveFactory) -> None:
    replies = iter(["Hello, Ada.", "Hello, Bob."])
    server = live([lambda _: reply(next(replies, "ok"))], repeat_last=True, token=SecretStr(TOKEN))
    client = sdk(server)
    _, chat_a = _ask(client, [{"role": "user", "content": "hi"}])
    first_b, chat_b = _ask(client, [{"role": "user", "content": "hi"}])
    assert chat_a != chat_b
    _, later_b = _ask(
        client,
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": first_b},
            {"role": "user", "content": "more"},
        ],
    )
    assert later_b == chat_b


def test_the_session_header_and_the_user_field(server: Live) -> None:
    client = sdk(server)
    _, session = _ask(client, [{"role": "user", "content": "note one"}])
    pinned = sdk(server, **{"X-Shiyi-Session": session})
    _, same = _ask(pinned, [{"role": "user", "content": "note two"}])
    assert same == session
    assert user_turns(server, session)[::2] == ["note one", "note two"]
    with pytest.raises(openai.NotFoundError) as missing:
        _ask(sdk(server, **{"X-Shiyi-Session": "ses_nope"}), [{"role": "user", "content": "x"}])
    assert missing.value.code == "session_not_found"
    # the user field tells apart end users of one token with the same history
    opening = [
        {"role": "user", "content": "note one"},
        {"role": "assistant", "content": "seen: note one"},
        {"role": "user", "content": "next"},
    ]
    _, as_carol = _ask(client, opening, user="carol")
    assert as_carol != session


def test_a_history_begun_elsewhere_is_the_agents_history_not_new_turns(server: Live) -> None:
    history = [
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": "now this"},
    ]
    answer, session = _ask(sdk(server), history)
    assert answer == "seen: earlier question | earlier answer | now this"
    logged = server.service.log.messages(session)
    assert [(m.message.content, m.run_id) for m in logged[:2]] == [
        ("earlier question", None),
        ("earlier answer", None),
    ]  # outside any run: memory archives runs, not these
    assert logged[2].run_id is not None
    _, again = _ask(
        sdk(server),
        [*history, {"role": "assistant", "content": answer}, {"role": "user", "content": "x"}],
    )
    assert again == session


@pytest.fixture
def shared(live: LiveFactory) -> Live:
    return live([echo], repeat_last=True, users=users())


def test_two_users_never_share_a_session(shared: Live) -> None:
    alice, bob = sdk(shared, A_TOKEN), sdk(shared, B_TOKEN)
    reply_a, session_a = _ask(alice, [{"role": "user", "content": "secret of alice"}])
    history = [
        {"role": "user", "content": "secret of alice"},
        {"role": "assistant", "content": reply_a},
        {"role": "user", "content": "go on"},
    ]
    _, session_b = _ask(bob, history)  # the same history, resent by another user
    assert session_b != session_a
    assert shared.service.log.get_session(session_b).id == session_b
    with pytest.raises(openai.NotFoundError):
        _ask(sdk(shared, B_TOKEN, **{"X-Shiyi-Session": session_a}), history)
    assert user_turns(shared, session_a) == ["secret of alice", reply_a]


def test_a_resent_reply_with_its_reasoning_folded_in_still_matches(server: Live) -> None:
    client = sdk(server)
    first, session = _ask(client, [{"role": "user", "content": "plan my week"}])
    shown = (
        f'<details type="reasoning" done="true">\n[shiyi ran query_memory]\n</details>\n{first}  '
    )
    _, again = _ask(
        client,
        [
            {"role": "user", "content": "plan my week"},
            {"role": "assistant", "content": shown},
            {"role": "user", "content": "and the weekend?"},
        ],
    )
    assert again == session


def test_a_client_that_hangs_up_mid_stream_cancels_the_run(live: LiveFactory) -> None:
    slow = ScriptedReply(text="word " * 400, delay=0.02)
    server = live([slow], repeat_last=True, token=SecretStr(TOKEN))
    body = {"model": "shiyi", "stream": True, "messages": [{"role": "user", "content": "talk"}]}
    headers = {"authorization": f"Bearer {TOKEN}"}
    with server.client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as got:
        assert got.status_code == 200
        session = got.headers["x-shiyi-session"]
        for line in got.iter_lines():
            if '"content": "word' in line:
                break  # one piece of the reply, then hang up
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        runs = server.service.log.runs(session)
        if runs and runs[-1].status != "running":
            break
        time.sleep(0.05)
    assert [r.status for r in server.service.log.runs(session)] == ["cancelled"]


def test_an_image_earlier_in_the_chat_is_a_marker_not_a_refusal(server: Live) -> None:
    picture = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    history: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "look at this"}, picture]},
        {"role": "assistant", "content": "I cannot see images."},
        {"role": "user", "content": "fine, describe a cat"},
    ]
    answer = sdk(server).chat.completions.create(model="shiyi", messages=history)  # type: ignore[arg-type]
    said = answer.choices[0].message.content
    assert (
        said
        == "seen: look at this\n[shared image url] | I cannot see images. | fine, describe a cat"
    )


def test_one_users_memories_never_reach_anothers_agent(live: LiveFactory) -> None:
    server = live([brain], repeat_last=True, users=users())
    alice, bob = sdk(server, A_TOKEN), sdk(server, B_TOKEN)
    said = f"my locker code is {MARK_A}"
    alice.chat.completions.create(model="shiyi", messages=[{"role": "user", "content": said}])
    with client_for(server, A_TOKEN) as rest:
        remembered_event(rest, MARK_A)  # stored as alice's memory

    def seen_after(client: openai.OpenAI) -> str:
        before = len(server.model.requests)
        client.chat.completions.create(
            model="shiyi", messages=[{"role": "user", "content": "recall it please"}]
        )
        return " ".join(m.content for r in server.model.requests[before:] for m in r.messages)

    # (the scripted brain searches for MARK_A itself: the remembered words are what count)
    assert "locker" not in seen_after(bob)  # neither the memory hint nor query_memory
    assert "locker" in seen_after(alice)  # while alice's own agent finds it


def test_a_foreign_host_or_origin_is_refused_in_openais_shape(server: Live) -> None:
    rebinding = sdk(server, Host="attacker.example")
    with pytest.raises(openai.PermissionDeniedError) as refused:
        rebinding.models.list()
    assert refused.value.type == "permission_error"
    assert refused.value.code == "forbidden_host"
    page = sdk(server, Origin="https://evil.example")
    with pytest.raises(openai.PermissionDeniedError) as crossed:
        page.chat.completions.create(model="shiyi", messages=[{"role": "user", "content": "x"}])
    assert crossed.value.code == "cross_origin"
    assert server.model.requests == []


def test_a_history_over_the_body_limit_is_a_413_naming_the_setting(live: LiveFactory) -> None:
    server = live([echo], repeat_last=True, token=SecretStr(TOKEN), max_body_bytes=4096)
    long = [{"role": "user", "content": "x" * 5000}]
    with pytest.raises(openai.APIStatusError) as refused:
        sdk(server).chat.completions.create(model="shiyi", messages=long)  # type: ignore[arg-type]
    assert refused.value.status_code == 413
    assert refused.value.code == "payload_too_large"
    assert "server.max_body_bytes" in refused.value.message
