"""A question naming someone otherwise than their speaker field still favours what they said:
a nickname, a short form, a misspelling, or what the other speaker calls them.  Both
backends, the real embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.memory.recall.reading import unshouted
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.service import Memory
from tests.support.conversations import one_chat, open_seeded, with_boosts

# Two friends who did much the same things; only the speaker tells whose is whose.  The
# music school is named in both lessons' turns, so the graph bridges them as it would any two
# turns about one place.
LEAD_IN = False  # the contrasts below show query-time mechanisms

TURNS = [
    ("thomas", "We adopted a dog from the shelter last weekend, a beagle called Pip."),
    ("rebecca", "We adopted a cat from the shelter last weekend, a kitten called Smoke."),
    ("thomas", "I baked bread for the street party, my first sourdough loaf."),
    ("rebecca", "I baked a lemon cake for the street party."),
    ("thomas", "Thanks, Bex! Your cake was the best thing there."),
    ("thomas", "I started learning the guitar at the Riverside Music School, on Tuesdays."),
    ("rebecca", "I started learning the cello at the Riverside Music School, on Thursdays."),
]


def by_exact_name_only(memory: Memory) -> Retriever:
    return with_boosts(memory, aliases=False)


def speaker_of_top(retriever: Retriever, question: str) -> str:
    hits = retriever.search(question, limit=3, touch=False)
    return TURNS[int(hits[0].id.rsplit("-", 1)[1])][0]


@pytest.mark.parametrize(
    "question",
    [
        "What pet did Becky adopt?",  # a nickname of Rebecca
        "What instrument is Rebeca learning?",  # misspelt
        "What did Bex bake for the street party?",  # what Thomas calls her
        "What instrument is Rébecca learning?",  # an accent her speaker field lacks
    ],
)
def test_a_question_about_rebecca_by_another_name_finds_what_she_said(
    memory: Memory, question: str
) -> None:
    assert speaker_of_top(memory.retriever, question) == "rebecca"


def test_by_exact_name_only_the_other_speakers_turns_come_first(memory: Memory) -> None:
    exact = by_exact_name_only(memory)
    outranked = [
        q
        for q in (
            "What pet did Becky adopt?",
            "What instrument is Rebeca learning?",
            "What did Bex bake for the street party?",
        )
        if speaker_of_top(exact, q) == "thomas"
    ]
    assert outranked, "the fixture no longer tells the mechanism apart"


@pytest.mark.parametrize(
    "question",
    [
        "what did tom bake for the street party?",
        "what instrument is tom learning?",
        "What did Tom bake for the street party?",
        "What instrument is Tom learning?",
    ],
)
def test_a_question_typed_with_or_without_capitals_finds_him_by_nickname(
    memory: Memory, question: str
) -> None:
    # (Rebecca's same-worded turns come first when no speaker is placed)
    assert speaker_of_top(memory.retriever, question) == "thomas"
    assert speaker_of_top(by_exact_name_only(memory), question) == "rebecca"


def test_a_turn_the_graph_bridges_to_stays_behind_the_one_asked_about(memory: Memory) -> None:
    # her lesson shares his lesson's school, so the bridge leads from his turn to hers; a
    # second hop must not overtake the match it was reached from
    hits = memory.retriever.search("What instrument is Thomas learning?", limit=2, touch=False)
    assert [TURNS[int(h.id.rsplit("-", 1)[1])][0] for h in hits] == ["thomas", "rebecca"]
    assert "bridge" in hits[1].paths


# Handles for speaker fields: user_2 is only ever "Bex" in what user_1 says to her.
ADDRESSED = [
    ("user_1", "Morning, Bex! How was the trip to the coast?"),
    ("user_2", "Lovely, the weather held all week and we swam every day."),
    ("user_1", "Bex, did you ever finish that quilt for your niece?"),
    ("user_2", "Not yet, the binding is taking forever."),
    ("user_1", "Good luck with the interview tomorrow, Bex!"),
    ("user_2", "Thanks! I'm nervous about the panel."),
]


def test_the_name_a_speaker_is_called_by_bridges_nowhere(tmp_path: Path, memory_store: str) -> None:
    # the best match says "Bex" to the one it addresses: every other turn addressed to her
    # is no second hop of the coast trip
    memory = open_seeded(tmp_path, memory_store, one_chat(ADDRESSED))
    try:
        question = "How was the trip to the coast?"
        bridged = [
            [h.id for h in retriever.search(question, limit=5, touch=False) if "bridge" in h.paths]
            for retriever in (memory.retriever, by_exact_name_only(memory))
        ]
    finally:
        memory.close()
    assert bridged[0] == []
    assert bridged[1], "with the called names unknown the bridge crosses them"


@pytest.mark.parametrize(
    "question",
    ["WHAT PET DID BECKY ADOPT?", "WHAT DID TOM BAKE FOR THE STREET PARTY?"],
)
def test_a_question_typed_in_capitals_places_its_speaker_as_a_lowercase_one(
    memory: Memory, question: str
) -> None:
    wanted = "rebecca" if "BECKY" in question else "thomas"
    assert speaker_of_top(memory.retriever, question) == wanted


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("WHAT DID MELANIE PAINT?", "what did melanie paint?"),
        ("API KEY?", "API KEY?"),  # acronyms, not shouting
        ("What did NASA launch?", "What did NASA launch?"),
        ("国庆节 NASA 发射了什么", "国庆节 NASA 发射了什么"),
    ],
)
def test_only_a_shouted_question_is_read_in_small_letters(typed: str, read: str) -> None:
    assert unshouted(typed) == read


def scored(retriever: Retriever, question: str) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 6)) for h in retriever.search(question, limit=5, touch=False)]


@pytest.mark.parametrize(
    ("framed", "plain"),
    [
        (
            "Hey, do you remember what Tom baked for the street party? Thanks!",
            "What Tom baked for the street party?",
        ),
        ("Hi! I was wondering, what is Becky learning?", "What is Becky learning?"),
    ],
)
def test_a_question_framed_as_a_request_is_searched_as_the_plain_question(
    memory: Memory, framed: str, plain: str
) -> None:
    assert scored(memory.retriever, framed) == scored(memory.retriever, plain)
    framing_kept = with_boosts(memory, framing=False)
    assert scored(framing_kept, framed) != scored(framing_kept, plain)
