"""Which words English knows, and how much of a text is English (shiyi.index.english)."""

from __future__ import annotations

import pytest

from shiyi.index.english import (
    SHARE_READ,
    embedding_says_little,
    embedding_vote,
    english_share,
    is_english,
    knows,
    reads_english_only,
    unstretched,
)


def test_english_knows_words_and_names_but_not_slips() -> None:
    assert all(is_english(w) for w in ["hiking", "restaurant", "melanie", "wether"])
    assert not any(is_english(w) for w in ["resturant", "becuase", "hikng", "weahter"])


@pytest.mark.parametrize(
    ("stretched", "readings"),
    [
        ("soooo", ("so",)),
        ("loooove", ("love",)),
        ("goooood", ("good", "god")),  # both are English; the index keeps both
        ("yesss", ("yes",)),
        ("amazinggggg", ("amazing",)),
        ("sweeeeet", ("sweet",)),
        ("pleaseeee", ("please",)),
        ("excitedddd", ("excited",)),
        ("carolineee", ("caroline",)),  # a name called out
    ],
)
def test_a_stretched_word_reads_as_the_english_words_it_can_be(
    stretched: str, readings: tuple[str, ...]
) -> None:
    assert unstretched(stretched) == readings
    assert knows(stretched)


@pytest.mark.parametrize(
    "word",
    [
        "book",  # two letters in a row is English spelling, not stretching
        "hahahaaaa",  # no English reading
        "sooooooo" + "o" * 60,  # longer than anything typed to be read
        "cooolooolooolooo",  # more runs than read
        "caféééé",
    ],
)
def test_words_that_are_not_stretched_english_have_no_reading(word: str) -> None:
    assert unstretched(word) == ()


def test_stretched_words_keep_a_chat_english() -> None:
    text = "sooo excitedddd, the trip was amaaazing and i loooove the pics"
    assert english_share(text) == 1.0
    assert embedding_vote(text, "all-MiniLM-L6-v2") == 1.0


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("Where did we book the table for my birthday dinner?", 1.0),
        ("What's next? I can't remember what we planned.", 1.0),
        ("Kapan istri saya jualan di pasar?", 0.0),  # Indonesian
        ("Wah, good if they're all correct! Happy to hear that, Mas.", 1.0),
        ("Anak saya sakit, apa yang harus saya lakukan?", 1 / 7),  # "apa" is English
    ],
)
def test_the_share_of_a_texts_words_english_knows(text: str, share: float) -> None:
    assert english_share(text) == pytest.approx(share)


@pytest.mark.parametrize(
    "text",
    [
        "Pak Budi, AED?",  # names and an acronym say nothing of the language
        "我们上次去的餐厅叫什么？",  # no Latin words to judge by
        "Is it OK?",  # words of under three letters
        "",
    ],
)
def test_a_text_without_small_latin_words_has_no_share(text: str) -> None:
    assert english_share(text) is None


def test_parts_of_words_are_not_words() -> None:
    # "isn" of "isn't", "caf" of "café" and "abc" of "abc123" would each count as unknown
    assert english_share("isn't café abc123 pasar") == 0.0
    assert english_share("isn’t it the café, pasar") == 0.5


def test_a_long_text_is_judged_by_its_start() -> None:
    english = "we walked along the river " * SHARE_READ
    assert english_share(english + "saya mau belajar bahasa " * 10_000) == 1.0


@pytest.mark.parametrize(
    ("model", "english_only"),
    [
        ("all-MiniLM-L6-v2", True),  # shiyi's default
        ("all-MiniLM-L6-v2-int8", True),
        ("all-minilm:l6-v2", True),  # as Ollama names it
        ("bge-small-en-v1.5", True),
        ("all-mpnet-base-v2", True),
        ("paraphrase-multilingual-MiniLM-L12-v2", False),
        ("text-embedding-3-small", False),
        ("bge-m3", False),
        ("multilingual-e5-small", False),
        ("nomic-embed-text", False),  # unknown: taken to read every language
    ],
)
def test_which_embedding_models_read_english_only(model: str, english_only: bool) -> None:
    assert reads_english_only(model) is english_only


def test_an_english_only_models_embedding_counts_by_the_share_in_english() -> None:
    assert embedding_vote("Kapan istri saya jualan di pasar?", "all-MiniLM-L6-v2") == 0.0
    assert embedding_vote("Where is the market, Pak?", "all-MiniLM-L6-v2") == 1.0
    # English with words the list does not know: read well by the model all the same
    question = "did the family go on a roadtrip to destress and buy hoodies for the kids?"
    assert embedding_vote(question, "all-MiniLM-L6-v2") == 1.0
    assert embedding_vote("Bagaimana dengan motor saya yang mogok?", "all-MiniLM-L6-v2") == 0.4
    assert embedding_vote("Pak Budi?", "all-MiniLM-L6-v2") == 1.0  # nothing to judge by
    assert embedding_vote("Kapan istri saya jualan di pasar?", "bge-m3") == 1.0
    assert embedding_vote("Kapan istri saya jualan di pasar?", None) == 1.0


def test_an_english_only_embedding_of_chinese_says_little() -> None:
    minilm = "sentence-transformers/all-MiniLM-L6-v2"
    assert embedding_says_little("我有一个哥哥", minilm)
    assert embedding_says_little("私は猫が好きです", minilm)
    assert not embedding_says_little("I have an older brother", minilm)
    assert not embedding_says_little("我有一个哥哥", "paraphrase-multilingual-MiniLM-L12-v2")
    assert not embedding_says_little("我有一个哥哥", "bge-m3")  # an unknown model reads all
