"""The library entry point: ``Agent.send(message)`` streams the events of a run."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from concurrent.futures import Executor
from contextlib import aclosing
from typing import TYPE_CHECKING

from shiyi.agent.complexity import ComplexityDetector, guidance_for
from shiyi.agent.dispatch import Dispatch, plan_dispatch
from shiyi.agent.documents import DocumentHints
from shiyi.agent.loop import RunLimits, RunLoop
from shiyi.agent.persona import load_persona
from shiyi.agent.plan import CurrentPlan
from shiyi.agent.router import Candidate, Embed, Router
from shiyi.agent.seed import seed_from_run
from shiyi.agent.session_context import SessionContext
from shiyi.agent.transcript import Transcript
from shiyi.config.settings import Settings
from shiyi.context.builder import ContextBuilder
from shiyi.context.summaries import Summarizer, SummaryStore
from shiyi.errors import StorageError
from shiyi.events import Event, Routed, UserMessageInjected
from shiyi.llm.gate import conversation
from shiyi.llm.protocol import ChatModel
from shiyi.llm.tokens import TokenCounter
from shiyi.llm.types import Message, ToolChoice
from shiyi.sessions.log import SessionLog, new_id
from shiyi.sessions.records import SessionInfo, SessionOwner
from shiyi.sessions.run_files import runs_root, write_run_file
from shiyi.tools.base import ToolContext
from shiyi.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from shiyi.memory.models import MemoryHit
    from shiyi.memory.recall.intent import MessageIntent
    from shiyi.memory.service import Memory

log = logging.getLogger(__name__)


class Agent:
    """A ReAct agent bound to one session at a time.

    :class:`shiyi.app.App` builds agents from the settings (``App.open(settings).agent()``).
    An agent takes only the parts it is handed, all of which may be shared with others, and
    closes none of them: whoever opened the session log and the summary cache closes them.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        settings: Settings,
        tools: ToolRegistry,
        session_log: SessionLog,
        summaries: SummaryStore,
        plan: CurrentPlan | None = None,
        force_first_call: bool = False,
        session_id: str | None = None,
        memory: Memory | None = None,
        summary_model: ChatModel | None = None,
        router_model: ChatModel | None = None,
        persona: str | None = None,
        executor: Executor | None = None,
        counter: TokenCounter | None = None,
        documents: DocumentHints | None = None,
    ) -> None:
        """``plan`` is the one the plan tools in ``tools`` act on (see
        :func:`shiyi.agent.plan_tools.plan_tools`); ``force_first_call`` guides a small model
        (see ``tools.force_first_call``: the app turns it on for the compact profile).
        ``persona``, ``summaries`` and ``executor`` may be shared by many agents (a
        server's); ``counter`` counts tokens for the context budget (default: cl100k);
        ``executor`` runs each run's blocking set-up and context building
        (default: asyncio's thread pool for the set-up, the event loop for building)."""
        self.model = model
        self.memory = memory
        self.documents = documents
        """Knowledge-base passages for a bug fix's hint (the app's, when a base exists)."""
        self.settings = settings
        self.tools = tools
        self.log = session_log
        self.plan = plan if plan is not None else CurrentPlan()
        self.tool_context = ToolContext.for_settings(settings)
        self._transcript: Transcript | None = None
        self._context: SessionContext | None = None
        self._background: set[asyncio.Task[int]] = set()
        self._pending_session: str | None = None
        self.executor = executor
        self.persona = persona if persona is not None else load_persona(settings)
        self.complexity = ComplexityDetector(settings.complexity)
        self.force_first_call = force_first_call
        self.builder = ContextBuilder(
            settings.context,
            settings.model_role("main").context_window,
            counter=counter,
            summaries=summaries,
        )
        self.summarizer = Summarizer(summary_model, summaries)
        self._active: dict[str, RunLoop] = {}
        self._closed = False
        self._run_lock = asyncio.Lock()
        self.before_run: Callable[[], Awaitable[None]] | None = None
        """Awaited after ``routed`` and before the run's set-up: a server uses it to send every
        waiting request's first event before starting the heavier work of any run."""
        self.router = Router(settings.routing, model=router_model, embed=self._loaded_embedder)
        if session_id is not None:
            self.resume(session_id)

    # --- sessions --------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        if self._transcript is None and self._pending_session is not None:
            return self._pending_session
        return self.transcript.session_id

    @property
    def transcript(self) -> Transcript:
        if self._transcript is None and self._pending_session is not None:
            self.resume(self._pending_session)
        if self._transcript is None:
            self.new_session()
        assert self._transcript is not None
        return self._transcript

    def attach(self, session_id: str) -> None:
        """Resume the existing session ``session_id`` (a full id) on first use, not now:
        a server creates agents on its event loop and loads history in the run's thread."""
        if self._transcript is not None:
            self.resume(session_id)
            return
        self._require_idle()
        self._pending_session = session_id

    def new_session(self, title: str = "") -> str:
        """Start a fresh session (the previous one stays in the log)."""
        self._require_idle()
        self._pending_session = None
        self._consolidate()
        who = self.settings.memory  # the session is the configured user's and agent's
        session_id = self.log.create_session(
            title=title,
            workspace=str(self.settings.workspace),
            owner=SessionOwner(who.user_id, who.agent_id),
        )
        self._transcript = self._open_transcript(session_id)
        return session_id

    def resume(self, session_id: str) -> SessionInfo:
        """Continue a logged session by id or unique prefix (also after a crash)."""
        self._require_idle()
        info = self.log.find_session(session_id)
        self._pending_session = None
        if self._transcript is not None and self._transcript.session_id != info.id:
            self._consolidate()
        self.log.mark_interrupted(info.id)
        self._transcript = self._open_transcript(info.id)
        return info

    def _open_transcript(self, session_id: str) -> Transcript:
        transcript = Transcript(self.log, session_id, memory=self.memory)
        self._context = SessionContext(
            settings=self.settings.context,
            builder=self.builder,
            transcript=transcript,
            tools=self.tools,
            workspace=self.settings.workspace,
            persona=self.persona,
            summarizer=self.summarizer,
            plan=self.plan,
        )
        return transcript

    @property
    def context(self) -> SessionContext:
        """The working memory of the current session (focused files, tool memory, plan)."""
        _ = self.transcript
        assert self._context is not None
        return self._context

    def _require_idle(self) -> None:
        if self._active:
            raise RuntimeError("cannot switch sessions while a run is active; cancel it first")

    def history(self) -> list[Message]:
        """The session's messages as the model will see them (repaired and sanitised)."""
        return self.transcript.all()

    # --- runs ------------------------------------------------------------------------------

    def active_runs(self) -> list[RunLoop]:
        return list(self._active.values())

    def cancel(self, run_id: str | None = None) -> bool:
        """Cancel one run (or every active run); True if something was cancelled."""
        targets = [self._active[run_id]] if run_id in self._active else []
        if run_id is None:
            targets = list(self._active.values())
        for run in targets:
            run.cancel()
        return bool(targets)

    async def send(self, message: str, run_id: str | None = None) -> AsyncGenerator[Event, None]:
        """Route ``message`` (seed 002) and stream what follows; the first event is ``routed``.

        With ``run_id``: join that run if it is active here; if it has ended, start a new
        run seeded with what memory holds about it; an unknown id names the new run.
        Without: the router decides whether the message joins the active run (it is seen at
        the next iteration boundary and this stream only acknowledges it) or starts a new
        one.  Runs of one agent never overlap: a new run waits for the active one to end.
        """
        routed, seed = await self._route(message, run_id)
        if routed.decision == "join":
            target = self._active.get(routed.run_id)
            if target is not None and target.inject(message):
                yield routed
                yield UserMessageInjected(text=message)
                return
            routed = Routed(
                decision="new",
                run_id=new_id("run"),
                reason=f"run {routed.run_id} ended before the message could join it",
                via="default",
            )
        yield routed
        if self.before_run is not None:
            await self.before_run()
        # Background work on the model's endpoint waits for the run's end.
        with conversation(self.model):
            async with aclosing(self._run(message, routed.run_id, seed)) as events:
                async for event in events:
                    yield event

    async def _run(self, message: str, run_id: str, seed: str) -> AsyncGenerator[Event, None]:
        async with self._run_lock:
            run = await self._open_run(message, run_id, seed)
            self._active[run.run_id] = run
            try:
                # Closed with this stream: left to the garbage collector, the run would end
                # (and write to the session log) after the app closed.
                async with aclosing(run.events()) as events:
                    async for event in events:
                        yield event
            finally:
                self._active.pop(run.run_id, None)
                self._summarize_later()
                self._keep_what_was_asked(run)
                self._archive(run)
                self._write_run_file(run)

    def _archive(self, run: RunLoop) -> None:
        """Queue the finished run's archive (an anchored episodic memory); never raises."""
        if self.memory is None or run.status is None:
            return
        if run.echo:  # no answer: its archive would only bring the echo back as a hint
            log.info("run %s not archived: its reply echoed shiyi's text", run.run_id)
            return
        try:
            self.memory.archive_run(run.run_id, run.goal, run.status)
        except Exception:
            log.exception("could not queue the archive of run %s", run.run_id)

    def _keep_what_was_asked(self, run: RunLoop) -> None:
        """A statement the user explicitly asked to remember ("Remember that my sister Ana
        lives in Porto."), kept when the run's model stored nothing itself: a tiny model's
        ``remember`` call may loop or be refused, and a newcomer's first request must not
        leave memory empty (:mod:`shiyi.memory.text.directives`).  After the reply; never
        raises."""
        if self.memory is None or run.status is None or run.remembered:
            return
        from shiyi.memory.text.directives import asked_to_remember

        for said in run.inputs:
            if (statement := asked_to_remember(said)) is None:
                continue
            try:
                self.memory.remember(statement)
            except Exception:  # memory must never break the conversation; the log has it
                log.exception("could not keep what run %s was asked to remember", run.run_id)

    def _write_run_file(self, run: RunLoop) -> None:
        """The finished run as a readable file under the data dir; never raises.  Runs after
        the last event went out: the reader already has the whole reply."""
        if run.status is None:
            return
        try:
            write_run_file(self.log, runs_root(self.settings.data_dir), run.run_id)
        except (OSError, StorageError) as exc:  # a full disk or a closed log: not the reply's
            log.warning("could not write the file of run %s: %s", run.run_id, exc)

    def _consolidate(self) -> None:
        """Queue the current session's consolidation (at session end and on /new)."""
        if self.memory is None or self._transcript is None or not len(self._transcript):
            return
        try:
            self.memory.consolidate(self._transcript.session_id)
        except Exception:
            log.exception("could not queue the consolidation of the session")

    async def _route(self, message: str, run_id: str | None) -> tuple[Routed, str]:
        """The routing decision and, for a continued run, the memory it is seeded with."""
        if run_id and run_id in self._active:
            return Routed(
                decision="join", run_id=run_id, reason="the run is active", via="explicit"
            ), ""
        if run_id:
            old = await asyncio.to_thread(self.log.get_run, run_id)
            if old is None:
                return Routed(
                    decision="new", run_id=run_id, reason="a new run with the given id",
                    via="explicit",
                ), ""  # fmt: skip
            seed = await asyncio.to_thread(seed_from_run, self.memory, self.log, old)
            return Routed(
                decision="continue",
                run_id=new_id("run"),
                reason=f"run {run_id} has ended ({old.status}); continuing it in a new run",
                via="explicit",
                from_run_id=run_id,
                seeded=seed.items,
            ), seed.text
        candidates = [
            Candidate(run.run_id, "\n".join(run.inputs), run.last_input)
            for run in self._active.values()
            if run.status is None
        ]
        route = await self.router.route(message, candidates)
        return Routed(
            decision=route.decision,
            run_id=route.run_id or new_id("run"),
            reason=route.reason,
            via=route.via,
            score=None if route.score is None else round(route.score, 3),
        ), ""

    async def _open_run(self, message: str, run_id: str, seed: str) -> RunLoop:
        """Create the run; its SQLite and memory work runs in a worker thread, so a server
        starting many runs at once keeps streaming the others meanwhile."""
        loop = asyncio.get_running_loop()
        setup = loop.run_in_executor(self.executor, self._new_run, message, run_id, seed)
        try:
            return await asyncio.shield(setup)
        except asyncio.CancelledError:
            # The caller went away mid-setup: end the run once it exists, never leave it
            # 'running' in the log.
            setup.add_done_callback(_abandon_when_ready)
            raise

    def _summarize_later(self) -> None:
        """Summaries the last request lacked are computed after the reply, off its path."""
        context = self._context
        if context is None or context.last is None or self._closed:
            return
        if not (context.last.pending_blocks or context.last.digest_source):
            return
        task = asyncio.get_running_loop().create_task(context.summarize_in_background())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _new_run(self, message: str, run_id: str, seed: str = "") -> RunLoop:
        """Blocking: log the run and its first message, prepare the context."""
        transcript = self.transcript
        session_id = transcript.session_id
        run_id = self.log.start_run(session_id, message, run_id)
        transcript.append(Message("user", message), run_id=run_id)
        if not self.log.get_session(session_id).title:
            self.log.set_title(session_id, _title_from(message))
        agent_settings = self.settings.agent
        context = self.context
        previous = _last_reply(transcript.all()[:-1])
        hint, hits = self._memory_hint(message, run_id)
        memories = tuple(hit.text for hit in hits)
        dispatch = self._dispatch(message, memories, _noted(hits))
        context.start_run(
            message,
            guidance=guidance_for(self.complexity.assess(message, previous)),
            memory_hint=hint,
            continued=seed,
            memories=memories if self.force_first_call else (),
            facts=dispatch.facts,
        )
        return RunLoop(
            run_id=run_id,
            session_id=session_id,
            goal=message,
            model=self.model,
            tools=self.tools,
            tool_context=self.tool_context,
            transcript=transcript,
            hooks=context,
            limits=RunLimits(
                max_iterations=agent_settings.max_iterations,
                stuck_repeats=agent_settings.stuck_repeats,
                max_run_tokens=agent_settings.max_run_tokens,
                temperature=self.settings.model_role("main").temperature,
                max_tokens=self.settings.model_role("main").max_tokens,
                opening_tool_choices=self._opening_tool_choices(message, dispatch),
                opening=dispatch.opening(),
                worded=dispatch.worded,
                reply_seconds=agent_settings.reply_seconds,
                bare_answers=self.force_first_call,
                prompt_notes=tuple(getattr(self.model, "prompt_notes", ())),
            ),
            offload=self._offload if self.executor is not None else None,
            on_echo=self._echo_noter(run_id),
        )

    def _echo_noter(self, run_id: str) -> Callable[[str], None] | None:
        """Memory hears the words a final answer copied from shiyi's text as if shown to the
        model, so the reply is recorded as an echo (:mod:`shiyi.memory.text.echoes`): recall and
        extraction pass it by, and it never comes back as a later run's hint."""
        memory = self.memory
        if memory is None:
            return None
        return lambda words: memory.writer.shown(run_id, [words])

    def _opening_tool_choices(self, message: str, dispatch: Dispatch) -> tuple[ToolChoice, ...]:
        """For a guided small model (``force_first_call``): look, then answer, when the
        message names a tool domain or the agent looks itself; else answer in words.
        SmolLM2-135M, asked to read notes.txt, otherwise describes a file it never opened,
        and once it has read it, calls read_file again until the run stops as stuck; told
        "now say goodbye", it listed the directory three times."""
        if not (self.force_first_call and self.tools.names()):
            return ()
        if dispatch.answer:
            return ("none",)
        looks = dispatch.calls or self.complexity.tool_intents(message)
        return ("required", "none") if looks else ("none",)

    def _dispatch(
        self, message: str, memories: tuple[str, ...], noted: tuple[str, ...]
    ) -> Dispatch:
        """The steps the agent takes itself for a guided small model (none for others)."""
        if not self.force_first_call:
            return Dispatch()
        workspace, tools = self.settings.workspace, self.tools.names()
        return plan_dispatch(message, workspace, tools, memories, noted)

    async def _offload(self, build: Callable[[], list[Message]]) -> list[Message]:
        return await asyncio.get_running_loop().run_in_executor(self.executor, build)

    def _loaded_embedder(self) -> Embed | None:
        """The memory's embedder for routing, only once loaded (never a load or a remote
        call just to route a message)."""
        embedder = self.memory.embedder if self.memory is not None else None
        if embedder is None or not getattr(embedder, "loaded", False):
            return None
        return embedder.embed

    def _memory_hint(self, message: str, run_id: str) -> tuple[str, tuple[MemoryHit, ...]]:
        """The hint block, and the recalled memories in it."""
        if self.memory is None:
            return "", ()
        from shiyi.memory.recall.intent import detect_intent
        from shiyi.memory.recall.present import format_hits

        session_id = self.transcript.session_id
        previous = _last_turns(self.transcript.all()[:-1])
        intent = detect_intent(message, previous=previous, agents=self._peers())
        log.debug("message intent %s (%.2f): %s", intent.kind, intent.confidence, intent.reason)
        try:
            hits = self.memory.prefetch(
                message,
                lambda hit: is_news(hit, message, session_id),
                intent=intent,
                previous=previous,
            )
        except Exception:
            log.exception("memory prefetch failed")
            return "", ()
        # A reply quoting the hint is an echo, not news (shiyi.memory.text.echoes).
        self.memory.writer.shown(run_id, [hit.text for hit in hits])
        handles = "expand_memory" in self.tools.names()
        hint = format_hits(hits, handles=handles) if hits else ""
        block = "\n".join(filter(None, [hint, self._document_hint(intent, message)]))
        return block, tuple(hits)

    def _document_hint(self, intent: MessageIntent, message: str) -> str:
        """A bug fix also looks in the documents (the knowledge base), by keywords."""
        if intent.kind != "bug_fix" or self.documents is None:
            return ""
        try:
            return self.documents.lookup(message)
        except Exception:
            log.exception("knowledge base lookup for the hint failed")
            return ""

    def _peers(self) -> list[str]:
        """The other agents the configuration names (shared-memory writers, server users'
        agents): a message naming one hands work to it (the cross-agent intent)."""
        own = self.memory.viewer.agent_id if self.memory is not None else ""
        writers = self.settings.memory.lifecycle.workspace_writers
        names = [name for name in writers if not name.startswith("user:")]
        names += [user.agent_id for user in self.settings.server.users if user.agent_id]
        return [name for name in dict.fromkeys(names) if name not in (own, "*")]

    def close(self) -> None:
        self.cancel()
        for run in list(self._active.values()):  # a consumer stopped reading and never closed
            run.detach("the agent closed while the run was streaming")
        self._closed = True
        self._consolidate()
        for task in list(self._background):
            task.cancel()
        self.memory = None


def _abandon_when_ready(setup: asyncio.Future[RunLoop]) -> None:
    if setup.cancelled() or setup.exception() is not None:
        return
    try:
        setup.result().abandon("the caller went away before the run started")
    except StorageError as exc:  # shutting down: the log closed before the set-up finished
        log.debug("abandoned run not recorded: %s", exc)


def is_news(hit: MemoryHit, message: str, session_id: str) -> bool:
    """Whether ``hit`` tells the model something: not one of this conversation's own
    messages (or a fact read off them), which the history holds already, nor an earlier
    message that only says the same words as this one."""
    if hit.anchor is not None and hit.anchor.session_id == session_id:
        return False
    return not (hit.node == "event" and hit.text.partition(": ")[2].strip() == message.strip())


def _last_turns(messages: list[Message], count: int = 2) -> list[str]:
    """The words of the last user and assistant turns (tool traffic left out), oldest first."""
    said = [m.content for m in messages if m.role in ("user", "assistant") and m.content]
    return said[-count:]


def _last_reply(messages: list[Message]) -> str | None:
    return next(
        (m.content for m in reversed(messages) if m.role == "assistant" and m.content), None
    )


def _title_from(message: str, width: int = 60) -> str:
    line = " ".join(message.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _noted(hits: tuple[MemoryHit, ...]) -> tuple[str, ...]:
    """The current facts among the recalled memories (not a run's archive, not history)."""
    return tuple(
        hit.text
        for hit in hits
        if hit.node == "fact" and hit.status == "active" and hit.source != "archive"
    )
