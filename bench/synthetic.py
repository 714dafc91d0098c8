"""A seeded generator of SYNTHETIC conversations in the LoCoMo format, for memory benchmarks.

Two speakers talk over several dated sessions.  Facts are planted in single turns (pets,
flights, jobs, hobbies, room numbers, account ids, Chinese-language turns ...) among filler
small talk, and each fact yields questions whose ``evidence`` lists the dia_ids holding the
answer.  Categories follow LoCoMo: 1 single-hop, 2 multi-hop, 3 temporal, 4 open-domain /
paraphrased, 5 adversarial (answer ``"not mentioned"``, no evidence).  No real data is used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from random import Random
from typing import Any

NOT_MENTIONED = "not mentioned"
NAMES = ["Alice", "Bruno", "Chen Wei", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jia"]
PET_NAMES = ["Biscuit", "Mochi", "Pepper", "Noodle", "Ziggy", "Olive", "Tofu", "Rocket"]
ANIMALS = ["dog", "cat", "rabbit", "parrot"]
CITIES = ["Lisbon", "Osaka", "Nairobi", "Toronto", "Reykjavik", "Lima", "Tbilisi", "Hanoi"]
CN_CITIES = ["杭州", "成都", "深圳", "西安", "南京"]
COMPANIES = ["Northwind", "Globex", "Initech", "Umbrella Labs", "Vandelay", "Hooli", "Acme"]
ROLES = ["data analyst", "product designer", "backend engineer", "nurse", "sales lead"]
HOBBIES = [
    ("pottery", "my first bowl came out lopsided", "crafty activity"),
    ("bouldering", "my forearms are still sore", "sport"),
    ("the cello", "my neighbours are very patient", "musical instrument"),
    ("sourdough baking", "the starter is called Gerald", "kitchen project"),
]
FLOORS = ["second", "third", "fifth", "seventh", "ninth"]
ENVS = ["staging", "production", "the QA cluster"]
FILLER = [
    "How was your weekend?",
    "Pretty relaxed, mostly caught up on sleep.",
    "Haha, same here.",
    "Did you watch the game last night?",
    "The weather has been so nice lately.",
    "Work has been hectic, honestly.",
    "That sounds great!",
    "We should grab coffee soon.",
    "I walked past a pet shop today and almost went in.",
    "Flights are so expensive these days.",
    "My cousin keeps sending me memes about offices.",
    "I need to call my family more often.",
    "Sorry for the late reply, long day.",
    "今天天气不错，适合出去走走。",
    "哈哈，好的，回头聊。",
    "Anyway, enough about me, what's new with you?",
]

QA = tuple[str, str, list[int], int]
"""question, answer, indices into the fact's parts used as evidence, category."""


@dataclass(slots=True)
class Fact:
    parts: list[str]
    qa: list[QA]


Builder = Callable[[Random, str, str, list[date]], Fact]


def fmt_day(day: date) -> str:
    return f"{day.day} {day.strftime('%B')} {day.year}"


def _months_before(day: date, months: int) -> str:
    index = day.year * 12 + day.month - 1 - months
    return f"{date(index // 12, index % 12 + 1, 1).strftime('%B')} {index // 12}"


def _pet(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    animal, name = rng.choice(ANIMALS), rng.choice(PET_NAMES)
    when = _months_before(days[0], rng.randint(2, 18))
    text = f"I adopted a {animal} named {name} in {when}, best decision ever."
    return Fact(
        [text],
        [
            (f"What kind of animal is {name}?", animal, [0], 1),
            (f"What is the name of {who}'s pet?", name, [0], 4),
            (f"When did {who} adopt {name}?", when, [0], 3),
            (f"What is the name of {other}'s {animal}?", NOT_MENTIONED, [], 5),
        ],
    )


def _flight(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    city = rng.choice(CITIES)
    unvisited = rng.choice([c for c in CITIES if c != city])
    flight = days[0] + timedelta(days=rng.randint(10, 60))
    text = f"My flight to {city} is on {flight.day} {flight.strftime('%B')}, can't wait!"
    return Fact(
        [text],
        [
            (f"When is {who} flying to {city}?", fmt_day(flight), [0], 3),
            (f"Which place is {who} heading to on the upcoming trip abroad?", city, [0], 4),
            (f"When is {who} flying to {unvisited}?", NOT_MENTIONED, [], 5),
        ],
    )


def _job(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    role = rng.choice(ROLES)
    first, second = rng.sample(COMPANIES, 2)
    parts = [
        f"I started working as a {role} at {first} this month.",
        f"Big news: I accepted an offer from {second}! Friday is my last day at my current job.",
    ]
    return Fact(
        parts,
        [
            (f"Which employer did {who} leave to join {second}?", first, [0, 1], 2),
            (f"What is {who}'s role at {first}?", role, [0], 1),
            (f"When did {who} accept the offer from {second}?", fmt_day(days[1]), [1], 3),
        ],
    )


def _hobby(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    hobby, remark, kind = rng.choice(HOBBIES)
    text = f"I've been learning {hobby} on weekends, {remark}."
    return Fact(
        [text],
        [
            (f"Which {kind} has {who} taken up in their spare time?", hobby, [0], 4),
            (f"How long has {other} been practising {hobby}?", NOT_MENTIONED, [], 5),
        ],
    )


def _room(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    room, floor = rng.randint(101, 999), rng.choice(FLOORS)
    text = f"The design review moved to room {room} on the {floor} floor."
    return Fact([text], [(f"Which floor is room {room} on?", floor, [0], 1)])


def _account(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    number, env = rng.randint(2, 98), rng.choice(ENVS)
    text = f"The login bug only shows up for the account `user{number}` in {env}."
    return Fact(
        [text],
        [
            (f"Where does the login bug with `user{number}` happen?", env, [0], 1),
            (f"Where does the login bug with `user{number + 1}` happen?", NOT_MENTIONED, [], 5),
        ],
    )


def _cn_trip(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    city = rng.choice(CN_CITIES)
    wednesday = days[0] - timedelta(days=days[0].weekday()) + timedelta(days=9)
    return Fact(
        [f"我下周三去{city}出差，大概待三天。"],
        [
            (f"{who}下周三去哪里出差？", city, [0], 1),
            (f"When does {who} travel to {city} for work?", fmt_day(wednesday), [0], 3),
        ],
    )


def _sibling(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    sister, baby = rng.sample(["Mira", "Lena", "Sofia", "Priya", "Yuki", "Ines"], 2)
    city = rng.choice(CITIES)
    parts = [
        f"My sister {sister} finally moved to {city} for her new job.",
        f"{sister} just had a baby girl, they named her {baby}! I'm so happy for her.",
    ]
    return Fact(
        parts,
        [
            (f"In which city does {who}'s newborn niece live?", city, [0, 1], 2),
            (f"What is the name of {sister}'s daughter?", baby, [1], 1),
            (f"What is the name of {other}'s brother?", NOT_MENTIONED, [], 5),
        ],
    )


def _run(rng: Random, who: str, other: str, days: list[date]) -> Fact:
    km = rng.choice([8, 12, 15, 21, 25])
    text = f"I ran {km} km this morning, a new personal best."
    return Fact(
        [text],
        [
            (f"What distance did {who} cover in the record-setting jog?", f"{km} km", [0], 4),
            (f"On which day did {who} set a personal running record?", fmt_day(days[0]), [0], 3),
        ],
    )


BUILDERS: list[tuple[int, Builder]] = [
    (1, _pet),
    (1, _flight),
    (2, _job),
    (1, _hobby),
    (1, _room),
    (1, _account),
    (1, _cn_trip),
    (2, _sibling),
    (1, _run),
]


def _session_starts(rng: Random, sessions: int) -> list[datetime]:
    current = datetime(2023, 1, 2, tzinfo=UTC) + timedelta(days=rng.randint(0, 300))
    starts = []
    for _ in range(sessions):
        current = current.replace(hour=rng.randint(8, 21), minute=rng.randint(0, 59))
        starts.append(current)
        current += timedelta(days=rng.randint(3, 14))
    return starts


def locomo_date(moment: datetime) -> str:
    """``datetime(2023, 5, 8, 13, 56)`` -> ``"1:56 pm on 8 May, 2023"``."""
    hour = moment.hour % 12 or 12
    half = "am" if moment.hour < 12 else "pm"
    return (
        f"{hour}:{moment.minute:02d} {half} on {moment.day} {moment.strftime('%B')}, {moment.year}"
    )


Slot = tuple[int, int]
"""(session index, turn index), both 0-based."""


def _place(rng: Random, parts: int, free: set[Slot], sessions: int) -> list[Slot] | None:
    """Free slots for a fact's parts, in increasing sessions and all spoken by one speaker."""
    if parts > sessions:
        return None
    chosen_sessions = sorted(rng.sample(range(sessions), parts))
    first = [slot for slot in free if slot[0] == chosen_sessions[0]]
    if not first:
        return None
    slots = [rng.choice(sorted(first))]
    parity = sum(slots[0]) % 2
    for session in chosen_sessions[1:]:
        options = sorted(s for s in free if s[0] == session and sum(s) % 2 == parity)
        if not options:
            return None
        slots.append(rng.choice(options))
    return slots


def _conversation(rng: Random, index: int, sessions: int, turns: int) -> dict[str, Any]:
    speakers = rng.sample(NAMES, 2)
    starts = _session_starts(rng, sessions)
    # At most half the turns carry facts, so filler remains between them.
    free = {(s, t) for s in range(sessions) for t in range(turns) if t % 4 in (1, 2)}
    texts: dict[Slot, str] = {}
    qa: list[dict[str, Any]] = []
    for parts, builder in rng.sample(BUILDERS, len(BUILDERS)):
        slots = _place(rng, parts, free, sessions)
        if slots is None:
            continue
        free.difference_update(slots)
        who = speakers[sum(slots[0]) % 2]
        other = speakers[1 - sum(slots[0]) % 2]
        fact = builder(rng, who, other, [starts[s].date() for s, _ in slots])
        texts.update(zip(slots, fact.parts, strict=True))
        for question, answer, evidence, category in fact.qa:
            dia_ids = [f"D{slots[i][0] + 1}:{slots[i][1] + 1}" for i in evidence]
            qa.append(
                {"question": question, "answer": answer, "evidence": dia_ids, "category": category}
            )
    conversation: dict[str, Any] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    for s in range(sessions):
        conversation[f"session_{s + 1}_date_time"] = locomo_date(starts[s])
        conversation[f"session_{s + 1}"] = [
            {
                "speaker": speakers[(s + t) % 2],
                "dia_id": f"D{s + 1}:{t + 1}",
                "text": texts.get((s, t)) or rng.choice(FILLER),
            }
            for t in range(turns)
        ]
    return {"sample_id": f"conv-{index + 1}", "conversation": conversation, "qa": qa}


def generate(
    conversations: int = 10, sessions: int = 6, turns: int = 20, seed: int = 7
) -> list[dict[str, Any]]:
    """``conversations`` LoCoMo samples of ``sessions`` sessions of ``turns`` turns each."""
    if conversations < 0 or sessions < 1 or turns < 1:
        raise ValueError("need conversations >= 0, sessions >= 1 and turns >= 1")
    rng = Random(seed)
    return [_conversation(rng, i, sessions, turns) for i in range(conversations)]


def to_jsonl_records(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns of ``samples`` as JSONL import lines (ISO timestamps, session = sample id)."""
    records = []
    for sample in samples:
        conversation = sample["conversation"]
        number = 1
        while f"session_{number}" in conversation:
            start = datetime.strptime(
                conversation[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y"
            ).replace(tzinfo=UTC)
            for offset, turn in enumerate(conversation[f"session_{number}"]):
                moment = start + timedelta(seconds=offset)
                records.append(
                    {
                        "speaker": turn["speaker"],
                        "text": turn["text"],
                        "timestamp": moment.isoformat(),
                        "session": sample["sample_id"],
                        "dia_id": turn["dia_id"],
                    }
                )
            number += 1
    return records
