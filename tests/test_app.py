"""The composition root: one rule for the fast model, one filtered tool registry, one owner
of the shared parts, used alike by the CLI, the server and library users."""

from __future__ import annotations

import time

import pytest

from shiyi.app import App, build_models, open_knowledge
from shiyi.config import Settings
from shiyi.errors import ConfigError
from shiyi.interfaces.server.run import BackgroundServer
from shiyi.interfaces.server.service import AgentService
from shiyi.llm.gate import conversation
from shiyi.llm.local.model import LocalModel
from shiyi.llm.openai.model import OpenAICompatModel
from shiyi.llm.scripted import ScriptedModel
from shiyi.memory.service import Memory
from tests.conftest import AppOpener
from tests.support.fake_openai import FakeOpenAIServer

CLI_DEFAULT = {"read_file", "write_file", "edit_file", "list_dir", "grep", "bash", "web_search"}


def test_one_fast_model_serves_memory_summaries_and_routing(
    settings: Settings, fake_openai: FakeOpenAIServer, open_app: AppOpener
) -> None:
    settings.models["fast"] = fake_openai.model_settings()
    settings.routing.use_llm = True
    app = open_app(settings)
    fast = app.models.fast
    assert isinstance(fast, OpenAICompatModel)
    first, second = app.agent(), app.agent()
    assert first.router.model is fast and second.router.model is fast
    assert first.summarizer._model is fast
    assert app.memory is not None and app.memory.lifecycle._model() is fast
    assert fake_openai.requests == []  # built, not called


def test_routing_asks_the_fast_model_only_when_told_to(
    settings: Settings, fake_openai: FakeOpenAIServer, open_app: AppOpener
) -> None:
    settings.models["fast"] = fake_openai.model_settings()
    settings.memory.enabled = False
    app = open_app(settings)
    assert app.models.fast is not None
    assert app.agent().router.model is None


def test_the_tiny_local_model_is_never_the_fast_model(
    settings: Settings, open_app: AppOpener
) -> None:
    settings.routing.use_llm = True
    assert settings.model_role("fast").provider == "local"
    app = open_app(settings)
    agent = app.agent()
    assert app.models.fast is None and agent.router.model is None
    assert agent.summarizer._model is None
    assert app.memory is not None and not app.memory.lifecycle.model_ready()


def test_an_unusable_fast_model_is_logged_and_left_out(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    settings.models["fast"] = settings.model_role("main").model_copy(
        update={"provider": "openai_compat", "base_url": None}
    )
    models = build_models(settings, main=ScriptedModel())
    assert models.fast is None
    assert "models.fast.base_url is required" in caplog.text


def test_the_main_model_is_built_once_for_every_agent(
    settings: Settings, open_app: AppOpener
) -> None:
    settings.memory.enabled = False
    app = open_app(settings)
    assert app.agent().model is app.models.main is app.agent().model


def test_tools_enabled_filters_every_kind_of_tool(settings: Settings, open_app: AppOpener) -> None:
    settings.tools.enabled = ["read_file", "query_memory", "create_plan"]
    agent = open_app(settings).agent()
    assert sorted(agent.tools.names()) == ["create_plan", "query_memory", "read_file"]


def test_without_an_allow_list_every_tool_is_offered(
    settings: Settings, open_app: AppOpener
) -> None:
    names = set(open_app(settings).agent().tools.names())
    assert CLI_DEFAULT | {"query_memory", "expand_memory", "remember"} <= names
    assert {"create_plan", "update_plan", "repo_map"} <= names
    assert "search_knowledge" not in names  # no knowledge base in this data dir


def test_an_unknown_tool_name_says_which_setting_to_fix(
    settings: Settings, open_app: AppOpener
) -> None:
    settings.memory.enabled = False
    settings.tools.enabled = ["read_file", "telnet"]
    with pytest.raises(ConfigError, match=r"tools\.enabled names unknown tool\(s\): telnet"):
        open_app(settings).agent()


def test_the_server_allows_server_tools_not_tools_enabled(
    settings: Settings, open_app: AppOpener
) -> None:
    settings.tools.enabled = ["read_file"]  # the CLI's list; the server has its own
    app = open_app(settings)
    service = AgentService(settings, app=app)
    try:
        names = set(service.agent(app.log.create_session()).tools.names())
    finally:
        service.close()
    assert {"read_file", "grep", "query_memory", "create_plan", "write_file"} <= names
    assert "bash" not in names  # off unless server.tools lists it


def test_a_typo_in_server_tools_stops_the_server_with_the_fix(settings: Settings) -> None:
    settings.memory.enabled = False
    settings.server.tools = ["read_file", "bsah"]
    with pytest.raises(ConfigError, match=r"server\.tools names unknown tool\(s\): bsah"):
        AgentService(settings, model=ScriptedModel())


def test_a_chat_serves_its_own_parts_to_other_commands(settings: Settings) -> None:
    """``shiyi chat``'s background API uses the chat's app: the same model and memory, not a
    second store (which the lock would refuse)."""
    settings.memory.lock_timeout = 0
    with App.open(settings, model=ScriptedModel()) as app:
        api = BackgroundServer.start(app, port=0)
        try:
            assert api.address.startswith("http://127.0.0.1:")
            service = api.service
            assert service.memory is app.memory and service.model is app.models.main
        finally:
            api.stop()
        assert app.memory is not None and app.memory.worker.running  # the chat's, still open


def test_closing_the_app_closes_its_agents_and_frees_the_store(settings: Settings) -> None:
    settings.memory.lock_timeout = 0
    app = App.open(settings, model=ScriptedModel())
    agent = app.agent()
    session = agent.session_id
    app.close()
    assert agent.memory is None
    Memory.open(settings, start_worker=False).close()  # the lock is free
    with App.open(settings, model=ScriptedModel()) as again:
        assert again.agent(session).session_id == session


def test_the_knowledge_base_shares_the_memorys_embedder(
    settings: Settings, open_app: AppOpener
) -> None:
    open_knowledge(settings, embedder=None, fast=None).close()  # a knowledge base exists
    app = open_app(settings)
    assert [t.spec.name for t in app.knowledge_tools] == ["search_knowledge"]
    assert app.memory is not None
    kb = open_knowledge(settings, embedder=app.memory.embedder, fast=app.models.fast)
    try:
        assert kb.embedder is app.memory.embedder
    finally:
        kb.close()


def test_documents_are_summarised_only_by_a_fast_model_of_its_own(
    settings: Settings, fake_openai: FakeOpenAIServer
) -> None:
    """Unset, the fast role copies the main model: ``kb add`` summarising every section with
    it took ~10 minutes for one README on a local server; extractive summaries took 4 s."""
    settings.models["main"] = fake_openai.model_settings()
    settings.models["fast"] = fake_openai.model_settings()  # what an unset fast role becomes
    copied = open_knowledge(settings, embedder=None)
    try:
        assert copied.fast is not None  # query rewriting still uses it: one call per search
        assert copied.summary_model is None
    finally:
        copied.close()
    settings.models["fast"] = fake_openai.model_settings(model="small-fast")
    own = open_knowledge(settings, embedder=None)
    try:
        assert own.summary_model is not None and own.summary_model.model_name == "small-fast"
    finally:
        own.close()


def test_memory_work_waits_for_replies_computed_on_this_machine(
    settings: Settings, fake_openai: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server on loopback computes replies with the CPU the embedder would take; the work
    also waits a moment after a reply, for a next message that comes at once."""
    monkeypatch.setattr("shiyi.app.QUIET_AFTER_REPLY", 0.3)
    settings.models["main"] = fake_openai.model_settings()
    with App.open(settings) as app:
        assert app.memory is not None and app.memory.worker.running
        waits = app.memory.worker.hold_heavy_while
        assert waits is not None
        with conversation(app.models.main):
            assert waits()
        assert waits()
        time.sleep(0.4)
        assert not waits()


def test_memory_work_goes_on_while_a_hosted_model_replies(
    settings: Settings, fake_openai: FakeOpenAIServer
) -> None:
    settings.models["main"] = fake_openai.model_settings(base_url="https://api.openai.com/v1")
    with App.open(settings) as app:
        assert app.memory is not None and app.memory.worker.hold_heavy_while is None


def test_the_embedded_model_holds_memory_work_back_while_it_loads(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shiyi.app.QUIET_AFTER_REPLY", 0.0)  # earlier tests' runs ended
    with App.open(settings) as app:
        main = app.models.main
        assert isinstance(main, LocalModel) and app.memory is not None
        waits = app.memory.worker.hold_heavy_while
        assert waits is not None
        main.load()  # waits for the load App.open started
        deadline = time.monotonic() + 10
        while main.loading and time.monotonic() < deadline:  # the thread is finishing
            time.sleep(0.01)
        assert not waits()
        with conversation(main):
            assert waits()
