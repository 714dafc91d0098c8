"""The ReAct run loop: stream the model, run the tools it asks for, repeat.

The loop ends when the model answers without tool calls, at ``max_iterations``, on
cancellation, on a usage limit, or when the model is stuck repeating itself.  Every message
is written to the session log as it happens; every failure becomes an ``error`` event and a
run status, never a lost session.

This module drives the run and makes its model calls; the tool calls are
:mod:`~shiyi.agent.tool_turn`'s, and how a run stops early (the stop signal, a cancel that
interrupts any await) :mod:`~shiyi.agent.stops`'s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeAlias

from shiyi.agent.echo import (
    STORED_ARGUMENTS,
    LoopingWrites,
    echo_detail,
    echoed,
    echoed_calls,
    looping_refusal,
    refusal,
    repeated_sentence,
    split_request,
    tool_texts,
)
from shiyi.agent.hooks import RunHooks
from shiyi.agent.stops import Cancellation, _OutOfTime, _Stop
from shiyi.agent.tool_turn import ToolTurns
from shiyi.agent.transcript import Transcript
from shiyi.context.plain import PLAIN_MAX_TOKENS
from shiyi.errors import ContextTooLong, ModelError
from shiyi.events import (
    ErrorEvent,
    Event,
    ReasoningDelta,
    ResponseEnd,
    ResponseStart,
    RunEnd,
    RunStart,
    RunStatus,
    TextDelta,
    ToolResultEvent,
    UsageEvent,
    UserMessageInjected,
)
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.protocol import ChatModel
from shiyi.llm.tokens import estimated_usage
from shiyi.llm.types import (
    Message,
    ReasoningChunk,
    StreamChunk,
    TextChunk,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    Usage,
)
from shiyi.tools.base import ToolContext
from shiyi.tools.registry import ToolRegistry

log = logging.getLogger(__name__)
PLAN_TOOL = "create_plan"
Offload: TypeAlias = Callable[[Callable[[], list[Message]]], Awaitable[list[Message]]]


@dataclass(slots=True, frozen=True)
class RunLimits:
    max_iterations: int = 25
    stuck_repeats: int = 3
    max_run_tokens: int | None = None
    history_tokens: int = 6000
    temperature: float | None = None
    max_tokens: int | None = None
    opening_tool_choices: tuple[ToolChoice, ...] = ()
    """tool_choice for the first steps, then "auto" (a small model: look, then answer)."""
    reply_seconds: float | None = None
    """The longest one reply may take; then it is cut and the run stops (a note says so)."""
    bare_answers: bool = False
    """A step whose tool_choice is "none" goes greedy (unless a temperature is set) in the
    plain answer layout of a tiny model (:mod:`shiyi.context.plain`)."""
    opening: Message | None = None
    """The first step's reply, made by the agent (:mod:`shiyi.agent.dispatch`)."""
    worded: Callable[[str], str] | None = None
    """The answer after the opening's tool call, made by the agent from the call's result
    ("" leaves it to the model): "Noted: …" once ``remember`` stored what was asked."""
    prompt_notes: tuple[str, ...] = field(default_factory=tuple)
    """Text the model's runtime adds to the prompt itself (checked for echoes too)."""


class RunLoop:
    def __init__(
        self,
        *,
        run_id: str,
        session_id: str,
        goal: str,
        model: ChatModel,
        tools: ToolRegistry,
        tool_context: ToolContext,
        transcript: Transcript,
        hooks: RunHooks,
        limits: RunLimits,
        offload: Offload | None = None,
        on_echo: Callable[[str], None] | None = None,
    ) -> None:
        """``offload`` runs the CPU-heavy request building (a server passes a worker
        thread, so one run's context building never holds up another's events).
        ``on_echo`` hears the copied words of a final answer that echoed shiyi's text
        (:mod:`shiyi.agent.echo`) before the answer is recorded."""
        self.run_id = run_id
        self.session_id = session_id
        self.goal = goal
        self._model = model
        self._tools = tools
        self.inputs: list[str] = [goal]
        """The goal and every message that joined the run (what routing compares with)."""
        # The run's own context: the agent's one is shared by its concurrent runs.
        self._ctx = replace(
            tool_context, session_id=session_id, run_id=run_id, conversation=self.inputs
        )
        self._transcript = transcript
        self._hooks = hooks
        self._limits = limits
        self._offload = offload
        self._inbox: list[str] = []
        self.last_input = time.monotonic()
        self._cancellation = Cancellation()
        self._tool_turns = ToolTurns(
            tools=tools,
            context=self._ctx,
            hooks=hooks,
            cancellation=self._cancellation,
            record=self._record,
            stuck_repeats=limits.stuck_repeats,
        )
        self._mode: str | None = None
        self.iterations = 0
        self.usage = Usage()
        self.status: RunStatus | None = None
        self.echo = ""
        """The words the final answer copied from shiyi's text ("" if it did not)."""
        self.remembered = False
        """Whether a call of a memory-writing tool (``remember``) succeeded in this run."""
        self._echoed_calls: dict[str, str] = {}
        """The last reply's calls refused as memory writes: call id -> why not."""
        self._on_echo = on_echo
        self._detached = False

    # --- control from outside --------------------------------------------------------------

    def inject(self, text: str) -> bool:
        """Queue a user message; it joins the run at the next iteration boundary.

        False when the run has already ended (the message must go elsewhere).  A message
        that arrives during the final answer gets one more iteration, so it is never lost.
        """
        if self.status is not None or self.cancelled:
            return False
        self._inbox.append(text)
        self.inputs.append(text)
        self.last_input = time.monotonic()
        return True

    def abandon(self, reason: str) -> None:
        """End a run whose events were never consumed (its caller went away first)."""
        self._cancellation.reason = self._cancellation.reason or reason
        self._finish("cancelled", self._cancellation.reason)

    def detach(self, reason: str) -> None:
        """End the run now, as its agent closes while a consumer still holds its stream:
        what the abandoned stream does when it is finalised later must write nothing, since
        the session log is closed by then."""
        self.abandon(reason)
        self._detached = True

    def cancel(self, reason: str = "cancelled by the user") -> None:
        self._cancellation.cancel(reason)

    @property
    def cancelled(self) -> bool:
        return self._cancellation.reason is not None

    # --- the loop --------------------------------------------------------------------------

    async def events(self) -> AsyncGenerator[Event, None]:
        status: RunStatus = "failed"
        detail = ""
        yield RunStart(run_id=self.run_id, session_id=self.session_id, goal=self.goal)
        try:
            status, detail = (
                "max_iterations",
                (f"stopped after {self._limits.max_iterations} iterations without a final answer"),
            )
            while self.iterations < self._limits.max_iterations:
                self.iterations += 1
                for injected in self._drain_inbox():
                    yield injected
                reply = Message("assistant")
                made = self._made_reply()
                # Closed with this stream, not left to the garbage collector: a finaliser
                # running after the agent closed would write to a closed session log.
                turn_events = self._dispatched_turn(made) if made else self._model_turn()
                async with aclosing(turn_events) as turn:
                    async for event in turn:
                        if isinstance(event, Message):
                            reply = event
                        else:
                            yield event
                if not reply.tool_calls:
                    if self._inbox and self.iterations < self._limits.max_iterations:
                        continue  # the user added something while the model answered
                    if not reply.content.strip():
                        # Said nothing and called nothing: not an answer to report as one.
                        raise ModelError(
                            f"the model ({self._model.model_name}) returned an empty reply",
                            retryable=True,
                        )
                    status, detail = "completed", ""
                    if self.echo:
                        status, detail = "failed", echo_detail(self.echo)
                        yield ErrorEvent(message=detail, retryable=True)
                    break
                calls = self._tool_turns.run(reply.tool_calls, self._echoed_calls)
                async with aclosing(calls) as tools:
                    async for event in tools:
                        if isinstance(event, ToolResultEvent) and event.name in STORED_ARGUMENTS:
                            self.remembered = self.remembered or event.ok
                        yield event
                for event in self._announced(self._hooks.pending_events()):
                    yield event
        except _Stop as stop:
            status, detail = stop.status, stop.detail
        except ModelError as exc:
            status, detail = "failed", str(exc)
            code = exc.code if isinstance(exc, ContextTooLong) else ""
            yield ErrorEvent(message=str(exc), retryable=exc.retryable, code=code)
        except asyncio.CancelledError:
            status, detail = "cancelled", self._cancellation.reason or "the caller went away"
            self._finish(status, detail)
            raise
        except Exception as exc:  # a bug must end the run visibly, not lose the session
            log.exception("run %s failed", self.run_id)
            status, detail = "failed", f"internal error: {type(exc).__name__}: {exc}"
            yield ErrorEvent(message=detail, retryable=False)
        except GeneratorExit:
            # The consumer closed the stream early (e.g. an HTTP client went away).
            cancellation = self._cancellation
            cancellation.reason = cancellation.reason or "the caller stopped reading events"
            self._finish("cancelled", cancellation.reason)
            raise
        self._finish(status, detail)
        # A run that streamed nothing (an error first, say) still tells the UI its mode.
        opening: list[Event] = [] if self._mode else [ResponseStart(mode="direct")]
        for event in self._announced([*opening, *self._closing(status)]):
            yield event
        yield ResponseEnd()
        yield RunEnd(run_id=self.run_id, status=status, iterations=self.iterations, detail=detail)

    def _finish(self, status: RunStatus, detail: str) -> None:
        if self.status is not None:
            return
        self.status = status
        self._transcript.end_run(
            self.run_id,
            status,
            iterations=self.iterations,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            cost=self.usage.cost,
            detail=detail,
        )

    def _drain_inbox(self) -> list[Event]:
        events: list[Event] = []
        while self._inbox:
            text = self._inbox.pop(0)
            self._record(Message("user", text))
            events.append(UserMessageInjected(text=text))
        return events

    def _record(self, message: Message) -> None:
        if self._detached:
            log.debug("run %s ended with its agent; not recording a %s", self.run_id, message.role)
            return
        self._transcript.append(message, run_id=self.run_id, iteration=self.iterations)

    def _closing(self, status: RunStatus) -> list[Event]:
        try:
            return self._hooks.run_finished(status)
        except Exception:  # closing bookkeeping must not turn a finished run into a crash
            log.exception("run_finished hook failed for %s", self.run_id)
            return []

    def _announced(self, events: Sequence[Event]) -> list[Event]:
        """Drop a ``response_start`` that repeats the mode already announced.

        The first event after ``run_start`` tells the UI the mode: ``plan`` when the model's
        first move is ``create_plan``, else ``direct``; a later ``create_plan`` switches it.
        """
        out: list[Event] = []
        for event in events:
            if isinstance(event, ResponseStart):
                if event.mode == self._mode:
                    continue
                self._mode = event.mode
            out.append(event)
        return out

    # --- one model call --------------------------------------------------------------------

    def _made_reply(self) -> Message | None:
        """This step's reply when the agent makes it: the opening, then the answer worded
        from the opening call's result (None: the model replies)."""
        if self.iterations == 1:
            return self._limits.opening
        worded = self._limits.worded
        if self.iterations != 2 or worded is None or self._limits.opening is None:
            return None
        last = self._transcript.all()[-1:]
        result = last[0].content if last and last[0].role == "tool" else ""
        text = worded(result) if result else ""
        return Message("assistant", text) if text else None

    async def _dispatched_turn(self, reply: Message) -> AsyncGenerator[Event | Message, None]:
        """A reply the agent made itself, recorded as if the model had made it."""
        self._cancellation.check()
        for event in self._announced([ResponseStart(mode="direct")]):
            yield event
        if reply.content:
            yield TextDelta(text=reply.content)
        self._record(reply)
        yield reply

    async def _model_turn(self) -> AsyncGenerator[Event | Message, None]:
        """Stream one reply; yields events, then the assembled (logged) assistant message."""
        self._cancellation.check()
        choice = self._tool_choice()
        bare = choice == "none" and self._limits.bare_answers
        build = partial(self._hooks.messages, answering=choice == "none", plain=bare)
        messages = build() if self._offload is None else await self._offload(build)
        assembler = ReplyAssembler()
        temperature, max_tokens = self._limits.temperature, self._limits.max_tokens
        if bare and temperature is None:
            # Greedy: SmolLM2-135M answered 8 of 13 everyday questions right so, and
            # drifted (echoed notes, wrong sums) when sampled; its tool calls got worse.
            temperature = 0.0
        if bare and max_tokens is None:
            max_tokens = PLAIN_MAX_TOKENS
        specs = [] if bare else self._tools.specs()
        stream = self._model.stream(
            messages,
            tools=specs,
            tool_choice=choice,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        cut = ""
        text = ""
        stopped = False  # the stream was left before its end: its usage never came
        looping = LoopingWrites()
        try:
            relay = self._cancellation.relay(stream, self._limits.reply_seconds)
            async with aclosing(relay) as chunks:
                async for chunk in chunks:
                    assembler.add(chunk)
                    if self._mode is None:
                        for event in self._announced(_mode_from(chunk)):
                            yield event
                    if isinstance(chunk, TextChunk):
                        yield TextDelta(text=chunk.text)
                        text += chunk.text
                        if stopped := bool(repeated_sentence(text)):
                            break  # said the same thing three times: the rest is more of it
                    elif isinstance(chunk, ReasoningChunk):
                        yield ReasoningDelta(text=chunk.text)
                    elif isinstance(chunk, ToolCallDelta) and (stopped := looping.add(chunk)):
                        break  # a memory write looping until the token cap: cut it here
        except _OutOfTime:
            cut = (
                f"the reply was cut after {self._limits.reply_seconds:g} s "
                "(agent.reply_seconds); what it said so far is kept"
            )
        finally:
            reply = assembler.message()
            if cut:  # a call cut off mid-way has no trustworthy arguments
                reply = replace(reply, tool_calls=())
            self._check_echo(reply, messages)
            for index, said in looping.said.items():
                self._echoed_calls[assembler.call_id(index)] = looping_refusal(said)
            if reply.content or reply.tool_calls or reply.reasoning:
                self._record(reply)  # keep what the user already saw, even on failure
        if (stopped or cut) and not assembler.usage.total_tokens:
            assembler.usage = estimated_usage(messages, specs, _said(assembler.message()))
        self.usage = self.usage + assembler.usage
        self._hooks.model_finished(messages, assembler.usage)
        yield UsageEvent(
            prompt_tokens=assembler.usage.prompt_tokens,
            completion_tokens=assembler.usage.completion_tokens,
            cost=assembler.usage.cost,
            estimated=assembler.usage.estimated,
        )
        if cut:
            yield ErrorEvent(message=cut, retryable=True)
            raise _Stop("usage_limit", cut)
        yield reply
        self._check_usage(reply.tool_calls)

    def _check_echo(self, reply: Message, messages: Sequence[Message]) -> None:
        """Note a final answer that copies shiyi's text, before it is recorded (so memory
        can take it for the echo it is), and the calls that would store such text."""
        if reply.tool_calls:
            self._echoed_calls = {}
            if not any(call.name in STORED_ARGUMENTS for call in reply.tool_calls):
                return  # nothing would be stored: no need to read the request
            # The tools' own descriptions are shiyi's words too: a tiny model stored "The
            # thing to remember, as one self-contained sentence" (remember's argument doc).
            notes = [*self._limits.prompt_notes, *tool_texts(self._tools.specs())]
            request = split_request(messages, notes)
            self._echoed_calls = {
                call_id: refusal(echo)
                for call_id, echo in echoed_calls(reply.tool_calls, request).items()
            }
            return
        if not reply.content.strip():
            return
        self.echo = echoed(reply.content, split_request(messages, self._limits.prompt_notes))
        if self.echo and self._on_echo is not None:
            try:
                self._on_echo(self.echo)
            except Exception:  # bookkeeping must not lose the reply
                log.exception("could not note the echo of run %s", self.run_id)

    def _tool_choice(self) -> ToolChoice:
        opening = self._limits.opening_tool_choices
        return opening[self.iterations - 1] if self.iterations <= len(opening) else "auto"

    def _check_usage(self, pending: Sequence[ToolCall]) -> None:
        limit = self._limits.max_run_tokens
        if limit is not None and self.usage.total_tokens >= limit:
            self._tool_turns.skip(pending, "not run: the run reached its token limit")
            raise _Stop("usage_limit", f"used {self.usage.total_tokens} tokens (limit {limit})")


def _mode_from(chunk: StreamChunk) -> list[Event]:
    """The mode a first chunk reveals, if any (whitespace and usage reveal nothing)."""
    if isinstance(chunk, ToolCallDelta) and chunk.name:
        return [ResponseStart(mode="plan" if chunk.name == PLAN_TOOL else "direct")]
    if isinstance(chunk, TextChunk | ReasoningChunk) and chunk.text.strip():
        return [ResponseStart(mode="direct")]
    return []


def _said(reply: Message) -> str:
    """Everything a reply generated: text, reasoning and its calls."""
    calls = "".join(call.name + call.arguments for call in reply.tool_calls)
    return reply.content + (reply.reasoning or "") + calls
