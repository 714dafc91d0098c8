"""A statement remembered without a key names its own slot when it plainly states an
attribute, and only then: people and things are described, not slotted.

The phrasings are everyday English written for this test (not taken from any dev set).
"""

from __future__ import annotations

import pytest

from shiyi.memory.lifecycle.slot_reading import StatedSlot
from shiyi.memory.lifecycle.stated_slots import (
    restates,
    stated_slot,
    states_another_value,
)

SLOTTED = {
    # a possessed attribute
    "My favourite colour is blue": StatedSlot("favourite colour"),
    "Actually, my favorite color is green.": StatedSlot("favorite color"),
    "Please remember that my go-to editor is Helix": StatedSlot("go to editor"),
    "Our budget is 4,000 euros": StatedSlot("budget"),
    "my phone number is 555 0199": StatedSlot("phone number"),
    "My project deadline is now Friday": StatedSlot("project deadline"),
    "My name is Lena": StatedSlot("name"),
    "Just so you know, my usual coffee order is a flat white": StatedSlot("usual coffee order"),
    "Tom's birthday is on March 3": StatedSlot("birthday", ("Tom",)),
    "My sister's address is 5 Elm Road": StatedSlot("address", ("sister",)),
    "My parents' home city is Leeds": StatedSlot("home city", ("parents",)),
    "Ana's mum's birthday is in June": StatedSlot("birthday", ("Ana's mum",)),
    # a subject and a verb
    "I live in Berlin": StatedSlot("lives in"),
    "I moved to Munich last month": StatedSlot("lives in"),
    "I've relocated to Oslo": StatedSlot("lives in"),
    "I'm based in Lyon these days": StatedSlot("lives in"),
    "I no longer work at Siemens": StatedSlot("works at"),
    "Remember that I'm working for a startup now": StatedSlot("works at"),
    "I work as a nurse": StatedSlot("job"),
    "I'm studying at Leiden University": StatedSlot("studies at"),
    "I'm married to Sam": StatedSlot("partner"),
    "I'm 34": StatedSlot("age"),
    "I am 34 years old.": StatedSlot("age"),
    "I turned 40": StatedSlot("age"),
    "My brother lives in Cork": StatedSlot("lives in", ("brother",)),
    "My younger sister works as a vet": StatedSlot("job", ("younger sister",)),
    "Priya moved to Toronto": StatedSlot("lives in", ("Priya",)),
    "Marco Rossi works for Fiat": StatedSlot("works at", ("Marco Rossi",)),
    # a name beside the relation is the subject: a second sister would share "sister"
    "My sister Ana lives in Porto": StatedSlot("lives in", ("Ana",)),
    "My wife, Maria, works at the town hall": StatedSlot("works at", ("Maria",)),
    "Jonas, my flatmate, moved to Graz": StatedSlot("lives in", ("Jonas",)),
    "my best friend Sam works as a pilot": StatedSlot("job", ("Sam",)),
    "My brother Tom's birthday is in May": StatedSlot("birthday", ("Tom",)),
    "My dog Biscuit is 5": StatedSlot("age", ("Biscuit",)),
    "My cat is 3 years old": StatedSlot("age", ("cat",)),
    # ways of saying where one works now
    "I work remotely for a bank in Zurich": StatedSlot("works at"),
    "I started a new job at a bakery": StatedSlot("works at"),
    "I've got a new job with the council": StatedSlot("works at"),
    "I took a position at the museum": StatedSlot("works at"),
    "I quit my job at the bank": StatedSlot("works at"),
    "Call me Jo": StatedSlot("name"),
    "Yes, I live in Berlin.": StatedSlot("lives in"),
    # an age or a name said as it changed, and a time lead before the statement
    "I am 35 now": StatedSlot("age"),
    "I turned 31 today": StatedSlot("age"),
    "My cat is called Luna now": StatedSlot("name", ("cat",)),
    "I'm named Chris": StatedSlot("name"),
    "These days my favourite food is ramen": StatedSlot("favourite food"),
    "Nowadays I live in Graz": StatedSlot("lives in"),
    # a person, a pet or an owned thing counted by an article
    "I have a dog": StatedSlot("number of dog"),
    "I have a sister": StatedSlot("number of sister"),
    "I have no car now": StatedSlot("number of car"),
    "I don't have a dog anymore": StatedSlot("number of dog"),
    "My brother no longer owns a car": StatedSlot("number of car", ("brother",)),
    # a change verb instead of "is", the value first, a closed set, "I'm" left unsaid
    "My rent went up to $1,350 a month": StatedSlot("rent"),
    "My email address changed to jo@new.example": StatedSlot("email address"),
    "Our wedding date moved to September 6": StatedSlot("wedding date"),
    "Purple is still my favourite colour": StatedSlot("favourite colour"),
    "I'm a vegetarian": StatedSlot("diet"),
    "I'm vegan now": StatedSlot("diet"),
    "I'm divorced": StatedSlot("marital status"),
    "I am forty years old": StatedSlot("age"),
    "My partner is called Alex": StatedSlot("name", ("partner",)),
    "Still living in Seattle": StatedSlot("lives in"),
    "My favourite film these days is Arrival": StatedSlot("favourite film"),
    "My birthday's in July": StatedSlot("birthday"),
    "My mortgage rate dropped to 3.9%": StatedSlot("mortgage rate"),  # a rate, a pace ...
    "My running pace is 5:30 per km now": StatedSlot("running pace"),
    "My blood pressure is 125/80": StatedSlot("blood pressure"),
    "I have 3 children": StatedSlot("number of children"),  # kids and children: one count
    "我最喜欢的水果现在是芒果": StatedSlot("最喜欢的水果"),
    # how many of a thing: a slot per thing
    "I have two cats": StatedSlot("number of cats"),
    "I've got 3 kids now": StatedSlot("number of children"),
    "My sister owns 4 guitars": StatedSlot("number of guitars", ("sister",)),
    # an occupation: the job slot, as "I work as a nurse" is
    "I'm a nurse": StatedSlot("job"),
    "I'm a product manager now": StatedSlot("job"),
    "I'm still a software engineer": StatedSlot("job"),
    "I am an electrician by trade": StatedSlot("job"),
    "I'm a headteacher at a primary school": StatedSlot("job"),
    "My sister is a doctor": StatedSlot("job", ("sister",)),
    "My sister Ana is a doctor": StatedSlot("job", ("Ana",)),
    # what unlocks the home, said of "the" home's; a couple
    "The wifi password is now maple77": StatedSlot("wifi password"),
    "The door code is still 9090": StatedSlot("door code"),
    "Jamie and I are married": StatedSlot("partner"),
    # a change said verb first: "my email is ..."
    "I changed my email to ana@new.com": StatedSlot("email"),
    "I've just moved my dentist appointment to Friday": StatedSlot("dentist appointment"),
    "Kim and I got engaged": StatedSlot("partner"),
    "I'm going out with Leo": StatedSlot("partner"),
    # what one thinks of a thing: a slot per thing
    "I like coffee": StatedSlot("opinion of coffee"),
    "I don't like coffee anymore": StatedSlot("opinion of coffee"),
    "Priya really hates jazz": StatedSlot("opinion of jazz", ("Priya",)),
    "I love to swim": StatedSlot("opinion of swim"),
    # Chinese: the same two shapes
    "我住在柏林": StatedSlot("lives in"),
    "其实，我最近搬到了慕尼黑。": StatedSlot("lives in"),
    "我不再住在柏林": StatedSlot("lives in"),
    "我在一家医院上班": StatedSlot("works at"),
    "我今年34岁": StatedSlot("age"),
    "我叫李娜": StatedSlot("name"),
    "我最喜欢的颜色是绿色": StatedSlot("最喜欢的颜色"),
    "记住，我的生日是五月三日": StatedSlot("生日"),
    "我的手机号是 138 0000 0000": StatedSlot("手机号"),
    "我妹妹住在波尔图": StatedSlot("lives in", ("妹妹",)),
    "我的哥哥搬到了里斯本": StatedSlot("lives in", ("哥哥",)),
    # "we" includes the user
    "We live in Paris": StatedSlot("lives in"),
    "我们住在巴黎": StatedSlot("lives in"),
    "我们搬到了上海": StatedSlot("lives in"),
    "We relocated to Bristol in the spring": StatedSlot("lives in"),
    "We got divorced last year": StatedSlot("marital status"),
    # whom or where one has one of, when the value is a name
    "My manager is Sarah": StatedSlot("manager"),
    "My new manager is Tom": StatedSlot("manager"),
    "My boss is now Priya": StatedSlot("boss"),
    "Dr Patel is my dentist": StatedSlot("dentist"),
    "My gym is The Gym Group": StatedSlot("gym"),
    "I switched my password manager to Bitwarden": StatedSlot("password manager"),
    # roundabout forms read plainly (plain_forms)
    "I switched gyms to The Gym Group": StatedSlot("gym"),
    "I don't eat meat anymore": StatedSlot("diet"),
    "I started eating meat again": StatedSlot("diet"),
    "I went vegan in 2019": StatedSlot("diet"),
    "I got married in June": StatedSlot("marital status"),
    "I got engaged to Sam": StatedSlot("partner"),
    # a clause saying what changed, then the value plainly
    "Ian isn't my coach anymore, my coach is Rhona": StatedSlot("coach"),
    "I changed gyms, my gym is now PureGym": StatedSlot("gym"),
}

NOT_SLOTTED = [
    "My sister is Ana",  # a person named: no attribute with one value
    "I'm a big fan of jazz",  # what one is, not what one does for a living
    "I'm a mother of two",
    "I'm a runner",
    "I'm a good cook",  # how well one cooks, not a living
    "I'm still at Heathrow",  # only confirms a held place (see explicit)
    "I'm a really terrible driver",
    "I'm a morning person",
    "The meeting room is on the left",  # "the" owns only what unlocks the home
    "Sam and I are going to Spain",
    "I'm going out with friends tonight",
    "I changed my mind about the trip",
    "I switched my bike to a red one",  # a thing, not an attribute
    "My boss is really strict",
    "My manager is on holiday",  # the person described, not named
    "My gym is closed on Sundays",
    "My new bike is fast",
    "We're based in London",  # a company's "we"
    "We work with schools",
    "We're 5",  # how many, not an age
    "We're called Smith",
    "I'm not sure, but my gym is closed",
    "I switched jobs to become a teacher",  # no name switched to
    "My car is red",  # a thing: "my car is in the shop" must not replace it
    "My car is in the shop",
    "My flight is at 6 tomorrow",
    "He works at the bank",
    "They moved to Spain",
    "Where do I live?",
    "I live in Berlin. My dog is called Rex.",  # two statements
    "I think I live in a simulation",
    "I don't eat meat on Fridays",  # more than a diet
    "This is my favourite colour",  # no value named
    "Ana is my sister",  # a person, not an attribute
    "The meeting is at 3",
    "I like jazz and hiking",
    "I am 6 feet tall",
    "I visited my sister Ana in Porto",  # the user visited; nobody moved
    "Call me tomorrow",
    "I got a new bike at the market",
    "I have a question",  # no count
    "I have a cold",
    "I have no idea",
    "I don't have a clue",
    "I have a meeting tomorrow",
    "My cat is named after my grandmother",  # no name given
    "I have two cats and a dog",  # several counts
    "I have lots of plants",
    "I like tea and coffee",  # several things
    "I like it",
    "I'd like a coffee",  # a wish, not an opinion
    "I didn't like the film",  # the past
    "我的妹妹是医生",  # a person described
    "我的车是红色的",  # a thing
    "我们公司在巴黎",  # our company, not the user
    "你住在哪里？",
    "我住在柏林。我的狗叫旺财。",
    "我喜欢爬山",
    "",
]


@pytest.mark.parametrize(("text", "slot"), SLOTTED.items())
def test_a_plain_statement_names_its_slot(text: str, slot: StatedSlot) -> None:
    assert stated_slot(text) == slot


@pytest.mark.parametrize("text", NOT_SLOTTED)
def test_people_things_and_anything_else_name_no_slot(text: str) -> None:
    assert stated_slot(text) is None


RESTATED = [  # (later, earlier): the same value said again, in other words
    ("I still live in Berlin", "I live in Berlin"),
    ("I live in Berlin now", "I live in Berlin"),
    ("I've moved to Berlin", "I'm based in Berlin"),
    ("I'm 34", "I am 34 years old"),
    ("My favourite colour is still green", "My favorite color is green"),
    ("My sister still lives in Porto", "My sister lives in Porto"),
    ("I work at Siemens", "I started a new job at Siemens"),
    ("我还住在柏林", "我住在柏林"),
    ("I have 2 cats", "I have two cats"),
    ("I don't eat meat", "I'm vegetarian"),
    ("I stopped eating meat years ago", "I'm a vegetarian"),
    ("I'm married", "I got married in June"),
    ("Tom is my manager", "My manager is Tom"),
    ("My bank is still Starling", "I switched banks to Starling"),
    ("I'm still at Bosch", "I work at Bosch"),
    ("I'm still with Deloitte", "I work for Deloitte"),
]
CHANGED = [  # a new value, or the old one denied
    ("I live in Munich", "I live in Berlin"),
    ("I live in New York", "I live in New Jersey"),
    ("I no longer live in Berlin", "I live in Berlin"),
    ("I don't work at Siemens anymore", "I work at Siemens"),
    ("I quit my job at Siemens", "I work at Siemens"),
    ("I'm 35", "I'm 34"),
    ("我不再住在柏林", "我住在柏林"),
    ("I have three cats now", "I have two cats"),
    ("I don't like coffee anymore", "I like coffee"),
    ("I live in Berlin", "I think I live in Berlin"),  # the earlier was no statement
    ("I started eating meat again", "I'm vegetarian"),
    ("I've gone vegan", "I'm pescatarian"),
    ("I got married last weekend", "I'm single"),
    ("My new manager is Tom", "My manager is Sarah"),
    ("I'm still at Bosch", "I work at Siemens"),
    ("I'm still at Bosch", "I no longer work at Bosch"),
]


@pytest.mark.parametrize(("later", "earlier"), RESTATED)
def test_the_same_value_said_again_in_other_words_restates_it(later: str, earlier: str) -> None:
    assert restates(later, earlier)


@pytest.mark.parametrize(("later", "earlier"), CHANGED)
def test_a_new_or_denied_value_does_not(later: str, earlier: str) -> None:
    assert not restates(later, earlier)


def test_two_values_stated_of_one_slot_are_never_one() -> None:
    assert states_another_value("我最喜欢的水果现在是芒果", "我最喜欢的水果是苹果")
    assert states_another_value("I live in Munich", "I live in Berlin")
    assert not states_another_value("I still live in Berlin", "I live in Berlin")
    assert not states_another_value("I live in Munich", "My favourite city is Berlin")
    assert not states_another_value("Munich", "Berlin")  # no statement: embeddings decide
