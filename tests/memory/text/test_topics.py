"""Topics of a turn: the noun phrases and activities a later question may ask about."""

from __future__ import annotations

import pytest

from shiyi.index.text import stem_word
from shiyi.memory.text.topics import extract_topics, specificity, topic_words, within_budget


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # a noun phrase opened by a determiner, stopped by a light word ("yesterday")
        ("I just signed up for a pottery class yesterday.", ["pottery", "class"]),
        # gerunds name activities; a possessive opens a phrase
        ("We went camping with my kids", ["camping", "kids"]),
        # chat's stock adjectives and vague nouns are not topics
        ("What a great time! Such an awesome thing.", []),
        # capitalised words are names, the entity extractor's job
        ("We saw the Eiffel Tower and the river", ["river"]),
        # a stop word ends the phrase
        ("Check out the dinosaur exhibit at the museum", ["dinosaur", "exhibit", "museum"]),
    ],
)
def test_topic_words(text: str, words: list[str]) -> None:
    assert topic_words(text) == words


def test_a_topic_is_keyed_by_its_stem_so_other_forms_of_the_word_meet_it() -> None:
    (camping,) = extract_topics("Last weekend we went camping.")
    assert camping.type == "topic"
    assert camping.display == "camping"
    assert camping.name == stem_word("camped") == stem_word("camp")


def test_repeated_topics_are_listed_once_in_order() -> None:
    names = [t.name for t in extract_topics("My painting and your painting: the painting")]
    assert names == [stem_word("painting")]


def test_specificity_falls_as_more_events_mention_an_entity() -> None:
    values = [specificity(n) for n in (0, 1, 10, 100, 1000, 100_000)]
    assert values == sorted(values, reverse=True)
    assert values[0] == values[1]  # an unknown count is treated as one mention
    assert values[-1] > 0


def test_the_graph_expands_the_rarest_entities_within_its_budget() -> None:
    degree = {"common": 900, "rare": 3, "hub": 5000, "middle": 120}
    assert within_budget(degree, hub=1000, budget=1000) == ["rare", "middle"]
    assert within_budget(degree, hub=1000, budget=2000) == ["rare", "middle", "common"]
    # the rarest entity is read even when it alone is over the budget; a hub never is
    assert within_budget({"big": 800}, hub=1000, budget=100) == ["big"]
    assert within_budget({"hub": 5000}, hub=1000) == []
