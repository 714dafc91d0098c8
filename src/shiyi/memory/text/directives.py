"""What a user's message explicitly asks to be remembered: "Remember that my sister Ana lives
in Porto." asks to keep "My sister Ana lives in Porto."

The model is meant to call ``remember`` for such a message, and a capable one does.  The
embedded default (SmolLM2-135M) did not: its call looped or copied its instructions and was
refused, so a newcomer's first "remember that …" left nothing in memory, and without a
``fast`` model no extraction ever read the message either.  The agent keeps what was asked
when the run stored nothing itself (:meth:`shiyi.agent.agent.Agent`), with this reading of
the request: only an explicit one, at the start of the message.

Not a request to keep a fact: "remember to call mum" (a reminder), "remember when we
hiked?" and "do you remember my address?" (questions), "remember me?".
"""

from __future__ import annotations

import re

# "Remember that …", "Please remember: …", "Don't forget that …", "Keep in mind that …",
# "Note that …", "Can you remember that …?" (a request, though it ends with "?").
_POLITE = r"(?:(?:please|pls|ok|okay|oh|and|also|hey|btw|fyi)[,!]?\s+)*"
_ASKING = r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)"
_VERB = (
    r"(?:remember|don['’]?t\s+forget|do\s+not\s+forget|keep\s+in\s+mind|note|make\s+a\s+note"
    r"|take\s+note|for\s+the\s+record|just\s+so\s+you\s+know)"
)
_ENGLISH = re.compile(
    rf"^\s*{_POLITE}(?P<asking>{_ASKING})?{_VERB}(?:\s+(?:that|this|of\s+this))?"
    r"(?:\s*[:,\-–—]\s*|\s+)(?P<what>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# What follows a reminder or a question, not a statement to keep.
_NOT_A_STATEMENT = re.compile(
    r"^(?:to|me|us|when|what|where|who|whom|why|how|if|whether|which|anything|something"
    r"|everything|nothing|it|this|that|i\s+(?:told|said|mentioned|asked|showed))\b",
    re.IGNORECASE,
)
_CHINESE = re.compile(
    r"^\s*(?:请)?(?:帮我)?(?:记住|记一下|记下|别忘了|不要忘了)[：:，,\s]*(?P<what>\S.*)$"
)
_FIRST_SENTENCE = re.compile(r"^(.+?(?:[.!?](?=\s|$)|[。！？]))", re.DOTALL)


def asked_to_remember(message: str) -> str | None:
    """The statement ``message`` asks to be remembered, or None when it asks for none."""
    if english := _ENGLISH.match(message):
        what = _first_sentence(english.group("what"))
        if _NOT_A_STATEMENT.match(what):
            return None
        if what.endswith("?") and not english.group("asking"):
            return None
        return _statement(what.rstrip("?"))
    if chinese := _CHINESE.match(message):
        what = _first_sentence(chinese.group("what"))
        if what.endswith(("?", "？", "吗")):
            return None
        return _statement(what)
    return None


def _first_sentence(text: str) -> str:
    """Up to the first sentence's end: "I'm vegetarian." of "I'm vegetarian. What's for
    dinner?"."""
    first = _FIRST_SENTENCE.match(text.strip())
    return (first.group(1) if first else text).strip()


def _statement(what: str) -> str | None:
    """``what`` starting with a capital ("my sister …": "My sister …")."""
    sentence = what.strip()
    if len(sentence) < 3:
        return None
    return sentence[0].upper() + sentence[1:]
