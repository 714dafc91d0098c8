"""The belief benchmark's conversations: RealMem personas and LoCoMo conversations as
sessions of timed turns, with statements of changing attributes planted in them.

The development conversations are real, but they rarely state a changing attribute in so
many words (a few per thousand turns: "I'm an ojek driver", "weight's 88kg").  So that every
store has slots whose value changes, a seeded planter appends short first-person updates
("By the way, I moved to Lisbon last month.") to real turns of the speaker, in time order,
some hedged ("Maybe my favourite food is pho now."), some restated later.  The real text
around them is the load: the sliding windows, the competing turns in search, the echoes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from shiyi.memory.transfer.importers import parse_locomo_date

TURN_GAP = 60.0
"""Seconds between turns: the extraction window shows minutes, so each turn has its own."""


@dataclass(slots=True)
class Turn:
    role: str
    """``user`` / ``assistant`` (RealMem) or the speaker's name in lower case (LoCoMo)."""
    text: str
    ts: float


@dataclass(slots=True)
class Session:
    id: str
    turns: list[Turn]


@dataclass(slots=True)
class Conversation:
    dataset: str
    name: str
    sessions: list[Session]
    named_speakers: bool
    """LoCoMo: two named people talk; RealMem: a user and an assistant."""
    planted: int = 0
    questions: dict[str, str] = field(default_factory=dict)


def load_realmem(folder: Path, persona: str | None, sessions: int) -> list[Conversation]:
    found = []
    for path in sorted(folder.glob("*_dialogues_256k.json")):
        name = path.name.removesuffix("_dialogues_256k.json")
        if persona and persona.lower() not in name.lower():
            continue
        dialogues = json.loads(path.read_text(encoding="utf-8"))["dialogues"][:sessions]
        found.append(Conversation("realmem", name, _realmem_sessions(dialogues), False))
    return found


def _realmem_sessions(dialogues: list[dict[str, Any]]) -> list[Session]:
    sessions, same_day = [], 0
    previous = ""
    for dialogue in dialogues:
        day = str(dialogue["current_time"]).split(" ")[0]
        same_day = same_day + 1 if day == previous else 0
        previous = day
        start = datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(hours=8 + 3 * same_day)
        turns = [
            Turn(
                "user" if t["speaker"] == "User" else "assistant",
                str(t["content"]),
                start.timestamp() + i * TURN_GAP,
            )
            for i, t in enumerate(dialogue["dialogue_turns"])
        ]
        sessions.append(Session(str(dialogue["session_uuid"]), turns))
    return sessions


def load_locomo(path: Path, sessions: int) -> list[Conversation]:
    found = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        talk = sample["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in talk if k.startswith("session_") and k.count("_") == 1
        )
        chosen = []
        for number in numbers[:sessions]:
            start = parse_locomo_date(talk[f"session_{number}_date_time"])
            turns = [
                Turn(t["speaker"].strip().lower(), t["text"], start + i * TURN_GAP)
                for i, t in enumerate(talk[f"session_{number}"])
            ]
            chosen.append(Session(f"{sample['sample_id']}-s{number}", turns))
        found.append(Conversation("locomo", sample["sample_id"], chosen, True))
    return found


# --- planting ------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Attribute:
    name: str
    values: tuple[str, ...]
    plain: tuple[str, ...]
    hedged: tuple[str, ...]
    question: tuple[str, str]
    """(asked by the user, asked about a named person ``{who}``)."""


ATTRIBUTES = (
    Attribute("residence",
              ("Lisbon", "Toronto", "Osaka", "Melbourne", "Nairobi", "Valencia", "Hamburg",
               "Denver", "Seoul", "Porto", "Krakow", "Auckland"),
              ("By the way, I moved to {v} last month.", "Oh, and I live in {v} now.",
               "Quick update: we relocated to {v}."),
              ("I think I'm based in {v} now, more or less.", "Maybe I live in {v} now."),
              ("Where do I live?", "Where does {who} live?")),
    Attribute("employer",
              ("Northwind", "Globex", "Initech", "Umbrella Health", "Stark Logistics",
               "Acme Foods", "Blue Harbor", "Vandelay Imports"),
              ("I work at {v} now.", "Big news, I got a new job at {v}.",
               "I started working at {v} this week."),
              ("I think I work for {v} now, the contract is unclear.",),
              ("Where do I work?", "Where does {who} work?")),
    Attribute("occupation",
              ("nurse", "teacher", "designer", "electrician", "accountant", "photographer"),
              ("I work as a {v} now.", "These days I'm a {v}, full time."),
              ("I guess I'm a {v} now, sort of.",),
              ("What is my job?", "What is {who}'s job?")),
    Attribute("favourite food",
              ("ramen", "tacos", "paella", "dumplings", "lasagna", "pho", "curry"),
              ("My favourite food is {v} these days.", "Honestly my favorite food is {v} now."),
              ("Maybe my favourite food is {v} now.",),
              ("What is my favourite food?", "What is {who}'s favourite food?")),
    Attribute("weight",
              ("82kg", "79kg", "85kg", "77kg", "88kg"),
              ("My weight is {v} now.", "I weigh {v} this week."),
              ("I think I weigh {v}, the scale is odd.",),
              ("How much do I weigh?", "How much does {who} weigh?")),
    Attribute("budget",
              ("$400", "$650", "$900", "$1200", "$300"),
              ("My budget is {v} per month.", "I can only spend {v} a month on it."),
              ("Maybe my budget is {v} now.",),
              ("What is my budget?", "What is {who}'s budget?")),
    Attribute("relationship status",
              ("single", "engaged", "married", "divorced"),
              ("I'm {v} now.", "Update on my life: I'm {v}."),
              ("I think I'm {v} now, it's complicated.",),
              ("What is my relationship status?", "Is {who} single, engaged or married?")),
    Attribute("trip destination",
              ("Iceland", "Peru", "Vietnam", "Morocco", "Norway", "Chile"),
              ("I'm planning a trip to {v} in the spring.", "My next trip is to {v}."),
              ("Maybe I'm going to {v} for the holidays.",),
              ("Where is my next trip?", "Where is {who} travelling next?")),
    Attribute("wake-up time",
              ("6:30", "7:15", "5:45", "8:00"),
              ("I usually wake up at {v} now.", "I get up at {v} these days."),
              ("I think I wake up at {v} now.",),
              ("What time do I wake up?", "What time does {who} wake up?")),
    Attribute("favourite colour",
              ("teal", "orange", "navy", "green", "purple", "yellow"),
              ("My favourite colour is {v} now.", "These days my favourite colour is {v}."),
              ("I think my favourite colour is {v} now.",),
              ("What is my favourite colour?", "What is {who}'s favourite colour?")),
    Attribute("favourite band",
              ("Radiohead", "Arctic Monkeys", "Coldplay", "Daft Punk", "Tame Impala"),
              ("My favourite band is {v} these days.", "Right now my favourite band is {v}."),
              ("Maybe my favourite band is {v} now.",),
              ("What is my favourite band?", "What is {who}'s favourite band?")),
    Attribute("gym",
              ("Iron Temple", "PulseFit", "Anytime Fitness", "Gold's Gym"),
              ("My gym is {v} now.", "My gym is now {v}, closer to home."),
              ("I think my gym is {v} now.",),
              ("Which gym do I go to?", "Which gym does {who} go to?")),
    Attribute("owns car",
              ("Toyota", "Honda", "Tesla", "Mazda", "Volvo"),
              ("I just bought a {v} car.", "I finally got a used {v} car."),
              ("Maybe I have a {v} car now.",),
              ("What car do I have?", "What car does {who} have?")),
    Attribute("bedtime",
              ("10:30 pm", "11 pm", "9:45 pm", "11:30 pm"),
              ("I usually go to bed at {v} now.", "I go to sleep at {v} these days."),
              ("I think I go to bed at {v} now.",),
              ("When do I go to bed?", "When does {who} go to bed?")),
    Attribute("studying",
              ("Spanish", "piano", "data science", "pottery", "Japanese"),
              ("I'm learning {v} these days.", "I'm currently studying {v}."),
              ("Maybe I'm learning {v} now.",),
              ("What am I learning?", "What is {who} learning?")),
)  # fmt: skip

PLANS = ("change", "change", "change3", "hedge_unconfirmed", "hedge_confirmed", "restated")
"""What happens to a planted slot: plain updates (2 or 3 values), a hedged update said once
and never again, a hedged update confirmed later, an update said twice."""


def plant(conversation: Conversation, slots: int, rng: random.Random) -> None:
    """For each speaker, append ``slots`` attributes' statements to real turns of theirs,
    in time order; record each slot's question in ``conversation.questions``."""
    for speaker in _speakers(conversation):
        for attribute in rng.sample(ATTRIBUTES, min(slots, len(ATTRIBUTES))):
            _plant_slot(conversation, speaker, attribute, rng)


def _plant_slot(
    conversation: Conversation, speaker: str, attribute: Attribute, rng: random.Random
) -> None:
    turns = [t for s in conversation.sessions for t in s.turns if t.role == speaker]
    sentences = _sentences(attribute, rng.choice(PLANS), rng)
    if len(turns) < len(sentences):
        return
    places = sorted(rng.sample(range(len(turns)), len(sentences)))
    for place, sentence in zip(places, sentences, strict=True):
        turns[place].text = f"{turns[place].text} {sentence}"
    asked, about = attribute.question
    who = "user" if speaker == "user" else speaker.title()
    conversation.questions[f"{who}/{attribute.name}"] = (
        asked if who == "user" else about.format(who=who)
    )
    conversation.planted += 1


def _speakers(conversation: Conversation) -> list[str]:
    roles = {t.role for s in conversation.sessions for t in s.turns}
    return sorted(roles - {"assistant"}) if conversation.named_speakers else ["user"]


def _sentences(attribute: Attribute, plan: str, rng: random.Random) -> list[str]:
    values = rng.sample(attribute.values, 3)

    def plain(v: str) -> str:
        return rng.choice(attribute.plain).format(v=v)

    def hedged(v: str) -> str:
        return rng.choice(attribute.hedged).format(v=v)

    if plan == "change3":
        return [plain(values[0]), plain(values[1]), plain(values[2])]
    if plan == "hedge_unconfirmed":
        return [plain(values[0]), hedged(values[1])]
    if plan == "hedge_confirmed":
        return [plain(values[0]), hedged(values[1]), plain(values[1])]
    if plan == "restated":
        return [plain(values[0]), plain(values[1]), plain(values[1])]
    return [plain(values[0]), plain(values[1])]
