"""Which turns say when something happened: phrasings written from everyday speech."""

from __future__ import annotations

import pytest

from shiyi.memory.text.time_words import MAX_CHARS, says_when


@pytest.mark.parametrize(
    "text",
    [
        "I started a pottery class last week!",
        "I started the job at the beginning of the year.",
        "By the end of last month the roof was done.",
        "In the middle of the summer we left for Oslo.",
        "We moved into the new flat two months ago.",
        "On Saturday I finally ran my first 10k.",
        "Back in 2019 I was still living in Oslo.",
        "Got my results on March 3rd, all good.",
        "I signed up on 14 June.",
        "Yesterday was wild, the whole office lost power.",
        "We went camping over the weekend with the kids.",
        "A few days ago I bumped into my old teacher.",
        "Two weeks later she called me back.",
        "The other day I met him at the market.",
        "This morning I adopted a rescue dog.",
        "Since April I've been going to a choir.",
        "我昨天去了博物馆。",
        "I'm starting the new job next Monday.",
        "Last Fri we finally signed the lease.",  # the short forms people type
        "Went to the dentist on Tues, no cavities.",
        "I've played the cello for six years.",  # how long: "how long ..." asks this
        "The bakery opens in two weeks.",
        "Ten years now, and I still love this city.",
        "Three years already since we got Max!",
        "I just got accepted into the nursing program!",  # "just" + done: news of now
        "We've just moved to Leeds.",
        "So much has happened since we last spoke.",
        "We spent Christmas with my parents in Leeds.",  # a holiday is a date
        "For Halloween the kids dressed up as pirates.",
        "A fortnight in Crete did me good.",
        # how a life is told: an age, a stage, an occasion
        "I started painting when I was ten.",
        "When we were kids we spent summers at the lake.",
        "As a teenager I worked at a bakery.",
        "Growing up, we never had a dog.",
        "I picked up the guitar at age 12.",
        "I learned to swim at the age of six.",
        "Back in college I played in a band.",
        "I've been vegetarian since high school.",
        "Ever since I was little I wanted a horse.",
        "After university I moved to Glasgow.",
        "On my birthday we had a picnic.",
        "For our anniversary we went to Paris.",
        "At my 18th birthday we danced all night.",
        "On New Year's Eve we watched the fireworks.",
        "In the 90s my dad ran a shop.",
        "Back in the day we rode bikes everywhere.",
        # spans with words between the count and the unit
        "We're moving in a few weeks.",
        "I've been running for a couple of years now.",
        "A couple of weeks later the offer came.",
        "Over the past few months I've been learning Spanish.",
        "In the last two weeks I read three books.",
        "For several years I lived in Berlin.",
        "I've been with the company for over a decade.",
        "It took me two years to finish the quilt.",
        "It's been a month since I adopted Luna.",
        "Wow, it's been three years.",
        "Three weeks in, I'm loving the new job.",
        # a month, a season, a part of a day, a day of the month
        "Last March I finally visited Lisbon.",
        "In the spring we planted tomatoes.",
        "During the summer I volunteered at a camp.",
        "Friday night we went dancing.",
        "Saturday morning I ran a half marathon.",
        "At the weekend we went to the coast.",  # British
        "On the weekend I built a birdhouse.",
        "The night before the exam I couldn't sleep.",
        "The morning after the party I slept in.",
        "I got the keys on the 5th.",
        "I met her a while back at a conference.",
        "I spent the weekend hiking with my cousins.",
        "Worked all weekend on the deck.",
        # short forms people type in chats
        "had the best dinner yday",
        "party at my place tonite!!",
        "ran for 2 hrs this morning",
        "we've been dating for 3 yrs",
        "went out fri nite w the girls",
        "on my bday we went bowling",
        "spent the wknd at the lake",
        "over the hols we went skiing",
    ],
)
def test_a_turn_placing_an_event_in_time(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text",
    [
        "I love pottery, it calms me down.",
        "At the end of the day, it is your call.",  # a saying, not a time
        "I skipped to the end of the book.",
        "That sounds amazing, tell me more!",
        "My sister may come along too.",  # "may" the verb, not the month
        "The march through the city was long.",
        "I have 2 days off and nothing planned.",  # a span, not a time
        "There are 1000 ways to cook rice.",
        "Saturday markets are the best.",  # a habit, not a moment
        "I sat on the bench in the sun.",  # "sat" and "sun" are not days here
        "It's just a phase, she says.",  # "just" as "only"
        "I just love that song.",
        "Since you asked, the blue one.",
        "It took ages for me to learn this.",
        "This may take a while.",  # "this may", not May
        "I love summer, it's my favourite season.",
        "When I was tired I listened to music.",  # a mood, not an age
        "As a rule I don't drink coffee.",
        "Back in Paris, the food is better.",  # a place
        "I'm growing tomatoes on the balcony.",
        "I love the fall colors here.",
        "That's a lot of years of work.",
        "I have two kids in school.",
        "My birthday cake recipe is the best.",
        "I'm usually free in the afternoon.",
        "The weekend is my favourite part of the week.",
        "sent u a pic of my bf",
        "A weekend trip sounds fun.",
    ],
)
def test_a_turn_that_does_not(text: str) -> None:
    assert not says_when(text)


def test_only_the_opening_of_a_long_text_is_read() -> None:
    assert says_when("I started yesterday. " + "x " * MAX_CHARS)
    assert not says_when("x " * MAX_CHARS + "I started yesterday.")


# The same in Chinese, from everyday speech.
@pytest.mark.parametrize(
    "text",
    [
        "上周六我终于跑完了第一个十公里。",
        "我们两个月前搬进了新公寓。",
        "2019年的时候我还住在奥斯陆。",
        "我五月份报了个陶艺班。",
        "5月7号拿到了结果，一切正常。",
        "我学大提琴已经六年了。",  # how long
        "我刚搬到成都。",  # just moved: news of now
        "下个月我要去上海出差。",
        "这周末我们去露营了。",
        "这个月我开始学游泳。",
        "礼拜天我去教堂了。",
        "周三去看了牙医，没有蛀牙。",
        "十多天前碰到了以前的老师。",
    ],
)
def test_a_chinese_turn_placing_an_event_in_time(text: str) -> None:
    assert says_when(text)


@pytest.mark.parametrize(
    "text",
    [
        "我喜欢陶艺，它让我平静。",
        "我有两天假，还没计划。",  # a span, not a time
        "五月天的歌真好听。",  # a band, not May
        "每周一开例会是我们的习惯。",  # a habit
        "这一周过得很充实。",
        "刚好我也想去。",  # 刚好: "as it happens"
        "他住在3号楼。",
        "这周围的餐厅都不错。",  # 周围: the surroundings
    ],
)
def test_a_chinese_turn_that_does_not(text: str) -> None:
    assert not says_when(text)
