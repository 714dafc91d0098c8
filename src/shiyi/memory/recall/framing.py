"""What a question asks, without how it is asked of the assistant.

People ask an assistant the way they talk: "hey, quick question - do you remember when
Caroline went to the support group? thanks!" asks "when Caroline went to the support group?".
The framing's words are searched like any other: "remember" meets every turn where someone
remembers something, and the embedding of the whole drifts towards small talk.  On the
LoCoMo dev questions, each given a framing written from general usage (same run, R@10 of
hybrid search): "Do you remember …" 0.770 against 0.807 as written, "hey, quick question -
…" 0.792, "Hi! I was wondering, …" 0.794, "… thanks!" 0.800; with the framing set aside,
0.807 every time.

:func:`asked` sets aside a greeting, an address to the assistant and a request to recall or
tell at the start ("Hello AI.", "Do you remember", "Can you remind me", "I was wondering if",
"你还记得", "请问"), and thanks or "please" at the end; what is left is searched.  Only the
start and the end are read: "What does Caroline remember about her grandma?" keeps its
"remember".  A question that is all framing is searched as typed.
"""

from __future__ import annotations

import re

_GREETING = (
    r"(?:hey|hi|hiya|hello|yo|ok|okay|so|um+|uh+|well|btw|by the way|quick question"
    r"|one more thing|oh)\b(?:\s+(?:ai|assistant|there|bot|buddy|mate))?\b(?![-'’])"
    r"[\s,.!:;\-–—]*"
)
_REQUEST = (
    r"(?:(?:do|can|could|would|will) you (?:please )?(?:still |happen to |even )?"
    r"(?:remember|recall|tell me|remind me(?: of)?|let me know|look up|check)"
    r"|(?:please )?(?:remind me|tell me|i (?:was|am|'m) (?:just )?wondering|i wonder"
    r"|i forgot|i forget|i can'?t remember|i don'?t remember|any idea|i'?m curious)"
    r")\b(?:\s+(?:if|whether|about))?[\s,:\-–—]*"
)
_LEAD = re.compile(rf"^\s*(?:{_GREETING})*(?:{_REQUEST})?", re.IGNORECASE)
_TAIL = re.compile(
    r"(?<![\s,])[\s,]*\b(?:thanks|thank you|thx|ty|please|pls|cheers)(?: (?:a lot|so much))?"
    r"[\s.!]*$",
    re.IGNORECASE,
)
_CHINESE_LEAD = re.compile(
    r"^\s*(?:(?:你好|您好|嗨|哈喽)[，,！!。\s]*)*"
    r"(?:请问|麻烦问一下|问一下|(?:你|您)?还?记得|帮我(?:查|找|回忆)一下|我想知道|我忘了)[，,：:\s]*"
)
_CHINESE_TAIL = re.compile(r"(?<![，,\s])[，,\s]*(?:谢谢|多谢|谢啦)[！!。\s]*$")
_TAIL_CHARS = 64
"""The end a thanks is looked for in: an unanchored pattern tried at every position of a long
pasted text (a run of spaces) would take time growing with its square.  The patterns also
never start inside a run of what they skip first (the look-behind), so even over a whole
text each run is scanned from its start only."""


def _without_thanks(text: str) -> str:
    head, tail = text[:-_TAIL_CHARS], text[-_TAIL_CHARS:]
    tail = _CHINESE_TAIL.sub("", _TAIL.sub("", tail, count=1), count=1)
    return head + tail


def asked(query: str) -> str:
    """``query`` without its greeting, request to recall and thanks (see the module doc);
    ``query`` itself when nothing is left."""
    rest = _CHINESE_LEAD.sub("", _LEAD.sub("", query, count=1), count=1)
    rest = _without_thanks(rest).strip()
    if not rest or rest == query.strip():
        return query
    if query.rstrip().endswith("?") and not rest.endswith(("?", "？")):
        rest += "?"
    return rest[0].upper() + rest[1:] if query.lstrip()[:1].isupper() else rest
