"""A rule-based fake ``fast`` model that extracts the way real models do (issue 30).

It reads the rendered window like the real model and reports a fact for every *user* line
in it that a rule matches, so a sliding window re-reports old statements.  Like real
models, it names the value's entity in ``about`` ("Berlin" for "I live in Berlin") and words
the key as the rule says (a test can vary the wording per statement).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call

LINE = re.compile(r"^\[[^\]]+\] user: (?P<text>.*)$", re.MULTILINE)
Fact = dict[str, Any]


@dataclass(slots=True)
class Rule:
    pattern: str
    make: Callable[[re.Match[str]], Any]
    many: bool = False
    """``make`` returns a list of facts."""

    def facts(self, text: str) -> list[Fact]:
        found: list[Fact] = []
        for match in re.finditer(self.pattern, text, re.IGNORECASE):
            made = self.make(match)
            found += made if self.many else [made]
        return found


def lives(keys: dict[str, str] | None = None, about_value: bool = True) -> Rule:
    """ "I live in X" / "I moved to X": key ``keys[X]`` (default "lives_in"), about [X]."""
    wording = keys or {}

    def make(m: re.Match[str]) -> Fact:
        city = m.group("city")
        about = [city] if about_value else ["user"]
        return {"key": wording.get(city, "lives_in"), "value": city, "confidence": 0.9,
                "about": about}  # fmt: skip

    return Rule(r"\bI (?:live in|moved to|now live in|am living in) (?P<city>[A-Z]\w+)", make)


def moved_from(key: str = "city") -> Rule:
    """ "I moved from X to Y": Y, and (as a sloppy model does) X too, both as ``key``."""

    def make(m: re.Match[str]) -> list[Fact]:
        return [{"key": key, "value": city, "confidence": 0.9, "about": [city]}
                for city in (m.group("old"), m.group("city"))]  # fmt: skip

    return Rule(r"\bI moved from (?P<old>[A-Z]\w+) to (?P<city>[A-Z]\w+)", make, many=True)


def works() -> Rule:
    def make(m: re.Match[str]) -> Fact:
        city = m.group("city")
        return {"key": "works_in", "value": city, "confidence": 0.9, "about": [city]}

    return Rule(r"\bI work in (?P<city>[A-Z]\w+)", make)


def likes() -> Rule:
    """ "maybe I like X" is a hedge (0.6: pending); "I really like X" is plain (0.9)."""

    def make(m: re.Match[str]) -> Fact:
        hedged = bool(m.group("hedge"))
        return {"key": "likes", "value": f"likes {m.group('food')}", "kind": "preference",
                "confidence": 0.6 if hedged else 0.9, "about": [m.group("food")]}  # fmt: skip

    return Rule(r"(?P<hedge>maybe )?\bI (?:really )?like (?P<food>\w+)", make)


@dataclass(slots=True)
class RuleExtractor:
    rules: list[Rule] = field(default_factory=list)

    def __call__(self, request: ScriptedRequest) -> ScriptedReply:
        facts: list[Fact] = []
        for line in LINE.finditer(request.last.content):
            for rule in self.rules:
                facts += rule.facts(line.group("text"))
        arguments = {"entities": [], "relations": [], "facts": facts}
        return ScriptedReply(tool_calls=(call("record_memories", arguments),))

    def model(self) -> ScriptedModel:
        return ScriptedModel([self], repeat_last=True)
