"""Whose words a question to the assistant asks about: its own, or the user's.

In a user's memory with an assistant, "you" in a question is the assistant and "I" the user.
"The stretches you suggested", "like you said", "your packing list" ask about what the
assistant said or made; "what I told you about my knee", "as I mentioned" ask about the
user's own words.  :func:`said_by` reads which from the phrasing alone (written from how
people talk to an assistant, not from any data set); the retriever then favours that role's
turns (:mod:`shiyi.memory.recall.boosts`), as it favours a person a question names.  A
question saying both, or neither, favours no one.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias

Role: TypeAlias = Literal["assistant", "user", ""]

_SAID = (
    r"(?:said|suggested|recommended|mentioned|proposed|advised|told\s+me|gave\s+me|showed\s+me"
    r"|sent\s+me|wrote|drafted|outlined|listed|made|created|designed|planned|put\s+together"
    r"|came\s+up\s+with|shared|explained|described|promised|offered|set\s+up|laid\s+out"
    r"|walked\s+me\s+through)"
)
"""What an assistant did with words or for the user: said, suggested, drafted, put together."""
_SAY = (
    r"(?:say|suggest|recommend|mention|propose|advise|tell\s+me|give\s+me|show\s+me|send\s+me"
    r"|write|draft|outline|list|make|create|design|plan|put\s+together|come\s+up\s+with"
    r"|share|explain|describe|promise|offer|set\s+up|lay\s+out|walk\s+me\s+through)"
)
"""The same asked with "did": "what did you suggest?"."""
_YOUR_WORK = (
    r"(?:suggestions?|recommendations?|advice|tips?|ideas?|drafts?|plans?|lists?|outlines?"
    r"|summary|template|checklist|schedule|itinerary|version|answer|explanation)"
)
_ASSISTANT = re.compile(
    rf"(?i)\byou(?:'ve|'d|\s+have|\s+had|\s+just|\s+already|\s+once|\s+also|\s+even)*"
    rf"\s+{_SAID}\b"
    rf"|\bdid\s+you\s+(?:ever\s+|once\s+|just\s+)?{_SAY}\b"
    rf"|\byour\s+(?:[a-z'-]+\s+){{0,2}}?{_YOUR_WORK}\b"
)
_USER = re.compile(
    r"(?i)\bI(?:'ve|'d|\s+have|\s+had|\s+just|\s+already|\s+once|\s+also)*"
    r"\s+(?:told\s+you|mentioned|shared\s+with\s+you|explained\s+to\s+you|asked\s+you)\b"
    r"|\bdid\s+I\s+(?:ever\s+|once\s+)?(?:tell\s+you|say|mention|share|explain|ask\s+you)\b"
    r"|\b(?:as|like|what)\s+I\s+(?:said|wrote)\b"
)


def said_by(query: str) -> Role:
    """``"assistant"`` when the question asks about what the assistant said or made ("the
    plan you put together"), ``"user"`` about what the user said ("what I told you about my
    budget"), ``""`` when it asks about both or neither."""
    assistant = _ASSISTANT.search(query) is not None
    user = _USER.search(query) is not None
    if assistant == user:
        return ""
    return "assistant" if assistant else "user"
