from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shiyi.agent import Agent
from shiyi.app import App
from shiyi.config import Settings, load_settings
from shiyi.context.summaries import SummaryStore
from shiyi.events import Event
from shiyi.llm.protocol import ChatModel
from shiyi.llm.scripted import ScriptedModel, ScriptStep
from shiyi.sessions.log import SessionLog
from shiyi.tools import Tool, ToolRegistry
from tests.support.fake_openai import fake_openai  # noqa: F401  (a shared fixture)
from tests.support.postgres import (  # noqa: F401  (shared fixtures)
    local_postgres,
    postgres_server,
    postgres_url,
)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's config, keys or data directory."""
    keys = ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "TAVILY_API_KEY")
    for name in ("SHIYI_CONFIG", "SHIYI_PRESET", *keys):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SHIYI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    # Model servers running on this machine must not decide which model a test talks to;
    # the detection tests switch it back on with ports of their own servers.
    monkeypatch.setenv("SHIYI_MODEL_SOURCES__DETECT", "false")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def settings(workspace: Path) -> Settings:
    return load_settings(cwd=workspace, workspace=workspace)


class AgentFactory:
    """``make_agent(script, tools, **parts)``: an agent on a scripted model; ``agent(model,
    tools, **parts)`` one on any model.  Each agent gets a session log and a summary cache
    of its own, opened here and closed at the end of the test (an agent closes nothing);
    ``parts`` go to :class:`Agent` (``memory``, ``force_first_call``, ``session_id`` ...)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._opened: list[SessionLog | SummaryStore] = []

    def __call__(
        self, script: Iterable[ScriptStep], tools: Iterable[Tool] = (), **parts: Any
    ) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(script)
        return self.agent(model, tools, **parts), model

    def agent(
        self,
        model: ChatModel,
        tools: Iterable[Tool] = (),
        *,
        session_log: SessionLog | None = None,
        summaries: SummaryStore | None = None,
        **parts: Any,
    ) -> Agent:
        """``session_log`` and ``summaries`` given are the caller's to close."""
        if session_log is None:
            session_log = SessionLog(self.settings.sessions_db)
            self._opened.append(session_log)
        if summaries is None:
            summaries = SummaryStore(self.settings.data_dir / "summaries.sqlite3")
            self._opened.append(summaries)
        return Agent(
            model,
            settings=self.settings,
            tools=ToolRegistry(tools),
            session_log=session_log,
            summaries=summaries,
            **parts,
        )

    def close(self) -> None:
        for opened in self._opened:
            opened.close()


@pytest.fixture
def make_agent(settings: Settings) -> Iterator[AgentFactory]:
    factory = AgentFactory(settings)
    yield factory
    factory.close()


AppOpener = Callable[..., App]


@pytest.fixture
def open_app() -> Iterator[AppOpener]:
    """``open_app(settings, *script)``: an app on the scripted main model ``script`` (the
    composition root the CLI and the server use), closed at the end of the test."""
    opened: list[App] = []

    def open_(settings: Settings, *script: ScriptStep, **options: Any) -> App:
        app = App.open(settings, model=ScriptedModel(list(script)), **options)
        opened.append(app)
        return app

    yield open_
    for app in opened:
        app.close()


async def collect(stream: object) -> list[Event]:
    events: list[Event] = []
    async for event in stream:  # type: ignore[attr-defined]
        events.append(event)
    return events


def types_of(events: Iterable[Event]) -> list[str]:
    return [e.type for e in events]
