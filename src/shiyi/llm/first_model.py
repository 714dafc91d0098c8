"""Which main model a command uses when the user configured none, said in one line.

``shiyi chat``, ``run`` and ``serve`` call :func:`pick_main_model` before they build
anything.  Configured models (``models.main``, a preset, ``shiyi model use``) always win;
otherwise a chat model of a server already running here is used (see
:mod:`shiyi.llm.discovery`), else the embedded model.

A found server plays both roles, exactly as a user's own ``models.main`` without a
``models.fast`` does: the fast role's background work (extraction, summaries) is a
``background`` client of the same endpoint, which waits while a reply is in flight and
stops mid-answer to give the slot back (:mod:`shiyi.llm.gate`); the memory worker also holds
its heavy work while a loopback model replies (``App.open``).  So a reply is never cut or
queued behind extraction on the user's one-slot server.
"""

from __future__ import annotations

from dataclasses import dataclass

from shiyi.config.settings import ModelSettings, Settings
from shiyi.llm.discovery import Choice, choose, find_servers, printable


@dataclass(frozen=True, slots=True)
class MainModel:
    """The settings to build from, and the line telling the user which model that is (None
    when the user configured the model themselves)."""

    settings: Settings
    note: str | None


def pick_main_model(settings: Settings) -> MainModel:
    sources = settings.model_sources
    if sources.main_configured:
        return MainModel(settings, None)
    if sources.detect:
        choice = choose(find_servers(sources.detect_ports, sources.detect_timeout, first=True))
        if choice is not None:
            return MainModel(with_server(settings, choice), found_note(choice))
    return MainModel(settings, embedded_note(settings))


def with_server(settings: Settings, choice: Choice) -> Settings:
    """``settings`` with the main role, and the fast one unless configured, on the chosen
    server's model."""
    role = ModelSettings(
        provider="openai_compat", base_url=choice.server.base_url, model=choice.model
    )
    fast = settings.models["fast"] if settings.model_sources.fast_configured else role
    return settings.model_copy(update={"models": {"main": role, "fast": fast.model_copy()}})


def found_note(choice: Choice) -> str:
    return (
        f"model: {printable(choice.model)} via {choice.server.kind} at "
        f"{choice.server.address} (found running; set models.main to choose)"
    )


def embedded_note(settings: Settings) -> str:
    sources = settings.model_sources
    if sources.detect:
        ports = ", ".join(str(p) for p in sources.detect_ports)
        why = f"no model server answered on 127.0.0.1 ports {ports}"
    else:
        why = "no model configured, model_sources.detect is off"
    return (
        f"model: embedded {settings.model_role('main').model} ({why}): tiny and offline, it "
        "greets and answers short questions but is weak at tools and multi-step tasks; start "
        "Ollama or llama-server, `shiyi model pull` a bigger GGUF, or set models.main"
    )
