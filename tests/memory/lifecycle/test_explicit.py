"""An explicit ``remember`` without a key: a plain statement of an attribute replaces the
attribute's older value, the answer says what it replaced or confirmed, and another
person's statement or a description of someone replaces nothing of the user's.

Real stores on both backends (embedded Kuzu + SQLite, PostgreSQL).
"""

from __future__ import annotations

from dataclasses import replace

from shiyi.memory.lifecycle.explicit import Statement
from tests.memory.lifecycle.conftest import MemoryFactory, statuses


def test_a_new_value_stated_plainly_replaces_the_old_and_says_so(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    blue = memory.remember_outcome(Statement("My favourite colour is blue"))
    assert blue.outcome == "new" and blue.replaced == ()
    green = memory.remember_outcome(Statement("Actually, my favorite color is green."))
    assert green.outcome == "replaced"
    assert [f.id for f in green.replaced] == [blue.fact.id]
    again = memory.remember_outcome(Statement("Actually, my favorite color is green."))
    assert (again.outcome, again.fact.id) == ("confirmed", green.fact.id)
    assert again.fact.evidence_count == 2
    assert statuses(memory) == {
        "My favourite colour is blue": "superseded",
        "Actually, my favorite color is green.": "active",
    }


def test_a_relatives_move_is_their_own_slot_not_the_users(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("I live in Berlin")
    porto = memory.remember_outcome(Statement("My sister lives in Porto"))
    assert porto.outcome == "new"  # the user's Berlin stays the user's
    lisbon = memory.remember_outcome(Statement("My sister moved to Lisbon"))
    assert [f.value for f in lisbon.replaced] == ["My sister lives in Porto"]
    assert "sister" in lisbon.fact.entities
    munich = memory.remember_outcome(Statement("I moved to Munich"))
    assert [f.value for f in munich.replaced] == ["I live in Berlin"]
    assert statuses(memory) == {
        "I live in Berlin": "superseded",
        "My sister lives in Porto": "superseded",
        "My sister moved to Lisbon": "active",
        "I moved to Munich": "active",
    }
    assert memory.forget_entity("sister").facts == 2


def test_a_named_relatives_move_is_theirs_however_it_is_keyed(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    berlin = memory.remember("I live in Berlin")
    porto = memory.remember_outcome(Statement("My sister Ana lives in Porto"))
    assert porto.outcome == "new" and "ana" in porto.fact.entities
    lisbon = memory.remember_outcome(Statement("Ana moved to Lisbon"))
    assert [f.id for f in lisbon.replaced] == [porto.fact.id]
    # keyed as an extraction keys it: the name is the sentence's subject, not its object
    oslo = memory.remember_outcome(
        Statement("My friend Sam lives in Oslo", key="lives in", about=["Sam"])
    )
    apposed = memory.remember_outcome(
        Statement("Jonas, my flatmate, lives in Graz", key="city", about=["Jonas"])
    )
    assert (oslo.outcome, apposed.outcome) == ("new", "new")
    assert statuses(memory)[berlin.value] == "active"


def test_the_same_value_in_other_words_confirms_and_a_denial_replaces(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    berlin = memory.remember_outcome(Statement("I live in Berlin"))
    still = memory.remember_outcome(Statement("Yes, I still live in Berlin."))
    assert (still.outcome, still.fact.id) == ("confirmed", berlin.fact.id)
    gone = memory.remember_outcome(Statement("I no longer live in Berlin"))
    assert [f.id for f in gone.replaced] == [berlin.fact.id]
    assert statuses(memory) == {
        "I live in Berlin": "superseded",
        "I no longer live in Berlin": "active",
    }


def test_a_new_count_or_a_changed_opinion_replaces_only_its_own_thing(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    said = ["I have two cats", "I have three cats now", "I like coffee", "I like tea"]
    done = [memory.remember_outcome(Statement(text)) for text in said]
    assert [d.outcome for d in done] == ["new", "replaced", "new", "new"]
    # before, "three cats" was taken for a repeat of "two cats" and not stored at all
    assert done[1].fact.value == "I have three cats now"
    gone = memory.remember_outcome(Statement("I don't like coffee anymore"))
    assert [f.value for f in gone.replaced] == ["I like coffee"]
    assert statuses(memory) == {
        "I have two cats": "superseded",
        "I have three cats now": "active",
        "I like coffee": "superseded",
        "I like tea": "active",
        "I don't like coffee anymore": "active",
    }


def test_descriptions_of_people_and_things_replace_nothing(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    said = ["My sister is Ana", "My sister is a doctor", "My car is red", "My car is in the shop"]
    outcomes = [memory.remember_outcome(Statement(text)).outcome for text in said]
    assert outcomes == ["new"] * 4
    assert set(statuses(memory).values()) == {"active"}


def test_a_given_key_or_a_kind_without_slots_is_taken_as_given(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("I live in Berlin", key="home office")  # the caller's key wins
    kept = memory.remember_outcome(Statement("I live in Paris"))
    assert kept.outcome == "new"
    todo = [memory.remember(f"My deadline is {day}", kind="todo") for day in ("Monday", "Friday")]
    agent = memory.remember_outcome(Statement("My name is Shiyi", scope="agent"))
    assert {f.key for f in todo} == {""} and agent.fact.key == ""
    assert set(statuses(memory).values()) == {"active"}


def test_chinese_statements_replace_their_own_slot(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    berlin = memory.remember_outcome(Statement("我住在柏林"))
    sister = memory.remember_outcome(Statement("我妹妹住在波尔图"))
    munich = memory.remember_outcome(Statement("我最近搬到了慕尼黑"))
    assert sister.outcome == "new"
    assert [f.id for f in munich.replaced] == [berlin.fact.id]
    assert statuses(memory) == {
        "我住在柏林": "superseded",
        "我妹妹住在波尔图": "active",
        "我最近搬到了慕尼黑": "active",
    }


def test_a_key_naming_no_attribute_is_no_slot(open_memory: MemoryFactory) -> None:
    memory = open_memory()  # a tiny model's keys: the tool's or an argument's name
    sister = memory.remember_outcome(Statement("Your sister Ana lives in Porto.", key="remember"))
    other = memory.remember_outcome(Statement("Arena now", key="remember"))
    assert (sister.fact.key, other.outcome) == ("", "new")
    berlin = memory.remember_outcome(Statement("I live in Berlin", key="text"))
    munich = memory.remember_outcome(Statement("I moved to Munich", key="Memory"))
    assert berlin.fact.key == "lives in" and [f.id for f in munich.replaced] == [berlin.fact.id]
    assert statuses(memory)["Your sister Ana lives in Porto."] == "active"


def test_another_day_or_month_is_never_taken_for_a_repeat(open_memory: MemoryFactory) -> None:
    memory = open_memory()  # they embed 0.9 alike: each was "confirmed" and the new one lost
    pairs = [
        ("I go swimming every Saturday.", "I go swimming every Sunday."),
        ("I play tennis on weekends.", "I play tennis on weekdays."),
        ("I sleep on the left side of the bed.", "I sleep on the right side of the bed."),
        ("Our anniversary is in March.", "Our anniversary is in May."),
    ]
    done = [[memory.remember_outcome(Statement(t)).outcome for t in pair] for pair in pairs]
    assert done == [["new", "new"], ["new", "new"], ["new", "new"], ["new", "replaced"]]
    kept = statuses(memory)
    assert all(kept[new] == "active" for _, new in pairs)
    assert kept["Our anniversary is in March."] == "superseded"  # a slot: the newer wins


def test_a_value_said_to_have_changed_replaces_the_same_sentence_of_no_slot(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    changed = [
        ("I usually go running on Mondays.", "I usually go running on Tuesdays now."),
        ("I wake up at 6am.", "I wake up at 7 now."),
        ("My gym class is in the morning.", "My gym class is in the evening these days."),
        ("I take 2 sugars in my tea.", "I take one sugar in my tea instead."),
    ]
    both_true = [  # nothing says the value changed: two meetings, two runs
        ("I have a meeting on Monday.", "I have a meeting on Tuesday."),
        ("I went running on Monday.", "I went running on Tuesday."),
        ("I'm learning Spanish.", "I'm learning Japanese now too."),  # one more: both
    ]
    for old, new in changed + both_true:
        memory.remember(old)
        memory.remember(new)
    kept = statuses(memory)
    assert {old: kept[old] for old, _ in changed} == dict.fromkeys(
        [old for old, _ in changed], "superseded"
    )
    assert all(kept[new] == "active" for _, new in changed)
    assert all(kept[a] == kept[b] == "active" for a, b in both_true)


def test_plain_updates_of_age_name_count_and_number_replace_their_slot(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    updates = [
        ("I'm 34.", "I am 35 now."),
        ("I'm 30 years old.", "I turned 31 today."),
        ("My cat's name is Milo.", "My cat is called Luna now."),
        ("I have a dog.", "I have two dogs now."),
        ("I have a car.", "I don't have a car anymore."),
        ("My phone number is 555-1234.", "My new phone number is 555-9999."),
        ("My favorite food is sushi.", "These days my favorite food is ramen."),
    ]
    for old, new in updates:
        first = memory.remember_outcome(Statement(old))
        second = memory.remember_outcome(Statement(new))
        assert [f.id for f in second.replaced] == [first.fact.id], (old, new)
    memory.remember("I have a question.")  # counts nothing: no slot, nothing replaced
    assert statuses(memory)["I have a question."] == "active"


def test_chinese_values_an_english_embedder_finds_alike_are_both_kept(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()  # all-MiniLM-L6-v2 reads no Chinese: each later value was lost
    brother = memory.remember_outcome(Statement("我有一个哥哥。"))
    sister = memory.remember_outcome(Statement("我有一个妹妹。"))
    assert (brother.outcome, sister.outcome) == ("new", "new")
    apple = memory.remember_outcome(Statement("我最喜欢的水果是苹果。"))
    mango = memory.remember_outcome(Statement("我最喜欢的水果现在是芒果。"))
    assert [f.id for f in mango.replaced] == [apple.fact.id]
    again = memory.remember_outcome(Statement("我一直都有一个妹妹。"))
    assert again.outcome == "confirmed" and again.fact.id == sister.fact.id


def test_a_denial_in_the_same_words_replaces_the_statement(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    for old, new in [
        ("I drink alcohol.", "I stopped drinking alcohol."),
        ("I have a landline.", "I don't have a landline anymore."),
        ("My birthday is in July.", "My birthday's in July."),  # the same: confirmed
    ]:
        memory.remember(old)
        memory.remember(new)
    kept = statuses(memory)
    assert kept["I drink alcohol."] == "superseded"
    assert kept["I stopped drinking alcohol."] == "active"
    assert kept["I have a landline."] == "superseded"
    assert "My birthday's in July." not in kept  # a repeat: no copy


def test_relatives_named_in_the_plural_are_the_subject(open_memory: MemoryFactory) -> None:
    memory = open_memory()  # "live", not "lives": the parents were read as the object
    mine = memory.remember_outcome(Statement("I live in Leeds."))
    kent = memory.remember_outcome(Statement("My parents live in Kent."))
    devon = memory.remember_outcome(Statement("My parents moved to Devon."))
    assert kent.outcome == "new" and kent.replaced == ()
    assert [f.id for f in devon.replaced] == [kent.fact.id]
    assert statuses(memory)[mine.fact.value] == "active"


def test_an_ending_replaces_the_users_statement_of_holding_it(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    caravan = memory.remember_outcome(Statement("I have a caravan."))
    sold = memory.remember_outcome(Statement("I sold my caravan."))
    assert sold.outcome == "replaced"
    assert [f.id for f in sold.replaced] == [caravan.fact.id]
    memory.remember("I work for Siemens.")  # a slot (works at): ended all the same
    memory.remember("I resigned from Siemens and joined Bosch.")
    memory.remember("I'm seeing Priya.")
    memory.remember("Priya and I split up.")
    memory.remember("I play badminton.")
    memory.remember("I left my racket at the club.")  # put down: ends nothing
    again = memory.remember_outcome(Statement("I got rid of the caravan."))
    assert again.outcome == "confirmed" and again.fact.id == sold.fact.id
    kept = statuses(memory)
    assert kept["I have a caravan."] == "superseded"
    assert kept["I work for Siemens."] == "superseded"
    assert kept["I'm seeing Priya."] == "superseded"
    assert kept["I play badminton."] == "active"
    assert kept["I left my racket at the club."] == "active"


def test_another_users_ending_ends_nothing_of_mine(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    mine = memory.remember_outcome(Statement("I play badminton."))
    theirs = memory.remember_outcome(
        Statement("I gave up badminton."), viewer=replace(memory.viewer, user_id="someone")
    )
    assert theirs.replaced == ()
    assert statuses(memory)[mine.fact.value] == "active"


def test_providers_diets_and_things_held_by_name_are_believed_current(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    sarah = memory.remember_outcome(Statement("My manager is Sarah."))
    tom = memory.remember_outcome(Statement("My new manager is Tom."))
    assert [f.id for f in tom.replaced] == [sarah.fact.id]
    memory.remember("My manager is on holiday this week.")  # described: replaces nothing
    memory.remember("I'm vegetarian.")
    meat = memory.remember_outcome(Statement("I started eating meat again."))
    assert meat.outcome == "replaced"
    memory.remember("My car is a Honda Civic.")
    memory.remember("I traded in my Civic for a Tesla.")
    memory.remember("I'm single.")
    memory.remember("We got married last weekend.")
    memory.remember("Ian isn't my coach anymore, my coach is Rhona.")
    confirmed = memory.remember_outcome(Statement("Rhona is my coach."))
    assert confirmed.outcome == "confirmed"
    kept = statuses(memory)
    assert kept["My manager is Sarah."] == "superseded"
    assert kept["My new manager is Tom."] == "active"
    assert kept["My manager is on holiday this week."] == "active"
    assert kept["I'm vegetarian."] == "superseded"
    assert kept["My car is a Honda Civic."] == "superseded"
    assert kept["I traded in my Civic for a Tesla."] == "active"
    assert kept["I'm single."] == "superseded"
    assert kept["Ian isn't my coach anymore, my coach is Rhona."] == "active"


def test_still_at_a_place_confirms_the_place_held_and_names_no_other(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    bosch = memory.remember_outcome(Statement("I work at Bosch."))
    still = memory.remember_outcome(Statement("I'm still at Bosch."))
    assert (still.outcome, still.fact.id) == ("confirmed", bosch.fact.id)
    airport = memory.remember_outcome(Statement("I'm still at Heathrow."))  # today's place
    assert airport.outcome == "new" and airport.replaced == ()
    assert statuses(memory)["I work at Bosch."] == "active"
    theirs = memory.scoped(replace(memory.viewer, user_id="someone"))
    other = theirs.remember_outcome(Statement("I'm still at Bosch."))  # not their place
    assert other.outcome == "new"


def test_a_relatives_ending_ends_their_holding_and_never_the_users(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    mine = memory.remember_outcome(Statement("I have a car."))
    memory.remember("My sister has a car.")
    sold = memory.remember_outcome(Statement("My sister sold her car."))
    assert [f.value for f in sold.replaced] == ["My sister has a car."]
    memory.remember("My uncle owns a boat.")
    # embeds 0.9 alike the holding: never taken for it said again
    boat = memory.remember_outcome(Statement("My uncle sold his boat last summer."))
    assert boat.outcome == "replaced"
    memory.remember("My brother plays rugby.")
    memory.remember("My brother gave up rugby.")
    kept = statuses(memory)
    assert kept[mine.fact.value] == "active"
    assert kept["My sister has a car."] == "superseded"
    assert kept["My uncle owns a boat."] == "superseded"
    assert kept["My brother plays rugby."] == "superseded"


def test_the_one_slot_a_chatty_message_names_replaces_its_value(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("My manager is Dana Whitfield.")
    memory.remember("I'm a sous chef.")
    memory.remember("Dana retired, so I report to Femi Adeyemi now.")
    memory.remember("Got promoted to head chef in June, still at the same place.")
    # two clauses naming two slots: neither is taken
    memory.remember("I'm a line cook, my manager is Olu Bello.")
    assert statuses(memory) == {
        "My manager is Dana Whitfield.": "superseded",
        "I'm a sous chef.": "superseded",
        "Dana retired, so I report to Femi Adeyemi now.": "active",
        "Got promoted to head chef in June, still at the same place.": "active",
        "I'm a line cook, my manager is Olu Bello.": "active",
    }


def test_a_promotion_to_a_title_of_any_words_replaces_the_job(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("I work as a teacher at Hillside.")
    memory.remember("I was promoted to deputy head last term.")
    memory.remember("My sister got promoted to charge nurse.")  # hers, not the user's job
    assert statuses(memory) == {
        "I work as a teacher at Hillside.": "superseded",
        "I was promoted to deputy head last term.": "active",
        "My sister got promoted to charge nurse.": "active",
    }


def test_an_ending_said_in_chat_ends_what_the_user_held(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("I ride a Vespa to the office.")
    memory.remember("I play in a pub quiz team.")
    memory.remember("Sold the Vespa in March, I cycle in now.")
    memory.remember("My brother left his quiz team, too many late nights.")
    assert statuses(memory) == {
        "I ride a Vespa to the office.": "superseded",
        "I play in a pub quiz team.": "active",
        "Sold the Vespa in March, I cycle in now.": "active",
        "My brother left his quiz team, too many late nights.": "active",
    }


def test_the_other_half_of_the_day_is_a_new_value_never_a_repeat(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    morning = memory.remember_outcome(Statement("I take my inhaler at 7am"))
    evening = memory.remember_outcome(Statement("I take my inhaler at 7pm"))
    assert evening.outcome == "new" and evening.fact.id != morning.fact.id
    fixed = memory.remember_outcome(Statement("Actually, my train is at 6pm"))
    assert fixed.outcome == "new"
    corrected = memory.remember_outcome(Statement("Actually, my train is at 6am"))
    assert [f.id for f in corrected.replaced] == [fixed.fact.id]
    assert statuses(memory) == {
        "I take my inhaler at 7am": "active",
        "I take my inhaler at 7pm": "active",
        "Actually, my train is at 6pm": "superseded",
        "Actually, my train is at 6am": "active",
    }


def test_a_job_a_partner_and_a_pet_are_ended_as_people_say_it(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    memory.remember("I work as a welder at Harland's")
    memory.remember("My girlfriend is Noor")
    memory.remember("My brother is dating Priya")
    memory.remember("We have a rabbit called Clover")
    memory.remember("I left Harland's and started at a boatyard")
    memory.remember("Priya and I broke up")  # the brother's girlfriend: nothing of ours ends
    memory.remember("Noor and I broke up")
    memory.remember("Clover passed away on Sunday")
    believed = statuses(memory)
    assert {v for v, s in believed.items() if s == "superseded"} == {
        "I work as a welder at Harland's",
        "My girlfriend is Noor",
        "We have a rabbit called Clover",
    }
    assert believed["My brother is dating Priya"] == "active"
