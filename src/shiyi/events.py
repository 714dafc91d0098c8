"""The streaming protocol: one tagged union of events, identical in Python, SSE and the CLI.

Each event is a small pydantic model with a literal ``type``; :data:`Event` is their
discriminated union, so ``EventAdapter.validate_json(line)`` turns a JSON line back into the
right class.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

RunStatus: TypeAlias = Literal[
    "completed", "max_iterations", "cancelled", "failed", "stuck", "usage_limit"
]


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class RunStart(_Event):
    type: Literal["run_start"] = "run_start"
    run_id: str
    session_id: str
    goal: str


class ResponseStart(_Event):
    type: Literal["response_start"] = "response_start"
    mode: Literal["direct", "plan"] = "direct"


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ReasoningDelta(_Event):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class ToolCallEvent(_Event):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    name: str
    args: dict[str, Any] | None = None
    """Parsed arguments; ``None`` when the model sent malformed JSON."""


class ToolResultEvent(_Event):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    ok: bool
    summary: str
    duration_ms: float = 0.0
    cached: bool = False


class PlanStep(BaseModel):
    title: str
    description: str = ""


class PlanCreated(_Event):
    type: Literal["plan_created"] = "plan_created"
    steps: list[PlanStep]


class StepStart(_Event):
    type: Literal["step_start"] = "step_start"
    index: int


class StepComplete(_Event):
    type: Literal["step_complete"] = "step_complete"
    index: int
    status: Literal["done", "failed", "skipped"] = "done"


class UsageEvent(_Event):
    type: Literal["usage"] = "usage"
    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    estimated: bool = False
    """The server reported no usage; the counts are the local tokenizer's estimate."""


class ResponseEnd(_Event):
    type: Literal["response_end"] = "response_end"


class RunEnd(_Event):
    type: Literal["run_end"] = "run_end"
    run_id: str
    status: RunStatus
    iterations: int = 0
    detail: str = ""


class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    message: str
    retryable: bool = False
    code: str = ""
    """What kind of failure, when the caller can act on it: ``context_length_exceeded``
    (the message or conversation is too long for the model; a retry cannot help)."""


class Routed(_Event):
    """Where a message went (seed 002, message routing); the first event of every send.

    ``join``: it was added to the active run ``run_id``; ``new``: it starts run ``run_id``
    (after the session's active run, if any, has finished); ``continue``: it starts run
    ``run_id`` seeded with what memory holds about the ended run ``from_run_id``.
    """

    type: Literal["routed"] = "routed"
    decision: Literal["join", "new", "continue"]
    run_id: str
    reason: str
    via: Literal["explicit", "heuristic", "model", "default"] = "default"
    score: float | None = None
    from_run_id: str | None = None
    seeded: int = 0
    """How many remembered items about ``from_run_id`` the new run was given."""


class UserMessageInjected(_Event):
    """A message that arrived while the run was executing and joined it."""

    type: Literal["user_message"] = "user_message"
    text: str


class MemoryWork(_Event):
    """What became of a one-shot run's memory work (embedding, extraction, consolidation,
    the run's archive) after its reply: the last event of ``shiyi run --json``.

    ``done``: all of it ran here; ``waiting``: some stays queued (``waiting`` per job kind,
    ``reason`` why, ``how`` to process it); ``interrupted``: Ctrl-C ended the wait, the jobs
    stay queued; ``handed_off``: a running service owns the store and processes it.
    """

    type: Literal["memory_work"] = "memory_work"
    outcome: Literal["done", "waiting", "interrupted", "handed_off"]
    learned: int = 0
    """Facts this run's conversation added (pending ones included; its archive not)."""
    replaced: int = 0
    """Of ``learned``, how many replaced an older value of their slot."""
    waiting: dict[str, int] = Field(default_factory=dict)
    reason: str = ""
    how: str = ""
    waited_seconds: float = 0.0
    message: str = ""
    """The sentence ``shiyi run`` prints on stderr."""


Event: TypeAlias = Annotated[
    RunStart
    | ResponseStart
    | TextDelta
    | ReasoningDelta
    | ToolCallEvent
    | ToolResultEvent
    | PlanCreated
    | StepStart
    | StepComplete
    | UsageEvent
    | ResponseEnd
    | RunEnd
    | ErrorEvent
    | Routed
    | UserMessageInjected
    | MemoryWork,
    Field(discriminator="type"),
]

EventAdapter: TypeAdapter[Event] = TypeAdapter(Event)


def event_to_json(event: Event) -> str:
    return event.model_dump_json()


def event_from_json(text: str | bytes) -> Event:
    return EventAdapter.validate_json(text)
