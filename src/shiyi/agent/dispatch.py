"""Clear requests answered for a guided small model without asking it to pick a tool.

SmolLM2-135M, forced to call a tool for "Read notes.txt and tell me what it says.", asked
for ``read_file(path="read_file.txt")``; asked "What is 2 + 3?" it explained Unix
timestamps.  When a message says plainly what it needs, the agent does that step itself and
the model only puts the result into words (the plain answer layout,
:mod:`shiyi.context.plain`):

* a file of the workspace named in a message that reads, shows or asks about it:
  ``read_file`` on it (never for a message that asks to change it: that stays the model's);
* a request to list the files of the folder: ``list_dir`` of the workspace;
* arithmetic on numbers (``2 + 3``, ``7 times 6``, ``10 minus 4``): evaluated here, exactly,
  and given to the model as a fact;
* an explicit request to remember ("Remember that my sister Ana lives in Porto."):
  ``remember`` of the statement it names (:mod:`shiyi.memory.text.directives`).  Left to
  itself, SmolLM2-135M's call looped on one sentence or copied its instructions, and it
  answered "I'm sorry for your loss".

Everything else goes to the model as before.  Pure functions of the message and the
workspace: no model call.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import re
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from shiyi.llm.types import Message, ToolCall
from shiyi.memory.lifecycle.asked_slots import asked_slot, in_slot
from shiyi.memory.text.directives import asked_to_remember

_HAN = re.compile(r"[\u4e00-\u9fff]")
_FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.[A-Za-z0-9]{1,8})(?![\w/-])")
_CHANGES = re.compile(
    r"\b(write|edit|change|delete|remove|rename|create|append|replace|fix|update|add|"
    r"overwrite|move|copy|save)\b",
    re.I,
)
_LISTS = re.compile(
    r"\b(list|show|which|what)\b[^.?!]{0,200}\b(files?|folders?|directory|directories)\b"
    r"|^\s*ls\s*$",
    re.I,
)
_WORD_OPERATORS = (
    (re.compile(r"\bmultiplied\s+by\b|\btimes\b|(?<=\d)\s*[x×]\s*(?=\d)", re.I), " * "),
    (re.compile(r"\bdivided\s+by\b|÷", re.I), " / "),
    (re.compile(r"\bplus\b", re.I), " + "),
    (re.compile(r"\bminus\b|−", re.I), " - "),
)
_SUM = re.compile(r"\b(?:add|sum\s+of)\s+(-?\d+(?:\.\d+)?)\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)", re.I)
# Only a message that asks for a value: "Call me 10-12" or "on 28/11/2026" is no sum.
_ASKS = re.compile(
    r"\b(what\s+is|what's|whats|what(?=\s+[-(\d])|tell\s+me|how\s+much|calculate|compute|"
    r"work\s+out|solve|equals?|add|"
    r"sum)\b|=",
    re.I,
)
_RECALL = re.compile(
    r"\b(what\s+did\s+i\s+(tell|say|mention|write)|what\s+have\s+i\s+(told|said)|"
    r"do\s+you\s+remember|what\s+do\s+you\s+(know|remember)\s+about)\b"
    # A question of fact about the user's own things ("What is my dog's name?", "Where
    # does my sister live?"): only their own words can answer it.
    r"|^\W*(what|who|where|when|which)(['’]s|\s+(is|are|was|were|does|do|did))\s+my\b"
    # ... or about the user's own doings ("When do I usually go running?")
    r"|^\W*(what|who|where|when|which)\s+(do|did|am|was|have|had)\s+i\b"
    # ... or whether they still have, do or are something ("Do I have a motorbike?", "Am I
    # a nurse?", "How many cats do I have?"): what memory now believes answers it
    r"|^\W*(do|am)\s+i\s+(still\s+)?(have|own|play|work|live|go|drive|rent|belong|take"
    r"|practi[cs]e|eat|drink|smoke|a|an|married|engaged|single|vegan|vegetarian|allergic)\b"
    r"|^\W*how\s+many\s+\w+(\s+\w+)?\s+do\s+i\s+(still\s+)?(have|own)\b",
    re.I,
)
_USER_SAID = "User:"
"""How a recalled episode of the user's own words starts (:mod:`shiyi.memory`)."""
_QUOTED = 3
_COMMON = frozenset(
    [
        "usually",
        "now",
        "the",
        "and",
        "you",
        "what",
        "did",
        "tell",
        "told",
        "say",
        "said",
        "about",
        "remember",
        "that",
        "this",
        "have",
        "know",
        "with",
        "for",
        "was",
        "were",
        "are",
        "your",
        "mine",
        "user",
        "does",
        "where",
        "when",
        "which",
        "who",
        "should",
        "would",
        "could",
    ]
)
_FILLER = re.compile(
    r"\b(what|is|what's|whats|how|much|calculate|compute|work|out|solve|equals?|add|sum|of|"
    r"and|to|the|please|result|answer|can|you|tell|me|quick(ly)?|question|hey|hi)\b"
)
# Each pattern starts only where a number (or its sign or bracket) starts: a start inside
# a run of digits or brackets would scan the run again, quadratic on a long message.
_DATE = re.compile(r"(?<!\d)\d+[-/.]\d+[-/.]\d+")
_EXPRESSION = re.compile(r"(?<![-(\w.])(?:[-(][-(\s]{0,16})?\d[\d.\s+*/()-]*\d\)*")
_NUMBER = r"\d+(?:\.\d+)?"
_HAS_OPERATOR = re.compile(r"(?<![\d.])" + _NUMBER + r"\s*\)*\s*[-+*/]\s*\(*\s*-?" + _NUMBER)
_OPERATORS: dict[type[ast.AST], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}
_MAX_DIGITS = 15
"""Longer numbers are left to the model: no one asks a chat assistant for them."""


@dataclass(frozen=True, slots=True)
class Dispatch:
    """What the agent does before the model answers: tool calls it makes itself, and facts
    it worked out (each one line, e.g. ``7 * 6 = 42``)."""

    calls: tuple[ToolCall, ...] = ()
    facts: tuple[str, ...] = ()
    answer: str = ""
    """The whole answer, when the message asks for nothing but a calculation."""
    worded: Callable[[str], str] | None = None
    """The answer after ``calls``, from their result ("" leaves it to the model)."""

    def opening(self) -> Message | None:
        """The first step's reply, made by the agent (None: the model makes it)."""
        if self.calls:
            return Message("assistant", tool_calls=self.calls)
        return Message("assistant", self.answer) if self.answer else None


def plan_dispatch(
    message: str,
    workspace: Path,
    tools: Collection[str],
    memories: Sequence[str] = (),
    held: Sequence[str] = (),
) -> Dispatch:
    """The steps ``message`` asks for plainly enough to take without the model;
    ``memories``: what the memory prefetch recalled for it (plain text); ``held``: the
    current facts among them."""
    calls: list[ToolCall] = []
    if "remember" in tools and (statement := asked_to_remember(message)):
        return Dispatch((_call("remember", {"text": statement}),), worded=noted(statement))
    if "read_file" in tools and not _CHANGES.search(message):
        calls += [_call("read_file", {"path": name}) for name in named_files(message, workspace)]
    if not calls and "list_dir" in tools and _LISTS.search(message):
        calls.append(_call("list_dir", {"path": "."}))
    if not calls and (quoted := recall_answer(message, memories, held)):
        return Dispatch(answer=quoted)
    fact = arithmetic(message)
    if fact and not calls and only_a_calculation(message):
        shown = fact.replace(" * ", " × ").replace(" / ", " ÷ ")
        return Dispatch(answer=f"{shown}.")
    return Dispatch(tuple(calls), (fact,) if fact else ())


def noted(statement: str) -> Callable[[str], str]:
    """The answer once ``remember`` stored ``statement``, from the tool's answer: what it
    stored, and what it replaced or that it was held already.  Told the memory was stored,
    SmolLM2-135M answered "I don't have personal experiences or memories"."""

    chinese = _HAN.search(statement) is not None  # answered in the user's language

    def word(result: str) -> str:
        if result.startswith("Already remembered"):
            return (
                f"这个我已经记下了：“{statement}”"
                if chinese
                else (f'I already had that noted: "{statement}"')
            )
        if not result.startswith("Remembered"):
            return ""  # refused or failed: the model says what happened
        replaced = result.partition(" It replaces ")[2].removesuffix(" (kept in history).")
        if chinese:
            done = f"记下了：“{statement}”"
            return f"{done}（替换了之前的 {replaced}，旧的保留在历史中）" if replaced else done
        if replaced:
            return f'Noted: "{statement}" It replaces {replaced} (kept in history).'
        return f'Noted: "{statement}"'

    return word


def only_a_calculation(message: str) -> bool:
    """Whether ``message`` asks for a value and nothing else ("What is 7 times 6?"): then
    the exact value is the whole answer, and SmolLM2-135M, given it as a fact, still
    explained "conditional probabilities" instead."""
    rest = _FILLER.sub(" ", _DATE.sub(" ", message.lower()))
    for pattern, _symbol in _WORD_OPERATORS:
        rest = pattern.sub(" ", rest)
    return not re.sub(r"[\d\s.+*/()=?!,:-]", "", rest)


def recall_answer(message: str, memories: Sequence[str], held: Sequence[str] = ()) -> str:
    """The current facts memory holds about it, or else the user's own recalled words,
    quoted, for "what did I tell you about X?" or "when do I go running?" ("" when the
    message asks no such thing or nothing recalled shares a word with it).  Asked so,
    SmolLM2-135M answered "as an AI, I don't have personal experiences or memories" with
    the memory in front of it, whatever the layout; asked "When do I usually go running?"
    with "I usually go running on Tuesdays now." in its hint, it called read_file on a
    made-up path and explained how to run a Python script."""
    slot = asked_slot(message)  # "How old am I?": age, whatever the facts' words
    if not slot and not _RECALL.search(message):
        return ""
    asked = _content_words(message)
    facts = [
        _unkeyed(text)
        for text in held
        if _content_words(text) & asked or (slot and in_slot(text, slot))
    ][:_QUOTED]
    chinese = _HAN.search(message) is not None  # answered in the user's language
    if facts:
        if chinese:
            return "我记下的是：" + "".join(f"“{text}”" for text in facts)
        return "I have noted: " + " ".join(f'"{text}"' for text in facts)
    said = [
        text.removeprefix(_USER_SAID).strip()
        for text in memories
        if text.startswith(_USER_SAID)
        and _content_words(text) & asked
        and not text.rstrip().endswith(("?", "？"))  # a question the user asked told nothing
    ][:_QUOTED]
    if not said:
        return ""
    if chinese:
        return "你告诉过我：" + "".join(f"“{text}”" for text in said)
    return "You told me: " + " ".join(f'"{text}"' for text in said)


def _unkeyed(fact: str) -> str:
    """A fact's text without its slot when its value is a sentence ("lives in: My sister
    Ana lives in Porto." is quoted as the sentence; "lives in: Berlin" stays whole)."""
    key, colon, value = fact.strip().partition(": ")
    sentence = len(value.split()) >= 3 or len(_HAN.findall(value)) >= 4  # Chinese: no spaces
    return value if colon and len(key) <= 40 and sentence else fact.strip()


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2 and w not in _COMMON}


def named_files(message: str, workspace: Path) -> list[str]:
    """The names in ``message`` of files that exist in ``workspace`` (in order, once each)."""
    root = workspace.resolve()
    found: list[str] = []
    for match in _FILE_NAME.finditer(message):
        name = match.group(1)
        path = (root / name).resolve()
        if path.is_relative_to(root) and path.is_file() and name not in found:
            found.append(name)
    return found


def arithmetic(message: str) -> str:
    """``"<expression> = <value>"`` for the arithmetic in ``message`` ("" if none)."""
    if not _ASKS.search(message):
        return ""
    text = _DATE.sub(" ", _SUM.sub(r"\1 + \2", message))
    for pattern, symbol in _WORD_OPERATORS:
        text = pattern.sub(symbol, text)
    for match in _EXPRESSION.finditer(text):
        expression = " ".join(match.group().split())
        if not _HAS_OPERATOR.search(expression):
            continue
        value = _evaluate(expression)
        if value is not None:
            return f"{expression} = {value}"
    return ""


def _evaluate(expression: str) -> str | None:
    try:
        tree = ast.parse(expression, mode="eval")
        value = _value(tree.body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return None  # a message is any text: nesting too deep for the parser is no sum
    if not math.isfinite(value):
        return None  # 30 factors of 15 digits: the model may say it, not a float
    if value == int(value) and abs(value) < 10**_MAX_DIGITS:
        return str(int(value))
    return f"{value:.10g}"


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ValueError("not a number")
        if len(str(node.value)) > _MAX_DIGITS:
            raise ValueError("number too long")
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.left), _value(node.right))
    raise ValueError(f"not plain arithmetic: {ast.dump(node)[:40]}")


def _call(name: str, arguments: dict[str, str]) -> ToolCall:
    return ToolCall(f"call_{secrets.token_hex(8)}", name, json.dumps(arguments))
