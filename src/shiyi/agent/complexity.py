"""Decide, without any model call, whether a message asks for multi-step work (seed 000).

A complex message gets :data:`PLAN_GUIDANCE` appended to the system prompt so the model
plans with ``create_plan`` before acting.  Every rule comes from
:class:`~shiyi.config.settings.ComplexitySettings`; any single rule firing is enough.
The checks run on every user message, so all patterns are compiled once up front.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from shiyi.config.settings import ComplexitySettings
from shiyi.errors import ConfigError

PLAN_GUIDANCE = (
    "[Task planning mode]\n"
    "This is a multi-step task. Start by calling create_plan with the steps, then work "
    "through them, calling update_plan as each step finishes; do not wait for the user to "
    "confirm the plan."
)

# ASCII keywords such as "run" or "read" must start a word, or "brunch" and "already"
# would count as tool intents.  The look-behind is ASCII-only on purpose: ``\b`` treats CJK
# characters as word characters, so it would miss "读取file" or "运行run".
_ASCII_WORD_START = "(?<![a-z0-9_])"

# Step patterns like "先.*再.*然后" backtrack polynomially: a 4,000-character paste full of
# 先 and 再 takes seconds.  A request states its shape up front, and anything longer than
# the length threshold is complex anyway, so only this prefix is searched.
_STEP_SCAN_CHARS = 300


@dataclass(frozen=True)
class Assessment:
    """The verdict on one message; ``reasons`` names every rule that fired."""

    complex: bool
    reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _StepPattern:
    source: str
    regex: re.Pattern[str]


class ComplexityDetector:
    """Heuristic complexity rules compiled from settings; :meth:`assess` is pure and cheap."""

    def __init__(self, settings: ComplexitySettings) -> None:
        self._enabled = settings.enabled
        self._steps = _compile_step_keywords(settings.step_keywords)
        self._domains = _compile_domains(settings.multi_tool_domains)
        self._domain_threshold = settings.multi_tool_threshold
        self._length_threshold = settings.message_length_threshold
        self._markers = [m for m in settings.continuation_markers if m.strip()]

    def assess(self, message: str, previous_reply: str | None = None) -> Assessment:
        """Apply every rule to ``message`` (and the assistant's previous reply, if any)."""
        if not self._enabled:
            return Assessment(complex=False)
        reasons = [
            *self._step_reasons(message),
            *self._domain_reasons(message),
            *self._length_reasons(message),
            *self._continuation_reasons(previous_reply),
        ]
        return Assessment(complex=bool(reasons), reasons=reasons)

    def _step_reasons(self, message: str) -> list[str]:
        # The first matching keyword is reason enough; scanning the rest only costs time.
        head = message[:_STEP_SCAN_CHARS]
        for step in self._steps:
            if step.regex.search(head):
                return [f"step keyword '{step.source}'"]
        return []

    def tool_intents(self, message: str) -> list[str]:
        """The tool domains (``multi_tool_domains``) whose keywords the message uses."""
        return [name for name, regex in self._domains if regex.search(message)]

    def _domain_reasons(self, message: str) -> list[str]:
        hit = self.tool_intents(message)
        if len(hit) < self._domain_threshold:
            return []
        return [f"tools from {len(hit)} domains: {', '.join(hit)}"]

    def _length_reasons(self, message: str) -> list[str]:
        # Characters, not tokens or words: the configured threshold is a character count,
        # and counting characters treats Chinese and English alike without a tokenizer.
        if len(message.strip()) > self._length_threshold:
            return [f"message longer than {self._length_threshold} characters"]
        return []

    def _continuation_reasons(self, previous_reply: str | None) -> list[str]:
        if not previous_reply:
            return []
        folded = previous_reply.casefold()
        for marker in self._markers:
            if marker.casefold() in folded:
                return [f"previous reply said '{marker}'"]
        return []


def guidance_for(assessment: Assessment) -> str:
    """The text to append to the system prompt: the plan guidance, or "" for simple tasks."""
    return PLAN_GUIDANCE if assessment.complex else ""


def _compile_step_keywords(patterns: list[str]) -> list[_StepPattern]:
    return [_compile_step_keyword(index, source) for index, source in enumerate(patterns)]


def _compile_step_keyword(index: int, source: str) -> _StepPattern:
    where = f"complexity.step_keywords[{index}]"
    if not source.strip():
        # An empty pattern matches everything and would put every message in plan mode.
        raise ConfigError(f"{where} is empty, which would match every message. Remove it.")
    try:
        # DOTALL: "first ... then" often spans lines in a pasted request.
        regex = re.compile(source, re.IGNORECASE | re.DOTALL)
    except re.error as exc:
        raise ConfigError(
            f"{where} is not a valid regular expression ({exc}): {source!r}. "
            "Fix or remove it in shiyi.yaml."
        ) from exc
    return _StepPattern(source=source, regex=regex)


def _compile_domains(domains: dict[str, list[str]]) -> list[tuple[str, re.Pattern[str]]]:
    compiled: list[tuple[str, re.Pattern[str]]] = []
    for name, keywords in domains.items():
        alternatives = [_keyword_pattern(k) for k in keywords if k.strip()]
        if alternatives:
            compiled.append((name, re.compile("|".join(alternatives), re.IGNORECASE)))
    return compiled


def _keyword_pattern(keyword: str) -> str:
    # Keywords are literal text, never regexes: users write "look up", not patterns.
    text = keyword.strip()
    if text[0].isascii() and text[0].isalnum():
        return _ASCII_WORD_START + re.escape(text)
    return re.escape(text)
