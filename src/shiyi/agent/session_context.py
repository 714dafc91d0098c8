"""Per-session working memory wired into the run loop (the :class:`RunHooks` it uses).

Holds what the model should keep in view across turns of one session: the focused files,
the session tool-result memory, the scratchpad and the current plan; builds each request
with the :class:`ContextBuilder`; and, after a reply, lets summaries be computed in the
background so they are ready for a later turn.
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from shiyi.agent.plan import CurrentPlan, PlanState
from shiyi.agent.transcript import Transcript
from shiyi.config.settings import ContextSettings
from shiyi.context.builder import BuiltContext, ContextBuilder, ContextParts, SentContext
from shiyi.context.compression import block_key
from shiyi.context.focused_files import FocusedFiles
from shiyi.context.plain import plain_request
from shiyi.context.scratchpad import Scratchpad
from shiyi.context.summaries import Summarizer
from shiyi.context.tool_memory import ToolMemory
from shiyi.events import Event, PlanCreated, RunStatus, StepComplete, StepStart
from shiyi.llm.types import Message, ToolCall, Usage
from shiyi.tools.output import summarize
from shiyi.tools.registry import ToolOutcome, ToolRegistry

log = logging.getLogger(__name__)

# Planning tools change no file and no memory: they must not empty the tool cache.
_UNCACHED_TOOLS = frozenset({"create_plan", "update_plan"})


class SessionContext:
    def __init__(
        self,
        *,
        settings: ContextSettings,
        builder: ContextBuilder,
        transcript: Transcript,
        tools: ToolRegistry,
        workspace: Path,
        persona: str,
        summarizer: Summarizer | None = None,
        plan: CurrentPlan | None = None,
    ) -> None:
        """``plan``: where the run's plan is kept (the one the agent's plan tools act on)."""
        self.settings = settings
        self.builder = builder
        self.transcript = transcript
        self.tools = tools
        self.workspace = workspace
        self.persona = persona
        self.summarizer = summarizer
        self.focused = FocusedFiles(settings.focused_files_max_chars)
        self.tool_memory = ToolMemory(
            settings.tool_cache_capacity, settings.tool_cache_min_relevance
        )
        self.scratchpad = Scratchpad()
        self._plan = plan if plan is not None else CurrentPlan()
        self._plan.state = PlanState()
        self.guidance = ""
        self.memory_hint = ""
        self.continued = ""
        self.memories: tuple[str, ...] = ()
        """The recalled memories of the hint, as plain text (for the plain layout)."""
        self.facts: tuple[str, ...] = ()
        """What the agent worked out for this run itself (``7 * 6 = 42``)."""
        self.started_at: datetime | None = None
        self.sent: dict[int, SentContext] = {}
        """The run context each earlier user message went out with (see the builder)."""
        self.last: BuiltContext | None = None

    @property
    def plan(self) -> PlanState:
        """The current run's plan."""
        return self._plan.state

    # --- per run -----------------------------------------------------------------------

    def start_run(
        self,
        goal: str,
        *,
        guidance: str = "",
        memory_hint: str = "",
        continued: str = "",
        memories: tuple[str, ...] = (),
        facts: tuple[str, ...] = (),
    ) -> None:
        """``continued``: what memory holds about the ended run this one continues;
        ``memories`` and ``facts`` are for the plain layout (:mod:`shiyi.context.plain`)."""
        self._plan.state = PlanState()
        self.scratchpad.set_goal(goal)
        self.guidance = guidance
        self.memory_hint = memory_hint
        self.continued = continued
        self.memories, self.facts = memories, facts
        self.started_at = datetime.now().astimezone()
        self.focused.refresh(self.workspace)

    # --- RunHooks ----------------------------------------------------------------------

    def messages(self, *, answering: bool = False, plain: bool = False) -> list[Message]:
        if plain:
            self.last = None  # nothing to calibrate or summarise: the layout is its own
            return plain_request(self.transcript.all(), memories=self.memories, facts=self.facts)
        self.last = self.builder.build(
            self.parts(answering=answering), self.transcript.all(), self.focused.history_content
        )
        if self.last.framed is not None:
            index, sent = self.last.framed
            self.sent[index] = sent
        return self.last.messages

    def parts(self, *, answering: bool = False) -> ContextParts:
        """``answering``: a call that may not use tools gets no "Already fetched" list of
        calls (it can make none, and a tiny model answered with that note)."""
        # A scratchpad holding only the goal would repeat the user's message.
        scratchpad = "" if self.scratchpad.only_goal() else self.scratchpad.render()
        fetched = "" if answering else self.tool_memory.render_hint()
        working = [scratchpad, fetched, self.focused.render()]
        return ContextParts(
            persona=self.persona,
            workspace=self.workspace,
            tools=self.tools.specs(),
            guidance=self.guidance,
            memory_hint=self.memory_hint,
            continued=self.continued,
            working=working,
            now=self.started_at,
            earlier=self.sent,
        )

    def cached_result(self, call: ToolCall) -> ToolOutcome | None:
        tool = self.tools.get(call.name)
        arguments = call.parsed_arguments()
        if tool is None or arguments is None or not tool.read_only:
            return None
        hit = self.tool_memory.lookup(call.name, arguments, True, self.workspace)
        if hit is None:
            return None
        # A cached read of a focused file gets the same one-line stand-in in history.
        self.focused.observe(
            call.name, arguments, hit.content, True, self.workspace, call_id=call.id
        )
        content = f"{hit.content}\n[from this session's tool memory; the inputs are unchanged]"
        return ToolOutcome(
            call.id, call.name, True, content, summarize(hit.content), 0.0, arguments
        )

    def tool_finished(self, call: ToolCall, outcome: ToolOutcome) -> None:
        tool = self.tools.get(call.name)
        if tool is None or outcome.arguments is None or call.name in _UNCACHED_TOOLS:
            return
        try:
            self.tool_memory.store(
                call.name, outcome.arguments, tool.read_only, outcome.content, self.workspace,
                ok=outcome.ok,
            )  # fmt: skip
            self.focused.observe(
                call.name, outcome.arguments, outcome.content, outcome.ok, self.workspace,
                call_id=call.id,
            )  # fmt: skip
        except OSError as exc:  # a vanished file must not break the run
            log.warning("working memory could not record %s: %s", call.name, exc)

    def model_finished(self, sent: list[Message], usage: Usage) -> None:
        if usage.prompt_tokens > 0 and self.last is not None and self.last.messages is sent:
            self.builder.counter.calibrate(self.last.raw_request_tokens, usage.prompt_tokens)

    def pending_events(self) -> list[Event]:
        events = self.plan.drain_events()
        self._note_plan(events)
        return events

    def run_finished(self, status: RunStatus) -> list[Event]:
        self.plan.finish(status)
        return self.pending_events()

    def _note_plan(self, events: list[Event]) -> None:
        """Keep the scratchpad in step with the plan, so the model sees where it is."""
        titles = [step.title for step in self.plan.steps]
        for event in events:
            if isinstance(event, PlanCreated):
                self.scratchpad.from_plan(self.plan.goal, [s.title for s in event.steps])
            elif isinstance(event, StepStart) and event.index < len(titles):
                self.scratchpad.step_started(titles[event.index])
            elif isinstance(event, StepComplete) and event.index < len(titles):
                if event.status == "failed":
                    self.scratchpad.step_failed(
                        titles[event.index], self.plan.steps[event.index].note
                    )
                else:
                    self.scratchpad.step_completed(titles[event.index])

    # --- after the reply ---------------------------------------------------------------

    async def summarize_in_background(self) -> int:
        """Compute what the last request wanted but did not have (never raises)."""
        built = self.last
        if built is None or self.summarizer is None:
            return 0
        done = 0
        try:
            if built.pending_blocks:
                done += await self.summarizer.summarize_blocks(built.pending_blocks)
            if built.digest_source:
                digest = await self.summarizer.digest(built.digest_source)
                key = "digest:" + block_key(built.digest_source)
                self.summarizer.store.put(key, digest, "digest")
                done += 1
        except Exception:  # background work: log, never disturb the conversation
            log.exception("background summarisation failed")
        return done
