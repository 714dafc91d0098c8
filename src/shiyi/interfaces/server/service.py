"""The server's state: one session log, one memory, one model and an agent per session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator, Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shiyi.agent.agent import Agent
from shiyi.app import App
from shiyi.client.owner import remove_owner, write_owner
from shiyi.config.settings import Settings
from shiyi.errors import Conflict, NotFound, SessionNotFound
from shiyi.events import Event, RunEnd
from shiyi.interfaces.server.identity import Identities, Identity
from shiyi.llm.protocol import ChatModel
from shiyi.memory.work import defer_work_while
from shiyi.sessions.log import SessionLog
from shiyi.sessions.records import RunRecord
from shiyi.tools.builtins import check_tool_names

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


class AgentService:
    """Owns the shared resources; :meth:`start` must run on the event loop that serves."""

    def __init__(
        self,
        settings: Settings,
        *,
        app: App | None = None,
        model: ChatModel | None = None,
        freeze_gc: bool = False,
        owner_token: str = "",
    ) -> None:
        """Serve ``app``'s parts (a chat's, sharing its model and memory), or open an app from
        ``settings`` (with ``model`` as the main model, if given) and close it with the service.

        ``settings`` says where and what to serve (``server.*``); agents get the tools
        ``server.tools`` allows.  ``freeze_gc``: the process is this server's (``shiyi
        serve``), so :meth:`start` may exempt everything loaded so far from garbage collection
        (see :func:`_freeze_startup_objects`); a host application decides that for itself.
        ``owner_token``: a token made for this start, recorded in ``server.json`` for the
        owner's other commands."""
        self.settings = settings
        self._owner_token = owner_token
        self.identities = Identities(settings)
        self.freeze_gc = freeze_gc
        check_tool_names(settings.server.tools or (), "server.tools")
        for name, profile in settings.server.profiles.items():
            check_tool_names(profile.tools or (), f"server.profiles.{name}.tools")
        self._owns_app = app is None
        self._app: App | None = app if app is not None else App.open(settings, model=model)
        self._agents: dict[str, Agent] = {}
        """Loaded agents by session, least recently used first."""
        self._tools_of: dict[str, tuple[str, ...] | None] = {}
        """The profile tools each loaded agent was made with (None: server.tools)."""
        self._sending: dict[str, int] = {}
        """Requests streaming in each session: their agent is never evicted (a run is not
        active yet while it is routed and set up)."""
        # Runs' blocking set-up (SQLite, memory prefetch) and context building. Few threads:
        # the work holds the GIL, and more of them would only starve the event loop that
        # streams every session's events.
        self._executor = ThreadPoolExecutor(RUN_THREADS, thread_name_prefix="shiyi-run")
        self._greeting = 0  # requests whose first event is not out yet
        self._greeted: asyncio.Event | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return f"http://{self.settings.server.host}:{self.settings.server.port}"

    @property
    def app(self) -> App:
        if self._app is None:
            raise RuntimeError("the service is closed")
        return self._app

    @property
    def memory(self) -> Memory | None:
        return self._app.memory if self._app is not None else None

    @property
    def model(self) -> ChatModel:
        return self.app.models.main

    def start(self) -> None:
        """Warm up and record (``server.json``) who owns the data dir."""
        _warm_up()
        self._warm_up_agents()
        if self.freeze_gc:
            _freeze_startup_objects()
        if self.memory is not None:
            defer_work_while(self.memory, lambda: self._greeting > 0)
        elif self._owns_app:
            # Without memory no store lock made the app repair (App.open): the server is the
            # data dir's one owner (server.json), so runs still 'running' died with a process.
            self.log.interrupt_running()
        write_owner(self.settings.data_dir, self.address, self._owner_token)

    def _warm_up_agents(self) -> None:
        """Build (and drop) one agent so the first burst of requests does not pay for lazy
        imports and tool-schema generation: the first run took 62 ms, later ones 9 ms."""
        import anyio._backends._asyncio
        import anyio.streams.memory  # noqa: F401

        # With the memory and plan tools: building their argument models took ~100 ms of the
        # first burst's event loop (pydantic builds a model class once per tool function).
        self._new_agent()

    def _new_agent(
        self, who: Identity | None = None, tools: Collection[str] | None = None
    ) -> Agent:
        """An agent on the app's shared parts and threads, with the tools the server allows
        (``tools``: a profile's narrower set), reading and writing the memories of ``who``
        (default: the configured identity)."""
        viewer = who.viewer if who is not None else None
        allowed = self.settings.server.tools if tools is None else tools
        return self.app.agent(allowed=allowed, executor=self._executor, viewer=viewer)

    def close(self) -> None:
        for agent in self._agents.values():
            agent.close()
        self._agents.clear()
        self._tools_of.clear()
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self._app is not None and self._owns_app:
            self._app.close()
            self._app = None
        remove_owner(self.settings.data_dir)

    @property
    def log(self) -> SessionLog:
        return self.app.log

    # --- sessions --------------------------------------------------------------------------

    def create_session(self, who: Identity, title: str = "") -> str:
        workspace = str(self.settings.workspace)
        return self.log.create_session(title=title, workspace=workspace, owner=who.owner)

    def require_session(self, session_id: str, who: Identity) -> None:
        """Another user's session is not found either (the same 404 as a missing one)."""
        self.log.get_session(session_id, owner=who.owner)

    def delete_session(self, session_id: str, who: Identity) -> None:
        self.require_session(session_id, who)
        agent = self._agents.get(session_id)
        if agent is not None and agent.active_runs():
            raise Conflict(f"session {session_id} has an active run; cancel it first")
        self._agents.pop(session_id, None)
        self._tools_of.pop(session_id, None)
        if agent is not None:
            agent.close()
        self.log.delete_session(session_id)

    def drop_idle_agents(self, session_ids: Iterable[str]) -> None:
        """After a forget: an idle agent of these sessions holds the forgotten messages in its
        transcript and tool memory; dropping it makes the next message reload the log."""
        for session_id in session_ids:
            agent = self._agents.get(session_id)
            if agent is not None and not agent.active_runs():
                del self._agents[session_id]
                self._tools_of.pop(session_id, None)
                agent.close()

    def agent(
        self,
        session_id: str,
        who: Identity | None = None,
        tools: tuple[str, ...] | None = None,
    ) -> Agent:
        """The session's agent, acting as ``who`` (its owner; default: the configured
        identity), with ``tools`` (a profile's; None: server.tools). Creating one does no
        I/O (the persona, summary cache and tool schemas are shared): the session's history
        loads in its first run's thread."""
        agent = self._agents.pop(session_id, None)
        if agent is not None and self._tools_of.get(session_id) != tools:
            if agent.active_runs():  # another profile's run: it keeps its tools to the end
                raise Conflict(f"session {session_id} has an active run of another profile")
            agent.close()
            agent = None
        if agent is None:
            agent = self._new_agent(who or self.identities.configured, tools)
            agent.attach(session_id)
            self._tools_of[session_id] = tools
        self._agents[session_id] = agent  # (re)inserted last: the most recently used
        self._evict_idle_agents(keep=session_id)
        return agent

    def _evict_idle_agents(self, keep: str) -> None:
        """Close the least recently used idle agents beyond ``server.max_idle_agents``: each
        holds its session's transcript, tool memory and context, and a server meeting new
        sessions all day kept every one (issue 29).  A closed session's next message
        reloads it from the log."""
        excess = len(self._agents) - self.settings.server.max_idle_agents
        for session_id in list(self._agents):
            if excess <= 0:
                return
            agent = self._agents[session_id]
            if session_id == keep or session_id in self._sending or agent.active_runs():
                continue
            del self._agents[session_id]
            self._tools_of.pop(session_id, None)
            agent.close()
            excess -= 1

    @property
    def loaded_agents(self) -> int:
        """Sessions whose agent is loaded (active or idle)."""
        return len(self._agents)

    # --- runs ------------------------------------------------------------------------------

    def check_run_id(self, session_id: str, run_id: str | None, who: Identity) -> None:
        """A run id active in another session cannot be joined from this one; another
        user's run is not found (continuing it would seed the run with their memories)."""
        if not run_id:
            return
        record = self.log.get_run(run_id)
        if record is not None and not self._owns_session(record.session_id, who):
            raise NotFound(f"no run {run_id!r}")
        owner = self._owner_of(run_id)
        if owner is not None and owner != session_id:
            raise Conflict(f"run {run_id} is active in session {owner}; send to that session")

    def _owns_session(self, session_id: str, who: Identity) -> bool:
        try:
            self.log.get_session(session_id, owner=who.owner)
        except SessionNotFound:
            return False
        return True

    async def send(
        self,
        session_id: str,
        text: str,
        who: Identity,
        run_id: str | None = None,
        tools: tuple[str, ...] | None = None,
    ) -> AsyncIterator[Event]:
        """Route the message in its session (see :meth:`Agent.send`) and stream the events.

        The session's agent serialises its runs; different sessions run concurrently.
        ``tools``: an agent profile's tools (None: server.tools).
        """
        self.check_run_id(session_id, run_id, who)
        self._sending[session_id] = self._sending.get(session_id, 0) + 1
        try:
            agent = self.agent(session_id, who, tools)
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
        finally:
            self._sending[session_id] -= 1
            if not self._sending[session_id]:
                del self._sending[session_id]

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

    def cancel(self, run_id: str, who: Identity) -> RunInfo:
        info = self.run(run_id, who)
        session_id = self._owner_of(run_id)
        if session_id is None:
            raise Conflict(f"run {run_id} is not active (status {info.status})")
        self._agents[session_id].cancel(run_id)
        return self.run(run_id, who)

    def run(self, run_id: str, who: Identity) -> RunInfo:
        """The run, if it is in one of ``who``'s sessions (else the 404 of a missing run)."""
        record = self.log.get_run(run_id)
        if record is None or not self._owns_session(record.session_id, who):
            raise NotFound(f"no run {run_id!r}")
        return _run_info(record, active=self._owner_of(run_id) is not None)

    def active_run_ids(self, sessions: Collection[str] | None = None) -> list[str]:
        """Runs going now (only those of ``sessions``, when given)."""
        return [
            run.run_id
            for session_id, agent in self._agents.items()
            if sessions is None or session_id in sessions
            for run in agent.active_runs()
        ]

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
    """Load the tokenizer vocabulary (about a second) and the English word list keyword
    search reads typing slips with (0.12 s) now, not in the first run's path."""
    from shiyi.index.english import is_english
    from shiyi.llm.tokens import TokenCounter

    TokenCounter().count("warm up")
    is_english("warm")


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
