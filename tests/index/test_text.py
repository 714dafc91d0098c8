from __future__ import annotations

import pytest

from shiyi.index.text import MAX_HAN_RUN, query_terms, stem_word, tokenize, warm_up, word_set


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Got error 404", ["got", "error", "404"]),
        ("pi is 3.14 in 2024", ["pi", "3.14", "2024"]),
        ("user3 logged in", ["user3", "logged"]),
        ("released 2024-05-01", ["released", "2024-05-01", "2024", "05", "01"]),
        ("snake_case_name", ["snake_case_name", "snake", "case", "name"]),
        ("camelCase", ["camelcase", "camel", "case"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("dotted.module.path", ["dotted.module.path", "dotted", "module", "path"]),
    ],
)
def test_keeps_numbers_dates_and_identifiers(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_with_stems_plain_english_words_also_give_their_stem() -> None:
    # "paint" finds "painted"; identifiers and their parts are never stemmed
    assert tokenize("Melanie painted sunsets") == ["melanie", "painted", "sunsets"]
    assert tokenize("Melanie painted sunsets", stems=True) == [
        "melanie", "melani", "painted", "paint", "sunsets", "sunset"
    ]  # fmt: skip
    assert tokenize("running_total paintedWall") == [
        "running_total", "running", "total", "paintedwall", "painted", "wall"
    ]  # fmt: skip
    found = set(query_terms("What did she paint?", stems=True))
    assert found & set(tokenize("She painted it", stems=True)) == {"paint"}


def test_a_shouted_word_is_stemmed_as_a_plain_one_but_not_an_identifier() -> None:
    assert tokenize("OMG I PAINTED THE SUNSET", stems=True) == ["omg", "painted", "paint", "sunset"]
    mixed = tokenize("getUser iPhones", stems=True)
    assert "get" in mixed  # its camelCase part
    assert "iphon" not in mixed  # mixed case is a name, not a word to stem


def test_file_path_gives_whole_path_basename_and_stem() -> None:
    terms = tokenize("see src/app/main.py")
    assert terms[:2] == ["see", "src/app/main.py"]
    assert {"main.py", "main", "src", "app"} <= set(terms)


def test_url_gives_host_and_email_gives_parts() -> None:
    terms = tokenize("https://www.github.com/kuzudb/kuzu and bob.smith@example.com")
    assert {"www.github.com", "github.com", "github", "kuzudb", "kuzu"} <= set(terms)
    assert {"bob.smith@example.com", "bob.smith", "example.com"} <= set(terms)


def test_chinese_is_segmented_into_words() -> None:
    terms = tokenize("我们明天部署新版本")
    assert "部署" in terms
    assert "版本" in terms
    assert "我们" not in terms  # stop word


def test_search_mode_also_yields_sub_words() -> None:
    assert {"人民", "共和国", "中华人民共和国"} <= set(tokenize("中华人民共和国"))


def test_mixed_language_and_full_width_digits() -> None:
    terms = tokenize("修复了 bug 1234，发布于２０２４年")
    assert {"修复", "bug", "1234", "2024", "发布"} <= set(terms)


def test_stop_words_dropped_but_numbers_never() -> None:
    assert tokenize("the a is 的 了 是 1 0 x") == ["1", "0"]


def test_a_stop_word_leaves_no_stem_behind() -> None:
    # Snowball stems "does" as "doe" and "very" as "veri": as terms they matched every
    # "does" and "very" of the memory as if they were content words.
    assert tokenize("Does she go? Very much so, DOES it", stems=True) == ["go", "much"]
    assert tokenize("a doe and her fawn", stems=True) == ["doe", "fawn"]


def test_fts_syntax_is_just_text() -> None:
    assert tokenize('NEAR("foo"* -bar :baz)') == ["near", "foo", "bar", "baz"]


def test_repeats_kept_but_query_terms_deduplicated() -> None:
    assert tokenize("error error") == ["error", "error"]
    assert query_terms("error Error 404 error") == ["error", "404"]


def test_empty_text() -> None:
    assert tokenize("") == []
    assert tokenize("  ，。!? ") == []


def test_warm_up_runs_in_background() -> None:
    thread = warm_up()
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_a_word_jieba_guessed_also_yields_its_dictionary_pieces() -> None:
    # jieba's HMM glues "画" to a neighbour in some texts ("这周画了" -> "周画", "9日画了"
    # -> "日画"): the pieces keep "画" findable either way
    assert "画" in tokenize("我这周画了一幅女儿的肖像")
    assert "画" in tokenize("李小红在2023年6月9日画了什么")
    # an unknown name stays whole, and its characters match a text segmented otherwise
    terms = tokenize("李小红二〇二三年六月九号画了什么")
    assert {"李", "小", "红", "画", "六月"} <= set(terms)
    assert {"李小红", "李", "小", "红"} <= set(tokenize("李小红说她画了画"))


def test_dictionary_words_are_not_split_further() -> None:
    assert tokenize("我们明天部署新版本") == ["明天", "部署", "新", "版本"]


def test_a_long_unbroken_han_run_is_segmented_in_pieces_and_loses_no_text() -> None:
    run = "部署新版本" * 200  # 1,000 characters without punctuation
    terms = tokenize(run)
    # cut every MAX_HAN_RUN characters: at most one word per cut is split
    cuts = len(run) // MAX_HAN_RUN
    assert 200 - cuts <= terms.count("部署") <= 200
    assert 200 - cuts <= terms.count("版本") <= 200


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("favourite", "favorite"),
        ("colours", "colors"),
        ("organised", "organized"),
        ("realise", "realize"),
        ("theatre", "theater"),
        ("centre", "center"),
        ("grey", "gray"),
        ("travelling", "traveling"),
        ("neighbours", "neighbors"),
        ("programme", "program"),
        ("jewellery", "jewelry"),
        ("apologise", "apologize"),
    ],
)
def test_a_british_spelling_stems_as_the_american_one(british: str, american: str) -> None:
    assert stem_word(british) == stem_word(american)
    assert stem_word(british.capitalize()) == stem_word(american)
    assert set(tokenize(f"my {british}", stems=True)) & set(tokenize(american, stems=True))


def test_words_with_one_spelling_keep_their_own_stem() -> None:
    assert stem_word("painting") == "paint"
    assert stem_word("color") == "color"
    # without stems (the knowledge base's exact words) the spelling is left alone
    assert tokenize("favourite colour") == ["favourite", "colour"]


@pytest.mark.parametrize(
    ("hyphenated", "joined"),
    [
        ("I run to de-stress.", "How do you destress?"),
        ("My co-workers threw a party.", "What did the coworkers do?"),
        ("Her well-being comes first.", "wellbeing"),
        ("Send me an e-mail.", "email"),
        ("We run a non-profit.", "nonprofit"),
    ],
)
def test_a_hyphenated_word_meets_the_same_word_written_as_one(hyphenated: str, joined: str) -> None:
    for stems in (False, True):
        shared = set(tokenize(hyphenated, stems=stems)) & set(query_terms(joined, stems=stems))
        assert shared - {"de", "co", "well", "e", "non"}


def test_a_stretched_word_is_also_indexed_as_its_english_words_and_their_stems() -> None:
    terms = tokenize("i loooved the concert, sooo goooood", stems=True)
    assert {"loooved", "loved", "love", "goooood", "good", "god"} <= set(terms)
    assert "so" not in terms  # a stop word, stretched or not
    assert tokenize("Hahahaaaa", stems=True) == ["hahahaaaa"]  # no English reading: as typed
    assert "book" in tokenize("a good book") and "bok" not in tokenize("a good book")


def test_identifiers_numbers_and_reduplications_are_not_joined() -> None:
    assert "user3" not in tokenize("user-3 on 2024-05-01")
    assert "20240501" not in tokenize("user-3 on 2024-05-01")
    assert "soso" not in tokenize("It was so-so.")
    assert "halhal" not in tokenize("hal-hal kecil")  # Indonesian plural: things


@pytest.mark.parametrize(
    ("plural", "singular"),
    [("children", "child"), ("wives", "wife"), ("women", "woman"), ("men", "man"),
     ("teeth", "tooth"), ("knives", "knife")],
)  # fmt: skip
def test_an_irregular_plural_meets_its_singular(plural: str, singular: str) -> None:
    assert stem_word(plural) == stem_word(singular)
    said = set(tokenize(f"Her {plural} were there.", stems=True))
    assert said & set(query_terms(f"Where was her {singular}?", stems=True))


CONTENT = """kayak lisbon spring station final sail half marathon coast bus tiles tile song
tomatoes tomato trout knit"""
"""The words told and asked share besides the verb."""


@pytest.mark.parametrize(
    ("told", "asked"),
    [
        ("I bought a used kayak last week.", "What did Sam buy?"),
        ("We went to Lisbon in spring.", "Where did they go in spring?"),
        ("I met my old roommate at the station.", "Who did she meet at the station?"),
        ("My team won the regional final!", "Did her team win the final?"),
        ("He taught me to sail.", "Who did he teach to sail?"),
        ("I ran my first half marathon.", "When did she run a half marathon?"),
        ("We saw whales off the coast.", "What did they see off the coast?"),
        ("I lost my wallet on the bus.", "What did she lose on the bus?"),
        ("She chose the blue tiles.", "Why did she choose the tiles?"),
        ("I wrote a song about my grandpa.", "What did he write about?"),
        ("They've grown tomatoes for years.", "What does she grow?"),
        ("I caught a huge trout!", "What did he catch?"),
        ("I learnt to knit.", "When did she learn to knit?"),
    ],
)
def test_an_irregular_past_meets_the_base_form_a_question_asks_with(told: str, asked: str) -> None:
    said = set(tokenize(told, stems=True))
    assert said & set(query_terms(asked, stems=True)) - word_set(CONTENT)


def test_a_verb_form_with_another_common_reading_is_left_alone() -> None:
    # "a bit", "a rose", "the ground", "a shot", "fed up", "stuck in traffic"
    for word in ("bit", "rose", "ground", "shot", "fed", "stuck", "lay"):
        assert stem_word(word) == word


def test_a_word_before_a_negation_is_no_verb_form() -> None:
    # "won't" is will not: it must not say "win"
    assert "win" not in tokenize("I won't go, sorry", stems=True)
    assert "win" not in tokenize("I won\u2019t go, sorry", stems=True)
    assert "win" in tokenize("We won the cup", stems=True)


def test_a_word_read_once_is_read_the_same_in_every_other_context() -> None:
    # each distinct word is expanded once: what comes after it, or whether stems were
    # asked for, must still decide its stem as when every occurrence was expanded anew
    assert "win" in tokenize("We won the cup", stems=True)
    assert "win" not in tokenize("We won't, we won the cup"[:9], stems=True)
    assert tokenize("won", stems=False) == ["won"]
    assert "paint" in tokenize("Painted walls", stems=True)
    assert tokenize("Painted walls", stems=False) == ["painted", "walls"]
    assert tokenize("Painted walls", stems=True) == ["painted", "paint", "walls", "wall"]
    assert tokenize("co-workers", stems=False) == ["co-workers", "co", "workers", "coworkers"]


def test_a_long_token_is_read_but_not_kept() -> None:
    # a blob pasted into a tool result must not fill the cache of words read once
    from shiyi.index import text

    blob = "Qm9vayBvZiB0aGUgZGF5" * 4
    before = text._word_token_terms.cache_info().currsize
    assert blob.lower() in tokenize(blob)
    assert text._word_token_terms.cache_info().currsize == before
    tokenize("xylophonist")  # a short word is kept
    assert text._word_token_terms.cache_info().currsize == before + 1


def test_a_plural_that_is_also_a_verb_keeps_the_verb() -> None:
    # "she lives in Oslo" must still meet "where does she live"
    assert stem_word("lives") == stem_word("live")


@pytest.mark.parametrize(
    ("chat", "question"),
    [
        ("My kids loved the museum.", "What did her children love?"),
        ("The kid was thrilled.", "How was the child?"),
        ("My mom gave me this necklace.", "What did her mother give her?"),
        ("Grandma taught me to knit.", "Who taught her grandmother's craft?"),
        ("My dad fixed the bike.", "What did her father fix?"),
        ("My hubby cooked dinner.", "What did her husband cook?"),
    ],
)
def test_family_words_people_chat_in_meet_the_plain_ones(chat: str, question: str) -> None:
    said = set(tokenize(chat, stems=True))
    asked = set(query_terms(question, stems=True))
    assert said & asked - {"museum", "bike", "dinner", "necklace"}


@pytest.mark.parametrize(
    ("chat", "question"),
    [
        ("omg happy bday!!", "What did she say on his birthday?"),
        ("Happy b-day, Jo!", "Who wished Jo a happy birthday?"),
        ("sending u a pic of the puppy", "Did she share a picture of the puppy?"),
        ("my bf got me flowers", "What did her boyfriend give her?"),
        ("my fave band is playing tonite", "What is her favorite band?"),
        ("had a long convo with my landlord", "What was the conversation with the landlord?"),
        ("the vacay in Crete was perfect", "Where did she go on vacation?"),
        ("dinner w the fam", "What did she do with her family?"),
        ("my bestie moved to Leeds", "Where did her best friend move?"),
        ("I start uni in the fall", "When does she start university?"),
    ],
)
def test_short_forms_people_type_meet_the_words_questions_ask_with(
    chat: str, question: str
) -> None:
    said = set(tokenize(chat, stems=True))
    asked = set(query_terms(question, stems=True))
    shared = {"puppy", "landlord", "crete", "leeds", "band", "jo", "happy", "happi", "fall"}
    assert said & asked - shared


def test_short_forms_with_two_readings_stay_as_typed() -> None:
    # "doc" is a doctor or a document, "min" a minute or a minimum, "hw" homework or hardware
    for word in ("doc", "min", "hw", "yr"):
        assert stem_word(word) == word
