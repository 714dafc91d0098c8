"""The belief benchmark's extraction double: a rule-based ``fast`` model that reads the
rendered extraction window and answers ``record_memories`` the way real models do.

Two layers, kept apart on purpose:

* :func:`read_statements` is the *canonical* reader: a sentence of a speaker's turn that
  states a changing attribute (where someone lives or works, their job, a favourite, what
  they own, a planned trip, relationship status, age, "my budget is ...") becomes a
  :class:`Statement` (subject, attribute, value, when said, hedged or not).  The benchmark's
  ground truth is this reader applied to every turn fed in, before any surface variation.
  The patterns are general English, not fitted to the development conversations.
* :class:`ExtractionDouble` answers extraction calls: it reads the statements of the window's
  lines and, with an RNG seeded by the window's text (so the same window varies the same way
  whatever order the jobs run in), varies what a real model varies: the ``about`` list
  (``[]``, ``["user"]``, the speaker, the value entity), the key's wording, hedged statements
  at confidence 0.6, and re-reports of older statements still in the sliding window (a
  consolidation re-reads the whole session).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from shiyi.llm.scripted import ScriptedModel, ScriptedReply, ScriptedRequest, call

NOT_SPEAKERS = frozenset({"assistant", "tool", "system"})
"""Window roles whose lines state nothing about a person (the assistant's replies)."""

HEDGE = re.compile(
    r"\b(maybe|perhaps|probably|possibly|i think|i guess|i suppose|might|not sure|"
    r"thinking (?:about|of)|considering)\b",
    re.IGNORECASE,
)
CONDITIONAL = re.compile(r"^\s*(if|when|whether|unless)\b|\bif I\b", re.IGNORECASE)
VALUE_STOP = re.compile(
    r"\s+(?:and|but|because|since|so|which|where|who|with|for|now|at the moment|these days|"
    r"anymore|again|too|as well|though|right now|then|after|before|until|while)\b.*$",
    re.IGNORECASE,
)

JOBS = (
    "teacher|nurse|doctor|driver|engineer|developer|programmer|designer|student|manager|"
    "lawyer|accountant|chef|cook|artist|writer|musician|consultant|analyst|researcher|"
    "scientist|mechanic|electrician|plumber|carpenter|farmer|pilot|cashier|photographer|"
    "counsell?or|therapist|architect|freelancer|courier|builder|entrepreneur|barista|waiter|"
    "waitress|clerk|officer|technician|pharmacist|dentist|veterinarian|professor|lecturer|"
    "tutor|coach|trainer|journalist|editor|translator|secretary|receptionist|firefighter|"
    "soldier|paramedic|intern|retiree|salesman|saleswoman|caregiver|librarian|banker"
)
OWNABLE = {
    "car": "car", "bike": "bike", "bicycle": "bike", "motorcycle": "motorbike",
    "motorbike": "motorbike", "scooter": "scooter", "dog": "dog", "puppy": "dog",
    "cat": "cat", "kitten": "cat", "house": "home", "apartment": "home", "flat": "home",
    "laptop": "laptop", "phone": "phone", "guitar": "guitar", "piano": "piano",
    "camera": "camera",
}  # fmt: skip
ATTRIBUTES = (
    "weight|budget|salary|income|rent|address|phone number|email|car|goal|target|deadline|"
    "schedule|routine|diet|gym|manager|boss|partner|boyfriend|girlfriend|wife|husband|team|"
    "school|major|hobby|commute|bedtime|shift|savings|mortgage|job|workplace|office|"
    "doctor|dentist|coach|favou?rite \\w+"
)
PROPER = r"[A-Z][\w&'-]*(?:(?: (?:of|de|la|du|van|von|the))? [A-Z][\w&'-]*)*"
NUMBER = r"\d+(?:[.,]\d+)?"
MONEY = (
    r"(?:[$€£¥]|Rp\.? ?|IDR ?|AUD ?|JPY ?)?\d[\d,.]*"
    r"(?: ?(?:k|K|million|juta|rb|rupiah|dollars|bucks|euros|pounds|yen))?"
)
CLOCK = r"\d{1,2}(?:[:.]\d\d)? ?(?:[ap]\.?m\.?|AM|PM)?"
DAY = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?"
DAYS = rf"{DAY}(?:(?:, | and | & |,? and ){DAY})*"
PHRASE = r"[\w$€£¥][\w$€£¥%'./:-]*(?: [\w$€£¥%'./:-]+){0,5}"

# (attribute or "" for "the attribute is the group 'a'", pattern).  Verbs are matched case
# insensitively, the value group keeps its case (a proper noun must start upper case).
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("residence", rf"(?i:\b(?:I|we)(?:'ve| have)? (?:just |recently |finally |now )?"
                      rf"(?:moved|relocated) (?:back |over )?to )(?P<v>{PROPER})"),
        ("residence", rf"(?i:\b(?:I|we) (?:now |currently |still |actually )?live in )"
                      rf"(?P<v>{PROPER})"),
        ("residence", rf"(?i:\b(?:I'm|I am|we're|we are) (?:now |currently )?"
                      rf"(?:living|based|settled) in )(?P<v>{PROPER})"),
        ("employer", rf"(?i:\bI (?:now |currently |still )?work (?:at|for) )(?P<v>{PROPER})"),
        ("employer", rf"(?i:\bI (?:just |recently )?(?:got a (?:new )?job|started (?:a new job|"
                     rf"working)) (?:at|with|for) )(?P<v>{PROPER})"),
        ("employer", rf"(?i:\bI (?:just |recently )?joined )(?P<v>{PROPER})"),
        ("occupation", r"(?i:\bI (?:now |currently )?work as (?:a |an )?)(?P<v>\w+(?: \w+)?)"),
        ("occupation", r"(?i:\bI (?:just )?got a job as (?:a |an )?)(?P<v>\w+(?: \w+)?)"),
        ("occupation", rf"(?i:\b(?:I'm|I am) (?:now |currently |still )?(?:a |an )"
                       rf"(?:[\w-]+ )?)"
                       rf"(?P<v>(?i:{JOBS}))\b"),
        ("occupation", r"(?i:\b(?:I'm|I am) (?:now )?)(?P<v>retired)\b"),
        ("", rf"(?i:\bmy (?:absolute |all-time |new |current |monthly |daily |weekly )?)"
             rf"(?P<a>(?i:{ATTRIBUTES}))(?i:(?: is|'s(?= ?[\d$€£¥])| are)"
             rf"(?: now| currently| still| about| around| roughly| definitely)? |"
             rf"(?: has)? changed to | went (?:up|down) to | dropped to | increased to )"
             rf"(?P<v>{PHRASE})"),
        ("", rf"(?i:\bI(?:'ve| have)? (?:changed|switched|moved|updated|rescheduled) "
             rf"(?:my|the|our) (?P<a>\w+(?: \w+)?) to )"
             rf"(?P<v>{PHRASE})"),
        ("residence", rf"(?i:\bI(?:'ve| have) been living in )(?P<v>{PROPER})"),
        ("employer", rf"(?i:\bI(?:'ve| have) been working (?:at|for) |\b(?:I'm|I am) "
                     rf"(?:now |currently )?working (?:at|for) )(?P<v>{PROPER})"),
        ("current project", rf"(?i:\b(?:I'm|I am) (?:currently |now |still )?working on "
                            rf"(?:a |an |my |the |some )?)(?P<v>{PHRASE})"),
        ("studying", rf"(?i:\b(?:I'm|I am) (?:currently |now |still )?(?:studying|learning) )"
                     rf"(?P<v>{PHRASE})"),
        ("current book", rf"(?i:\b(?:I'm|I am) (?:currently |now )?reading )(?P<v>{PHRASE})"),
        ("training goal", rf"(?i:\b(?:I'm|I am) (?:currently |now )?training for "
                          rf"(?:a |an |the )?)(?P<v>{PHRASE})"),
        ("weight", rf"(?i:\b(?:I weigh|I'm at|weight(?:'s| is)(?: now| currently)?) "
                   rf"(?:about |around |roughly )?)(?P<v>{NUMBER} ?(?i:kgs?|kilos|lbs|pounds))\b"),
        ("budget", rf"(?i:\b(?:budget (?:is|of)|I can (?:only )?(?:spend|afford)) (?:about |"
                   rf"around |only |up to |maximum |max )?)(?P<v>{MONEY})"),
        ("income", rf"(?i:\bI (?:earn|make) (?:about |around |roughly )?)(?P<v>{MONEY}(?i: "
                   rf"(?:a|per|each) (?:day|week|month|year)))"),
        ("wake-up time", rf"(?i:\bI (?:usually |normally |now )?(?:wake up|get up) at )"
                         rf"(?P<v>{CLOCK})"),
        ("bedtime", rf"(?i:\bI (?:usually |normally |now )?go to (?:bed|sleep) at )"
                    rf"(?P<v>{CLOCK})"),
        ("sleep", r"(?i:\bI (?:only |usually |now )?(?:sleep|get) (?:about |around )?)"
                  r"(?P<v>\d{1,2}(?:-\d{1,2})?(?i: hours))"),
        ("training days", rf"(?i:\b(?:I|we) (?:train|work out|go to the gym|exercise|run) "
                          rf"(?:on )?)(?P<v>{DAYS})"),
        ("", rf"(?i:\bmy (?:next )?)(?P<a>(?i:class|lesson|appointment|exam|interview|flight|"
             rf"session|meeting|course|test|check-up|workout)) (?i:is (?:now )?(?:on|at|"
             rf"scheduled for|booked for|moved to|set for) )(?P<v>{PHRASE})"),
        ("age", r"(?i:\b(?:I'm|I am) (?:now )?)(?P<v>\d{1,2})(?i: years? old)"),
        ("age", r"(?i:\bI (?:just )?turned )(?P<v>\d{1,2})\b"),
        ("relationship status", r"(?i:\b(?:I'm|I am) (?:now |currently |still )?)"
                                r"(?P<v>(?i:single|married|engaged|divorced|separated|widowed|"
                                r"in a relationship|dating someone|seeing someone))\b"),
        ("relationship status", r"(?i:\bI (?:just |recently )?got )"
                                r"(?P<v>(?i:married|engaged|divorced))\b"),
        ("trip destination", rf"(?i:\b(?:I'm|I am|we're|we are) (?:planning|going|heading|"
                             rf"flying|travell?ing) (?:a trip |on a trip |to go |to travel |"
                             rf"to fly )?to )(?P<v>{PROPER})"),
        ("trip destination", rf"(?i:\b(?:I|we) (?:plan|intend|want) to (?:go|travel|fly) to )"
                             rf"(?P<v>{PROPER})"),
        ("trip destination", rf"(?i:\bmy next trip is to )(?P<v>{PROPER})"),
        ("owns", r"(?i:\bI (?:just |recently |finally )?(?:bought|got|adopted|own|have) "
                 r"(?:a |an |my first )(?:new |second-hand |used |little )?)"
                 r"(?P<v>(?:[A-Z][\w-]* )?(?P<n>(?i:" + "|".join(OWNABLE) + r")))\b"),
    )
)  # fmt: skip
# The specific readers first: a clause yields one statement per attribute, so "my budget is
# $400 a month" is the budget pattern's "$400", not the generic pattern's whole phrase.
PATTERNS = tuple(sorted(PATTERNS, key=lambda pair: pair[0] == ""))

KEYS: dict[str, tuple[str, ...]] = {
    "residence": ("lives_in", "city", "home city", "residence", "lives in", "location"),
    "employer": ("works_at", "employer", "workplace", "company", "works for"),
    "occupation": ("occupation", "profession", "job title", "works as", "role"),
    "age": ("age", "user_age", "age (years)", "current age"),
    "relationship status": ("relationship_status", "relationship status", "marital status"),
    "trip destination": ("trip_destination", "next trip", "travel plans", "planned trip"),
}
GENERIC_KEYS = ("{a}", "current {a}", "{a_}", "my {a}", "{a} (current)")
OWNS_KEYS = ("owns_{a}", "{a}", "has {a}", "owned {a}")
FAVOURITE_KEYS = ("favourite_{a}", "favorite {a}", "favourite {a}", "preferred {a}")


@dataclass(slots=True, frozen=True)
class Statement:
    """One statement of a changing attribute, as said (the ground truth's unit)."""

    subject: str
    attribute: str
    value: str
    ts: float
    hedged: bool

    @property
    def slot(self) -> tuple[str, str]:
        return (self.subject, self.attribute)


def canonical(value: str) -> str:
    """The comparable form of a value: lower case words."""
    return " ".join(re.sub(r"[^\w\s]", " ", value.lower()).split())


def subject_of(role: str) -> str:
    """``user`` for the user's turns, the speaker's name for a named speaker's."""
    return "user" if role == "user" else role.strip().title()


def read_statements(text: str, role: str, ts: float) -> list[Statement]:
    """The statements one turn makes (none for the assistant's turns)."""
    if role.strip().lower() in NOT_SPEAKERS:
        return []
    found: dict[tuple[str, str], Statement] = {}
    for sentence in re.split(r"(?<=[.!?])\s+|\n+|;\s*|,\s*but\s+|\s+but\s+", text):
        clause = sentence.strip()
        if not clause or clause.endswith("?") or CONDITIONAL.search(clause):
            continue
        hedged = bool(HEDGE.search(clause))
        said: set[str] = set()
        for attribute, pattern in PATTERNS:
            for match in pattern.finditer(clause):
                statement = _statement(attribute, match, role, ts, hedged)
                if statement is None or statement.attribute in said:
                    continue
                said.add(statement.attribute)
                found.setdefault((statement.attribute, statement.value), statement)
    return list(found.values())


def _statement(
    attribute: str, match: re.Match[str], role: str, ts: float, hedged: bool
) -> Statement | None:
    value = VALUE_STOP.sub("", match.group("v")).strip(" .,'\"")
    if attribute == "owns":
        attribute = f"owns {OWNABLE[match.group('n').lower()]}"
    elif not attribute:
        attribute = canonical(match.group("a")).replace("favorite", "favourite")
    if attribute.startswith("my "):  # "I changed my my ..." never; guard odd captures
        return None
    words = value.split()
    if not words or len(words) > 6 or canonical(value) in {"it", "that", "this", "there"}:
        return None
    return Statement(subject_of(role), attribute, value, ts, hedged)


# --- the rendered window -----------------------------------------------------------------------

LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d) \w{3} (\d\d:\d\d) UTC\] ([^:\n]+): ", re.MULTILINE)


@dataclass(slots=True, frozen=True)
class WindowLine:
    role: str
    text: str
    ts: float


def parse_window(rendered: str) -> list[WindowLine]:
    """The lines of ``render_window``'s text: ``[YYYY-MM-DD Day HH:MM UTC] role: text``
    (a message may span several lines; it runs until the next stamp)."""
    body = rendered.split("Conversation:\n", 1)[-1]
    end = body.rfind("\n\nKnown entities:")
    body = body[:end] if end >= 0 else body
    matches = list(LINE.finditer(body))
    lines = []
    for index, match in enumerate(matches):
        stop = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        when = datetime.strptime(f"{match.group(1)} {match.group(2)}", "%Y-%m-%d %H:%M")
        text = body[match.end() : stop].rstrip("\n")
        lines.append(WindowLine(match.group(3), text, when.replace(tzinfo=UTC).timestamp()))
    return lines


def minute(ts: float) -> float:
    """``ts`` as the window shows it (to the minute): statement times compare at this grain."""
    return float(int(ts // 60) * 60)


# --- the double --------------------------------------------------------------------------------


@dataclass(slots=True)
class Behaviour:
    """How much the double varies (probabilities)."""

    rereport: float = 0.5
    """An older line's statement still in an extraction window is reported again."""
    consolidation_rereport: float = 0.8
    """A session's statement is reported again by its end-of-session consolidation."""


class ExtractionDouble:
    """The ``fast`` model for extraction and consolidation (see the module docstring).

    ``emitted`` records, per (subject, attribute), the surface keys written for it, and
    ``values`` which slots each canonical value was written for: how the benchmark maps a
    stored fact back to its slot, whatever key and ``about`` the fact was stored under.
    """

    def __init__(self, seed: int, behaviour: Behaviour | None = None) -> None:
        self.seed = seed
        self.behaviour = behaviour or Behaviour()
        self.calls = 0
        self.seen: Counter[str] = Counter()
        self.keys: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.values: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self.written: list[tuple[tuple[str, str], str, str, tuple[str, ...]]] = []
        """(slot, value, key, about) of every fact returned, in call order (the baseline's
        input)."""

    def model(self) -> ScriptedModel:
        return ScriptedModel([self.answer], repeat_last=True, model_name="belief-double")

    def answer(self, request: ScriptedRequest) -> ScriptedReply:
        self.calls += 1
        system = request.messages[0].content if request.messages else ""
        rendered = next((m.content for m in request.messages if m.role == "user"), "")
        consolidating = "consolidate the WHOLE" in system
        delivery = self.seen[rendered]
        self.seen[rendered] += 1
        rng = random.Random(_digest(f"{self.seed}\n{delivery}\n{system[-60:]}\n{rendered}"))
        payload = self.extraction(parse_window(rendered), rng, consolidating=consolidating)
        return ScriptedReply(tool_calls=(call("record_memories", payload),))

    def extraction(
        self, lines: Sequence[WindowLine], rng: random.Random, *, consolidating: bool
    ) -> dict[str, Any]:
        chosen: list[Statement] = []
        for index, line in enumerate(lines):
            newest = index == len(lines) - 1 and not consolidating
            keep = 1.0 if newest else self._rereport(consolidating)
            chosen += [
                s for s in read_statements(line.text, line.role, line.ts) if rng.random() < keep
            ]
        facts = [self.fact(s, rng) for s in chosen]
        entities = {s.subject: "person" for s in chosen if s.subject != "user"}
        entities |= {s.value: "concept" for s in chosen if s.value[:1].isupper()}
        return {
            "entities": [{"name": name, "type": kind} for name, kind in entities.items()],
            "relations": [],
            "facts": facts,
        }

    def _rereport(self, consolidating: bool) -> float:
        b = self.behaviour
        return b.consolidation_rereport if consolidating else b.rereport

    def wording(self, attribute: str, rng: random.Random) -> str:
        wordings = key_wordings(attribute)
        if rng.random() < HABIT:
            return wordings[_digest(f"{self.seed}\n{attribute}") % len(wordings)]
        return rng.choice(wordings)

    def fact(self, statement: Statement, rng: random.Random) -> dict[str, Any]:
        key = self.wording(statement.attribute, rng)
        self.keys[statement.slot].add(key)
        self.values[canonical(statement.value)].add(statement.slot)
        confidence = rng.choice((0.6, 0.65)) if statement.hedged else rng.choice((0.85, 0.9, 0.95))
        kind = "preference" if statement.attribute.startswith("favourite") else "semantic"
        about = about_list(statement, rng)
        self.written.append((statement.slot, statement.value, key, tuple(about)))
        return {
            "key": key,
            "value": statement.value,
            "kind": kind,
            "scope": "user",
            "confidence": confidence,
            "about": about,
        }


HABIT = 0.6
"""How often the double uses its habitual wording for a slot (a real model is fairly
consistent at temperature 0, but a different window or prompt brings another wording)."""


def key_wordings(attribute: str) -> tuple[str, ...]:
    """The ways a model names one slot (the same slot, worded differently)."""
    if attribute in KEYS:
        return KEYS[attribute]
    if attribute.startswith("owns "):
        thing = attribute.removeprefix("owns ")
        return tuple(k.format(a=thing) for k in OWNS_KEYS)
    if attribute.startswith("favourite "):
        thing = attribute.removeprefix("favourite ")
        return tuple(k.format(a=thing) for k in FAVOURITE_KEYS)
    return tuple(k.format(a=attribute, a_=attribute.replace(" ", "_")) for k in GENERIC_KEYS)


def about_list(statement: Statement, rng: random.Random) -> list[str]:
    """What a model writes as the entities a fact is about: nothing, the user or the
    speaker, or the value when it is a name (``about: ["Paris"]`` for "lives in Paris")."""
    options: list[list[str]] = [[], [statement.subject]]
    weights = [0.25, 0.5]
    if statement.subject != "user":
        options.append(["user"])
        weights.append(0.05)
    if statement.value[:1].isupper():
        options.append([statement.value])
        weights.append(0.25)
    return list(rng.choices(options, weights)[0])


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
