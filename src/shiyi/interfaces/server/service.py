"""The server's state: one session log, one memory, one model and an agent per session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shiyi.agent.agent import Agent, router_model_for
from shiyi.agent.persona import load_persona
from shiyi.client.owner import remove_owner, write_owner
from shiyi.config.settings import Settings
from shiyi.context.summaries import SummaryStore
from shiyi.errors import Conflict, NotFound, SessionNotFound
from shiyi.events import Event, RunEnd
from shiyi.llm.protocol import ChatModel
from shiyi.sessions.log import RunRecord, SessionLog
from shiyi.tools.base import Tool
from shiyi.tools.builtins import builtin_tools

if TYPE_CHECKING:
    from shiyi.memory.service import Memory

log = logging.getLogger(__name__)


@dataclass(slots=True)
class RunInfo:
    run_id: str
    session_id: str
    status: str
    active: bool
    goal: str = ""
    iterations: int = 0
    detail: str = ""


RUN_THREADS = 2
GREETING_WAIT = 0.25
"""Longest a run's set-up waits for other requests' first events (seconds)."""
BUILTIN_TOOLS = frozenset(item.spec.name for item in builtin_tools())


def server_settings_for_agents(settings: Settings) -> Settings:
    """The settings agents get: only the built-in tools the server allows (bash is off by
    default). ``default_registry`` rejects non built-in names, so the memory and plan tools
    the server allows are added by :func:`add_extra_tools`."""
    allowed = settings.server.tools
    enabled = None if allowed is None else [name for name in allowed if name in BUILTIN_TOOLS]
    tools = settings.tools.model_copy(update={"enabled": enabled})
    # The shared memory is attached after construction (from_settings would build its tools
    # once more and, given none, open a second store).
    memory = settings.memory.model_copy(update={"enabled": False})
    return settings.model_copy(update={"tools": tools, "memory": memory})


def add_extra_tools(
    agent: Agent, allowed: list[str] | None, memory: Memory | None, shared: Sequence[Tool] = ()
) -> None:
    """The memory and plan tools of ``allowed`` (all of them when ``allowed`` is None), and
    ``shared`` ones every agent uses as they are (the knowledge tools: one open knowledge
    base for the whole server)."""
    from shiyi.agent.plan_tools import plan_tools

    extra = [] if allowed is None else list(plan_tools(lambda: agent.context.plan))
    if memory is not None:
        from shiyi.tools.builtins.memory import memory_tools

        extra += memory_tools(memory)
    extra += [item for item in shared if item.spec.name not in agent.tools]
    for item in extra:
        if allowed is None or (item.spec.name in allowed and item.spec.name not in BUILTIN_TOOLS):
            agent.tools.register(item)


class AgentService:
    """Owns the shared resources; :meth:`start` must run on the event loop that serves."""

    def __init__(
        self,
        settings: Settings,
        *,
        model: ChatModel | None = None,
        memory: Memory | None = None,
        router_model: ChatModel | None = None,
        freeze_gc: bool = False,
    ) -> None:
        """``freeze_gc``: the process is this server's (``shiyi serve``), so :meth:`start`
        may exempt everything loaded so far from garbage collection (see
        :func:`_freeze_startup_objects`); a host application decides that for itself."""
        self.settings = settings
        self.freeze_gc = freeze_gc
        self.agent_settings = server_settings_for_agents(settings)
        self.model = model
        self.router_model = router_model
        self.memory = memory
        self._owns_memory = memory is None and settings.memory.enabled
        self._log: SessionLog | None = None
        self._agents: dict[str, Agent] = {}
        self._persona = ""
        self._summaries: SummaryStore | None = None
        # Runs' blocking set-up (SQLite, memory prefetch) and context building. Few threads:
        # the work holds the GIL, and more of them would only starve the event loop that
        # streams every session's events.
        self._executor = ThreadPoolExecutor(RUN_THREADS, thread_name_prefix="shiyi-run")
        self._shared_tools: list[Tool] = []
        self._greeting = 0  # requests whose first event is not out yet
        self._greeted: asyncio.Event | None = None
        if self._owns_memory:
            from shiyi.memory.service import Memory

            self.memory = Memory.open(settings)

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"http://{self.settings.server.host}:{self.settings.server.port}"

    def start(self) -> None:
        """Open the session log and record (``server.json``) who owns the data dir."""
        if self.model is None:
            from shiyi.llm.factory import build_chat_model

            self.model = build_chat_model(self.settings, "main")
        if self.router_model is None:
            self.router_model = router_model_for(self.settings)
        self._log = SessionLog(self.settings.sessions_db)
        self._persona = load_persona(self.settings)
        self._summaries = SummaryStore(self.settings.data_dir / "summaries.sqlite3")
        self._shared_tools = self._knowledge_tools()
        _warm_up()
        self._warm_up_agents()
        if self.freeze_gc:
            _freeze_startup_objects()
        if self.memory is not None:
            self.memory.worker.defer_while = lambda: self._greeting > 0
        write_owner(self.settings.data_dir, self.address)

    def _knowledge_tools(self) -> list[Tool]:
        """``search_knowledge`` over one knowledge base for all sessions, if one exists when
        the server starts and the server allows the tool (a restart picks up a new one)."""
        from shiyi.tools.builtins.knowledge import knowledge_tools_for

        allowed = self.settings.server.tools
        found = knowledge_tools_for(self.settings, self.memory)
        return [t for t in found if allowed is None or t.spec.name in allowed]

    def _warm_up_agents(self) -> None:
        """Build (and drop) one agent so the first burst of requests does not pay for lazy
        imports and tool-schema generation: the first run took 62 ms, later ones 9 ms."""
        import anyio._backends._asyncio
        import anyio.streams.memory  # noqa: F401

        # With the memory and plan tools: building their argument models took ~100 ms of the
        # first burst's event loop (pydantic builds a model class once per tool function).
        self._new_agent()

    def _new_agent(self) -> Agent:
        """An agent sharing the service's model, log, persona, summaries and threads, with
        the tools the server allows."""
        agent = Agent.from_settings(
            self.agent_settings,
            model=self.model,
            session_log=self.log,
            router_model=self.router_model,
            persona=self._persona,
            summaries=self._summaries,
            executor=self._executor,
        )
        add_extra_tools(agent, self.settings.server.tools, self.memory, self._shared_tools)
        return agent

    def close(self) -> None:
        for agent in self._agents.values():
            agent.close()
        self._agents.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._summaries is not None:
            self._summaries.close()
            self._summaries = None
        if self.memory is not None and self._owns_memory:
            self.memory.close()
            self.memory = None
        remove_owner(self.settings.data_dir)

    @property
    def log(self) -> SessionLog:
        if self._log is None:
            raise RuntimeError("AgentService.start() has not run")
        return self._log

    # --- sessions --------------------------------------------------------------------------

    def require_session(self, session_id: str) -> None:
        self.log.get_session(session_id)

    def delete_session(self, session_id: str) -> None:
        self.require_session(session_id)
        agent = self._agents.get(session_id)
        if agent is not None and agent.active_runs():
            raise Conflict(f"session {session_id} has an active run; cancel it first")
        self._agents.pop(session_id, None)
        if agent is not None:
            agent.close()
        self.log.delete_session(session_id)

    def agent(self, session_id: str) -> Agent:
        """The session's agent. Creating one does no I/O (the persona, summary cache and
        tool schemas are shared): the session's history loads in its first run's thread."""
        agent = self._agents.get(session_id)
        if agent is None:
            agent = self._new_agent()
            agent.attach(session_id)
            agent.memory = self.memory
            self._agents[session_id] = agent
        return agent

    # --- runs ------------------------------------------------------------------------------

    def check_run_id(self, session_id: str, run_id: str | None) -> None:
        """A run id active in another session cannot be joined from this one."""
        owner = self._owner_of(run_id) if run_id else None
        if owner is not None and owner != session_id:
            raise Conflict(f"run {run_id} is active in session {owner}; send to that session")

    async def send(
        self, session_id: str, text: str, run_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Route the message in its session (see :meth:`Agent.send`) and stream the events.

        The session's agent serialises its runs; different sessions run concurrently.
        """
        self.check_run_id(session_id, run_id)
        agent = self.agent(session_id)
        agent.before_run = self._greetings_sent
        self._greeting += 1
        greeted = False
        try:
            async for event in agent.send(text, run_id):
                yield event
                if not greeted:
                    greeted = True
                    self._greeting_done()
        finally:
            if not greeted:
                self._greeting_done()

    def _greeting_done(self) -> None:
        self._greeting -= 1
        if self._greeting == 0 and self._greeted is not None:
            self._greeted.set()

    async def _greetings_sent(self) -> None:
        """First events before run set-ups: a burst of requests all get their ``routed``
        event out before any run's thread work competes with the event loop for the GIL.
        Bounded, so a stuck request never holds the others' runs back for long."""
        await asyncio.sleep(0)  # let requests accepted in the same batch reach send()
        if self._greeting == 0:
            return
        if self._greeted is None or self._greeted.is_set():
            self._greeted = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._greeted.wait(), GREETING_WAIT)

    def cancel(self, run_id: str) -> RunInfo:
        session_id = self._owner_of(run_id)
        if session_id is None:
            info = self.run(run_id)
            raise Conflict(f"run {run_id} is not active (status {info.status})")
        self._agents[session_id].cancel(run_id)
        return self.run(run_id)

    def run(self, run_id: str) -> RunInfo:
        record = self.log.get_run(run_id)
        if record is None:
            raise NotFound(f"no run {run_id!r}")
        return _run_info(record, active=self._owner_of(run_id) is not None)

    def active_run_ids(self) -> list[str]:
        return [run.run_id for agent in self._agents.values() for run in agent.active_runs()]

    def _owner_of(self, run_id: str) -> str | None:
        for session_id, agent in self._agents.items():
            if any(run.run_id == run_id for run in agent.active_runs()):
                return session_id
        return None


def _freeze_startup_objects() -> None:
    """Keep what start-up allocated out of later garbage collections.

    The imports, schemas and vocabularies loaded by now are a few hundred thousand objects
    that live as long as the server; the first full collection walked them all in the first
    burst of requests (161 ms, every request of the burst waiting).  ``gc.freeze`` moves them
    to a generation the collector skips.
    """
    gc.collect()
    gc.freeze()


def _warm_up() -> None:
    """Load the tokenizer vocabulary (about a second) now, not in the first run's path."""
    from shiyi.llm.tokens import TokenCounter

    TokenCounter().count("warm up")


def _run_info(record: RunRecord, *, active: bool) -> RunInfo:
    return RunInfo(
        run_id=record.id,
        session_id=record.session_id,
        status=record.status,
        active=active,
        goal=record.goal,
        iterations=record.iterations,
        detail=record.detail,
    )


def final_status(events: list[Event]) -> str | None:
    ends = [e for e in events if isinstance(e, RunEnd)]
    return ends[-1].status if ends else None


__all__ = ["AgentService", "Conflict", "NotFound", "RunInfo", "SessionNotFound"]
