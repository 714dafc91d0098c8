"""Who a question names: nicknames, short forms, near-spellings and what a chat calls people."""

from __future__ import annotations

import pytest

from shiyi.memory.text.people import (
    called,
    lowercase_names,
    named_speakers,
    nicknamed_speakers,
    query_names,
    said_as_word,
)

SPEAKERS = {"rebecca", "thomas"}


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("What did Mel paint last summer?", {"mel"}),
        ("When did Bex's sister move to Leeds?", {"bex", "leeds"}),
        ("Did Jon and Sam go hiking together?", {"jon", "sam"}),
        # the first word of a sentence is capitalised anyway; days and months are no people
        ("Car trouble: when did Tom fix it? Friday, or in June?", {"tom"}),
        ("what did mel paint?", set()),
        # names in any script's letters, not only A to Z
        ("What did José and Zoë cook?", {"josé", "zoë"}),
        ("Where did Łukasz meet Søren?", {"łukasz", "søren"}),
        ("Did NASA call Élodie?", {"élodie"}),  # a word in capitals is no name
    ],
)
def test_the_words_that_may_name_a_person(question: str, names: set[str]) -> None:
    assert query_names(question) == names


@pytest.mark.parametrize(
    ("name", "speakers", "found"),
    [
        # nicknames of the same given name (the nicknames package's table)
        ("bob", {"robert", "susan"}, {"robert"}),
        ("liz", {"elizabeth", "mark"}, {"elizabeth"}),
        ("becky", SPEAKERS, {"rebecca"}),
        ("tom", SPEAKERS, {"thomas"}),
        ("bill", {"william", "mary"}, {"william"}),
        # short forms, either way round
        ("mel", {"melanie", "gina"}, {"melanie"}),
        ("christopher", {"chris", "dana"}, {"chris"}),
        # near-spellings: one letter missing, added, changed or two swapped
        ("jonh", {"john", "maria"}, {"john"}),
        ("carolin", {"caroline", "melanie"}, {"caroline"}),
        ("katharine", {"katherine", "paul"}, {"katherine"}),
        ("deborah", {"debora", "paul"}, {"debora"}),
        # spellings English names vary by, made one (c/k, ch/k, ph/v, y/i, soft g/j)
        ("catherine", {"katherine", "paul"}, {"katherine"}),
        ("kristopher", {"christopher", "dana"}, {"christopher"}),
        ("steven", {"stephen", "mary"}, {"stephen"}),
        ("jeffrey", {"geoffrey", "ann"}, {"geoffrey"}),
        ("carolyn", {"caroline", "ben"}, {"caroline"}),
        ("nikolas", {"nicholas", "ann"}, {"nicholas"}),
        ("cara", {"kara", "ben"}, {"kara"}),
        ("katie", {"katherine", "paul"}, {"katherine"}),  # Kathryn's nickname, spelled alike
        ("zoe", {"zoë", "ben"}, {"zoë"}),  # typed without the accent
        ("renee", {"renée", "ben"}, {"renée"}),
        ("josé", {"jose", "ben"}, {"jose"}),  # and typed with it
        ("aleksandr", {"alexander", "ben"}, {"alexander"}),  # x as ks
        # a short form made of the name's end
        ("gina", {"georgina", "tom"}, {"georgina"}),
        ("tina", {"christina", "tom"}, {"christina"}),
        ("bella", {"isabella", "tom"}, {"isabella"}),
        # a plain rule before the nickname table's breadth: "chris" and "ann" are both
        # nicknames of Christiana there, but "chris" begins "christopher"
        ("chris", {"christopher", "ann"}, {"christopher"}),
        # not the same person
        ("tim", {"tom", "ann"}, set()),
        ("karen", {"corinne", "ben"}, set()),
        # "dean" (Deanne's spelling, a nickname of Ann's) is one letter from "sean": another
        # first sound, another name
        ("sean", {"ann", "paul"}, set()),
        ("ella", {"stella", "isabella"}, set()),  # the end of both: names neither
        ("ja", {"jane", "ben"}, set()),  # too short for a short form
        ("al", {"alan", "ben"}, {"alan"}),  # but a nickname
        ("sarah", {"paul", "ben"}, set()),
        ("john", {"joan", "paul"}, {"joan"}),  # one edit: the rule's known price
        ("mara", {"maria", "mary"}, set()),  # near both: names neither
        ("dan", {"daniel", "danielle"}, set()),  # short form of both: ambiguous
    ],
)
def test_a_name_names_a_speaker_by_nickname_short_form_or_spelling(
    name: str, speakers: set[str], found: set[str]
) -> None:
    assert named_speakers({name}, speakers) == found


def test_an_exact_name_wins_over_a_near_one() -> None:
    assert named_speakers({"dan"}, {"dan", "daniel"}) == {"dan"}


def test_what_the_other_speaker_calls_someone_names_them() -> None:
    turns = [
        ("thomas", "Thanks, Bex! The cake was amazing."),
        ("rebecca", "Glad you liked it. How was the match, Tommo?"),
        ("thomas", "Hey Bex, did you see the news?"),
        ("rebecca", "My friends call me Becks at work, by the way."),
        ("thomas", "Bye, Leeds!"),  # a place addressed is still whoever is listening
    ]
    calls = called(turns, SPEAKERS)
    assert calls["rebecca"] >= {"bex", "becks"}
    assert calls["thomas"] == {"tommo"}
    assert named_speakers({"bex"}, SPEAKERS, calls) == {"rebecca"}
    assert named_speakers({"tommo"}, SPEAKERS, calls) == {"thomas"}
    assert named_speakers({"bex"}, SPEAKERS) == set()


def test_in_a_group_chat_whom_a_greeting_addresses_is_not_known() -> None:
    turns = [("ana", "Thanks, Bex!"), ("ben", "Hi all"), ("rebecca", "Hello")]
    assert "bex" not in str(called(turns, {"ana", "ben", "rebecca"}))
    # but a name given for oneself is
    assert called([("rebecca", "Just call me Bex.")], {"ana", "ben", "rebecca"}) == {
        "rebecca": {"bex"}
    }


@pytest.mark.parametrize(
    "said",
    ["Hi! My name is Rebecca, nice to meet you.", "my name's Rebecca btw",
     "Everyone here calls me Rebecca.", "Hello all, I am called Rebecca at work."],
)  # fmt: skip
def test_a_name_said_of_oneself_names_a_speaker_known_by_a_handle(said: str) -> None:
    handles = {"user_17", "kayak_fan"}
    calls = called([("kayak_fan", said), ("user_17", "Welcome!")], handles)
    assert calls == {"kayak_fan": {"rebecca"}}
    assert named_speakers({"rebecca"}, handles, calls) == {"kayak_fan"}
    assert named_speakers({"becky"}, handles, calls) == {"kayak_fan"}  # a nickname of it


def test_im_before_a_capitalised_word_names_nobody() -> None:
    calls = called([("kayak_fan", "I'm Canadian, so winters are fine.")], {"kayak_fan", "u2"})
    assert calls == {}


@pytest.mark.parametrize(
    ("name", "speakers", "found"),
    [
        ("小明", {"王小明", "李小红"}, {"王小明"}),  # the given name
        ("老王", {"王小明", "李小红"}, {"王小明"}),  # 老 / 小 and the surname
        ("小李", {"王小明", "李小红"}, {"李小红"}),
        ("阿明", {"王小明", "李小红"}, {"王小明"}),  # 阿 and the given name's last character
        ("王老师", {"王小明", "李小红"}, {"王小明"}),  # the surname and a title
        ("李姐", {"王小明", "李小红"}, {"李小红"}),
        ("老王", {"王明", "李红"}, {"王明"}),  # two characters: the first is the surname
        ("娜娜", {"欧阳娜娜", "李红"}, {"欧阳娜娜"}),  # a compound surname
        ("阿明", {"小明", "小红"}, {"小明"}),  # a nickname speaker: its other nicknames
        # not the same person
        ("老王", {"王小明", "王大力"}, set()),  # both are 王: names neither
        ("小姐", {"小明", "小红"}, set()),  # "miss": a word, not 小明's or 小红's name
        ("明明", {"王小明", "李小红"}, set()),  # "clearly": a word, not a name
        ("明上", {"王小明", "李小红"}, set()),  # a piece of "小明上周…"
        ("王小明上", {"王小明", "李小红"}, set()),  # no short forms or near-spellings in Han
    ],
)
def test_a_chinese_name_names_a_speaker_as_people_address_each_other(
    name: str, speakers: set[str], found: set[str]
) -> None:
    assert named_speakers({name}, speakers) == found


def test_every_few_characters_of_a_chinese_question_may_be_a_name() -> None:
    names = query_names("老王上周去哪里出差了？")
    assert {"老王", "上周", "出差"} <= names
    assert "老王上周去" not in names  # at most four characters


def test_only_a_texts_opening_is_read_for_chinese_names() -> None:
    # a pasted page would give three candidate names per character
    assert "小明" in query_names("小明" + "好" * 2000)
    assert "小明" not in query_names("好" * 2000 + "小明")


def test_a_query_typed_without_capitals_offers_its_words_as_possible_names() -> None:
    assert lowercase_names("what did becky adopt?") == {"becky", "adopt"}
    assert lowercase_names("What did becky adopt?") == set()  # capitals: query_names reads it
    assert lowercase_names("did jo and al go?") == set()  # too short, or function words


def never_said(word: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("words", "speakers", "found"),
    [
        ({"becky", "adopt"}, SPEAKERS, {"rebecca"}),  # the nickname table
        ({"tom"}, SPEAKERS, {"thomas"}),
        ({"mel"}, {"melanie", "caroline"}, {"melanie"}),  # a short form
        ({"jose"}, {"josé", "ann"}, {"josé"}),  # typed without the accent
        ({"rebeca"}, SPEAKERS, set()),  # near-spellings need a capital to count
        ({"dan"}, {"daniel", "danielle"}, set()),  # both: neither
    ],
)
def test_a_lowercase_word_names_a_speaker_by_nickname_or_short_form(
    words: set[str], speakers: set[str], found: set[str]
) -> None:
    assert nicknamed_speakers(words, speakers, never_said) == found


def test_a_word_the_conversation_writes_as_a_word_names_nobody() -> None:
    # "the bill", "my car": in this conversation these are words, not William or Caroline
    def said(word: str) -> bool:
        return word in {"bill", "car"}

    assert nicknamed_speakers({"bill"}, {"william", "mary"}, said) == set()
    assert nicknamed_speakers({"car"}, {"caroline", "mel"}, said) == set()
    assert nicknamed_speakers({"bill"}, {"william", "mary"}, never_said) == {"william"}


@pytest.mark.parametrize(
    ("word", "text", "said"),
    [
        ("bill", "ugh, the bill came today", True),
        ("will", "will you come?", True),
        ("becky", "thanks, becky!", False),  # a chat typed without capitals addresses her
        ("becky", "hey becky how was the trip", False),
        ("bill", "Bill came over", False),  # capitalised: a name
    ],
)
def test_a_word_is_said_as_a_word_unless_it_addresses_someone(
    word: str, text: str, said: bool
) -> None:
    assert said_as_word(word, [text]) is said
