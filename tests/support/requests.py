"""Reading what the agent sent to a model: the run context and the user's own words."""

from __future__ import annotations

from shiyi.context.builder import CONTEXT_CLOSE, CONTEXT_OPEN
from shiyi.llm.scripted import ScriptedRequest
from shiyi.llm.types import Message


def user_words(message: Message) -> str:
    """A user message's text without the ``<context>`` block the builder put in front."""
    if message.content.startswith(CONTEXT_OPEN):
        _, _, words = message.content.partition(f"{CONTEXT_CLOSE}\n\n")
        return words
    return message.content


def tool_text(message: Message) -> str:
    """A tool result's text without the working notes the builder put after it."""
    text, _, _ = message.content.partition(f"\n\n{CONTEXT_OPEN}\n")
    return text


def run_context(request: ScriptedRequest) -> str:
    """The per-run notes of a request: the block opening the run's user message (time,
    guidance, memories) and the working notes closing the request, if apart."""
    messages = request.messages
    for at in range(len(messages) - 1, -1, -1):
        message = messages[at]
        if message.role == "user" and message.content.startswith(CONTEXT_OPEN):
            inner, _, _ = message.content[len(CONTEXT_OPEN) :].partition(CONTEXT_CLOSE)
            return "\n\n".join([inner.strip(), *_closing_notes(messages[at + 1 :])])
    raise AssertionError("the request carries no <context> block")


def _closing_notes(messages: list[Message]) -> list[str]:
    if not messages or CONTEXT_OPEN not in messages[-1].content:
        return []
    _, _, notes = messages[-1].content.rpartition(CONTEXT_OPEN)
    return [notes.removesuffix(CONTEXT_CLOSE).strip()]
