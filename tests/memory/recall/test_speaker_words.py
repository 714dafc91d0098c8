"""The vector path embeds a question without the names of the people who speak in memory:
their names are in every one of their turns alike, and pulled a question's embedding towards
their content-free ones.  Unit cases, then both backends with the real embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.memory.models import EventRecord
from shiyi.memory.recall import speaker_words
from shiyi.memory.recall.query_signals import understand
from shiyi.memory.recall.retriever import Retriever
from shiyi.memory.recall.speaker_words import SpeakerWords
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from tests.support.conversations import one_chat, open_seeded, with_boosts

ANA = Viewer("ana")


def chat(turns: list[tuple[str, str]]) -> list[EventRecord]:
    return one_chat(turns)


def embedded(words: SpeakerWords, question: str, viewer: Viewer = ANA) -> tuple[str, ...]:
    return words.embedded(question, understand(question, lambda: 0.0), viewer)


def also(question: str, read: str) -> tuple[str, ...]:
    """What is embedded: the question as asked and, when it names a speaker, ``read``."""
    return (question,) if read == question else (question, read)


FRIENDS = chat([("melanie", "Morning!"), ("caroline", "Thank you, Mel!"), ("melanie", "Hi")])


@pytest.mark.parametrize(
    ("question", "read"),
    [
        ("What has Melanie painted?", "What has painted?"),
        ("Where did Melanie's kids go camping?", "Where did kids go camping?"),
        ("What did Mel bake?", "What did bake?"),  # a short form of her speaker field
        ("Has Carrie been to Paris?", "Has been to Paris?"),  # a nickname; Paris stays
        ("What did Melanie tell Caroline about Rome?", "What did tell about Rome?"),
        ("What did Sam say about the hike?", "What did Sam say about the hike?"),  # no speaker
        ("Melanie?", "Melanie?"),  # nothing else to embed
        ("what has melanie painted?", "what has painted?"),  # typed in small letters
        ("what did mel bake?", "what did bake?"),  # what caroline calls her
        ("what did carrie bake?", "what did carrie bake?"),  # small letters: no nicknames
        ("what did sam bake?", "what did sam bake?"),  # no speaker's name or nickname
    ],
)
def test_a_speakers_name_is_left_out_of_what_is_embedded(question: str, read: str) -> None:
    assert embedded(SpeakerWords(lambda viewer: FRIENDS), question) == also(question, read)


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("What did Mel bake?", "What did Mel bake? melanie"),  # her field, as her turns hold it
        ("What did Melanie bake?", "What did Melanie bake?"),
        ("What did Sam bake?", "What did Sam bake?"),
    ],
)
def test_the_keyword_search_adds_the_field_a_nickname_names(question: str, searched: str) -> None:
    words = SpeakerWords(lambda viewer: FRIENDS)
    assert words.searched(question, understand(question, lambda: 0.0), ANA) == searched


def test_a_word_the_chat_writes_in_small_letters_names_nobody() -> None:
    # a speaker called Bill, and a chat that talks of paying the bill
    bills = chat([("bill", "I paid the bill for the boat."), ("ana", "Thanks, Bill!")])
    words = SpeakerWords(lambda viewer: bills)
    assert embedded(words, "who paid the bill?") == ("who paid the bill?",)
    assert embedded(words, "what did ana pay?") == ("what did ana pay?", "what did pay?")


def test_a_speaker_known_by_a_handle_is_left_out_by_what_the_chat_calls_them() -> None:
    handles = chat([("user_2", "Thanks, Caroline! That was lovely."), ("user_1", "Anytime!")])
    words = SpeakerWords(lambda viewer: handles)
    # their turns carry "user_1", so "Caroline" is only in the turns that address them
    assert embedded(words, "What did Caroline paint?") == ("What did paint?",)
    assert embedded(words, "what did caroline paint?") == ("what did paint?",)
    mixed = chat([("rebecca", "Thanks, Tom! See you Sunday."), ("kayak_fan", "Anytime!")])
    words = SpeakerWords(lambda viewer: mixed)
    signals = understand("Did Tom paint with Rebecca?", lambda: 0.0)
    assert words.searched("Did Tom paint with Rebecca?", signals, ANA) == "Did paint with Rebecca?"
    assert embedded(words, "Did Tom paint with Rebecca?") == (
        "Did paint with Rebecca?",  # her turns carry her name: it stays in one of the two
        "Did paint with?",
    )


def test_an_agents_memory_has_no_speaker_names() -> None:
    agent = chat([("user", "I moved to Lisbon, Sam says hi"), ("assistant", "Noted, Sam!")])
    words = SpeakerWords(lambda viewer: agent)
    assert embedded(words, "Where does Sam live now?") == ("Where does Sam live now?",)


def test_speakers_are_learned_per_viewer_from_their_newest_turns_and_their_searches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    newest = {ANA: FRIENDS, Viewer("bo"): chat([("tom", "hey"), ("jo", "hi")])}
    reads: list[Viewer] = []

    def read(viewer: Viewer) -> list[EventRecord]:
        reads.append(viewer)
        return newest[viewer]

    words = SpeakerWords(read)
    tom = "What did Tom cook?"
    assert embedded(words, tom) == (tom,)  # not ana's speaker
    assert embedded(words, tom, Viewer("bo")) == (tom, "What did cook?")
    words.seen(ANA, chat([("tom", "I cooked a curry")]))  # a candidate of ana's search
    assert embedded(words, tom) == (tom, "What did cook?")
    assert reads == [ANA, Viewer("bo")]  # each viewer's newest turns read once
    clock = [0.0]
    monkeypatch.setattr(speaker_words.time, "monotonic", lambda: clock[0])
    words = SpeakerWords(read)
    embedded(words, "What did Tom cook?")
    clock[0] = speaker_words.REREAD_SECONDS + 1
    embedded(words, "What did Tom cook?")
    assert reads[-2:] == [ANA, ANA]  # read again after a while: someone new may speak


# Content-free turns of Melanie's beside the one that answers.
LEAD_IN = False  # the contrasts below show query-time mechanisms

TURNS = [
    ("melanie", "Thanks!"),
    ("caroline", "Haha, yes."),
    ("melanie", "See you soon!"),
    ("caroline", "Love that for you!"),
    ("melanie", "Yes, definitely."),
    ("melanie", "I finished a watercolour of the lake at sunset last week."),
    ("caroline", "I went to a pottery class on Saturday and made a bowl."),
    ("melanie", "Oh wow, how fun."),
    ("melanie", "My kids and I went camping by the river in July."),
]
WATERCOLOUR = "turn-5"


def semantic_top(retriever: Retriever, question: str, k: int) -> list[str]:
    return [h.id for h in retriever.search(question, mode="semantic", limit=k, touch=False)]


def test_the_turn_that_answers_comes_before_the_speakers_small_talk(memory: Memory) -> None:
    question = "What has Melanie painted?"
    assert WATERCOLOUR in semantic_top(memory.retriever, question, 2)
    names_embedded = with_boosts(memory, speaker_words=False)
    assert WATERCOLOUR not in semantic_top(names_embedded, question, 3)


def test_another_users_speakers_are_never_a_viewers(tmp_path: Path, memory_store: str) -> None:
    from dataclasses import replace

    mine = [replace(e, user_id="ana") for e in one_chat(TURNS)]
    theirs = [replace(e, id=f"bo-{e.id}", user_id="bo", role="tom") for e in one_chat(TURNS)]
    opened = open_seeded(tmp_path, memory_store, mine + theirs)
    try:
        question = "What did Tom paint?"
        opened.retriever.search(question, limit=5, touch=False, viewer=ANA)
        signals = understand(question, lambda: 0.0)
        assert opened.retriever._embedded(question, signals, ANA) == (question,)
        bo = Viewer("bo")
        opened.retriever.search(question, limit=5, touch=False, viewer=bo)
        assert opened.retriever._embedded(question, signals, bo) == (question, "What did paint?")
    finally:
        opened.close()


# A chat of handles: the other speaker says "Caroline" in small talk; her own turns do not.
HANDLES = [
    ("user_2", "Thanks, Caroline!"),
    ("user_1", "Haha, anytime."),
    ("user_2", "Love that, Caroline, see you soon!"),
    ("user_1", "I finished a watercolour of the lake at sunset last week."),
    ("user_2", "Caroline, you are the best, thank you!"),
    ("user_2", "I went to a cooking class on Saturday and made dumplings."),
    ("user_1", "My kids and I went camping by the river in July."),
]


def test_a_name_only_others_call_a_speaker_by_is_not_embedded(
    tmp_path: Path, memory_store: str
) -> None:
    opened = open_seeded(tmp_path, memory_store, one_chat(HANDLES))
    try:
        question = "What has Caroline painted?"
        top = semantic_top(opened.retriever, question, 1)
        assert top == ["turn-3"]
        # with her name kept beside the names-free question, the turns that address her lead
        kept = opened.retriever._vector(
            question, Viewer().owners(), 2, texts=(question, "What has painted?")
        )
        assert "turn-3" not in [s.id for s in kept.ranked[:1]]
    finally:
        opened.close()


PAINTED = [
    (
        "user_2",
        "Caroline, did you paint today? I spent all afternoon at the market with my sister.",
    ),
    ("user_1", "I painted the lake at sunset."),
    ("user_2", "Thanks, Caroline!"),
]


def test_the_keyword_search_leaves_out_a_name_only_others_call_a_speaker_by(
    tmp_path: Path, memory_store: str
) -> None:
    opened = open_seeded(tmp_path, memory_store, one_chat(PAINTED))
    try:
        question = "What did Caroline paint?"
        hits = opened.retriever.search(question, mode="keyword", limit=1, touch=False)
        assert [h.id for h in hits] == ["turn-1"]
        as_typed = opened.store.keyword_search(question, 1, Viewer().owners())
        assert [s.id for s in as_typed] == ["turn-0"]  # "Caroline" is in the others' turns
    finally:
        opened.close()
