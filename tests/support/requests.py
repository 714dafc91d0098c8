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


def run_context(request: ScriptedRequest) -> str:
    """The per-run part of a request (time, guidance, memories, working notes)."""
    for message in reversed(request.messages):
        if message.role == "user" and message.content.startswith(CONTEXT_OPEN):
            inner, _, _ = message.content[len(CONTEXT_OPEN) :].partition(CONTEXT_CLOSE)
            return inner.strip()
    raise AssertionError("the request carries no <context> block")
