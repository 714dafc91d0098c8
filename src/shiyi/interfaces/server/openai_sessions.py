"""Which shiyi session a chat-completions request continues.

Chat clients resend the whole conversation every turn and have no session id of ours, so:

1. ``X-Shiyi-Session: <id>`` names the session (one of the caller's; else 404).
2. Otherwise the conversation's opening exchange identifies it: a hash of the caller, the
   model (profile), the ``user`` field, the system messages, the first user message and the
   first assistant reply.  A request whose history holds no assistant reply yet opens a new
   session; its reply registers the opening, so the next request (the same history plus that
   reply and a new user message) finds the session again.  Two chats that both begin with
   "hi" stay apart, since each got its own first reply.

Only the last user message is the run's input: the earlier ones are already in the
session's log and memory.  A history nobody here has seen (a chat begun elsewhere) starts a
new session with those turns logged as its history, outside any run, so the agent sees them
and memory does not archive them as if they had been said here.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from shiyi.errors import OpenAIRequestError, SessionNotFound
from shiyi.interfaces.server.identity import Identity
from shiyi.interfaces.server.openai_wire import ChatRequest
from shiyi.interfaces.server.service import AgentService
from shiyi.llm.types import Message

SESSION_HEADER = "x-shiyi-session"
_META_PREFIX = "openai.conversation."
_TITLE_WIDTH = 60


@dataclass(slots=True)
class Conversation:
    """A request's messages: what identifies the chat, its history and its new input."""

    system: list[str]
    history: list[Message]
    """User and assistant turns before the new input (tool and function turns left out)."""
    input: str
    user: str = ""
    opening: list[str] = field(default_factory=list)
    """The first user message and first assistant reply (when the history has one)."""

    @classmethod
    def of(cls, request: ChatRequest) -> Conversation:
        system: list[str] = []
        history: list[Message] = []
        for i, message in enumerate(request.messages[:-1]):
            text = message.text(f"messages[{i}]", strict=False)
            if message.role in ("system", "developer"):
                system.append(text)
            elif message.role == "user":
                history.append(Message(role="user", content=text))
            elif message.role == "assistant" and text:
                history.append(Message(role="assistant", content=text))
        last = len(request.messages) - 1
        new_input = request.messages[-1].text(f"messages[{last}]")
        if not new_input.strip():
            raise OpenAIRequestError(400, "the last user message is empty", param="messages")
        found = cls(system, history, new_input, request.user or "")
        first_user = next((m for m in history if m.role == "user"), None)
        first_reply = next((m for m in history if m.role == "assistant"), None)
        if first_user is not None and first_reply is not None:
            found.opening = [first_user.content, first_reply.content]
        return found

    def opening_after(self, reply: str) -> list[str]:
        """The opening once ``reply`` answers this request (for a new conversation)."""
        if self.opening:
            return self.opening
        first_user = next((m.content for m in self.history if m.role == "user"), self.input)
        return [first_user, reply]


_SHOWN_REASONING = re.compile(r"<details[^>]*>.*?</details>|<think>.*?</think>", re.S)
"""Reasoning a chat front-end folded into the reply it resends (the stream's
``reasoning_content``): not part of the words the key was made from."""


def _same_words(text: str) -> str:
    return " ".join(_SHOWN_REASONING.sub(" ", text).split())


def _key(who: Identity, model: str, conversation: Conversation, opening: list[str]) -> str:
    parts = [who.user_id, who.agent_id, model, conversation.user, conversation.system]
    raw = json.dumps([*parts, [_same_words(text) for text in opening]], ensure_ascii=False)
    return _META_PREFIX + hashlib.sha256(raw.encode()).hexdigest()


class SessionMapper:
    def __init__(self, service: AgentService) -> None:
        self.service = service

    def resolve(
        self, who: Identity, model: str, conversation: Conversation, header: str | None
    ) -> str:
        """The session the request continues (see the module doc), created if new."""
        log = self.service.log
        if header:
            try:
                log.get_session(header, owner=who.owner)
            except SessionNotFound:
                raise OpenAIRequestError(
                    404,
                    f"no session {header!r} of yours (X-Shiyi-Session); leave the header out "
                    "to continue by the conversation's history",
                    code="session_not_found",
                ) from None
            return header
        if conversation.opening:
            known = log.get_meta(_key(who, model, conversation, conversation.opening))
            if known is not None and self._owned(known, who):
                return known
        session_id = self.service.create_session(who, _title(conversation))
        for message in conversation.history:
            log.append(session_id, message)  # no run: history, not a turn to archive
        if conversation.opening:
            self._register(who, model, conversation, conversation.opening, session_id)
        return session_id

    def answered(
        self, who: Identity, model: str, conversation: Conversation, session_id: str, reply: str
    ) -> None:
        """Register a new conversation's opening exchange once its first reply is known."""
        if conversation.opening or not reply:
            return
        self._register(who, model, conversation, conversation.opening_after(reply), session_id)

    def _register(
        self,
        who: Identity,
        model: str,
        conversation: Conversation,
        opening: list[str],
        session_id: str,
    ) -> None:
        self.service.log.set_meta(_key(who, model, conversation, opening), session_id)

    def _owned(self, session_id: str, who: Identity) -> bool:
        try:
            self.service.log.get_session(session_id, owner=who.owner)
        except SessionNotFound:
            return False  # deleted since: the conversation starts over in a new session
        return True


def _title(conversation: Conversation) -> str:
    first = next((m.content for m in conversation.history if m.role == "user"), "")
    text = " ".join((first or conversation.input).split())
    return text if len(text) <= _TITLE_WIDTH else text[: _TITLE_WIDTH - 1] + "…"
