"""Plain statements a user might make one after another, and what memory should then believe.

Written from everyday usage for ``statements_bench.py``, before the bench was first run and
apart from the unit tests' phrasings (not taken from any dev set), so that a rule fitted to
one of them shows up as a miss on the others.  Each probe is an earlier and a later
statement and what should be active after both:

* ``replace``: the later says the value changed; only it is active;
* ``both``: two different facts; both stay active;
* ``confirm``: the same fact again; exactly one fact is active.
"""

# ruff: noqa: E501  (chat messages are long: each pair stays on one line)
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Expect = Literal["replace", "both", "confirm"]


@dataclass(frozen=True, slots=True)
class Probe:
    earlier: str
    later: str
    expect: Expect
    topic: str


def _probes(expect: Expect, topic: str, pairs: list[tuple[str, str]]) -> list[Probe]:
    return [Probe(a, b, expect, topic) for a, b in pairs]


PROBES: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My favourite band is Radiohead.", "My favourite band is now Arctic Monkeys."),
        ("I work at Deloitte.", "I left Deloitte and joined KPMG."),
        ("I'm 28.", "I just turned 29."),
        ("My rent is $1,200 a month.", "My rent went up to $1,350 a month."),
        ("I live in Leeds.", "I've moved to Manchester."),
        ("My daughter is 7.", "My daughter is 8 now."),
        ("My shift starts at 8am.", "My shift starts at 9am now."),
        ("I drink three coffees a day.", "I drink one coffee a day now."),
        ("My laptop is a ThinkPad.", "My laptop is a MacBook now."),
        ("My email address is jo@old.example.", "My email address changed to jo@new.example."),
        ("I weigh 80 kg.", "I weigh 76 kg now."),
        ("My son plays football on Wednesdays.", "My son plays football on Thursdays now."),
        ("My goal is to read 20 books this year.", "My goal is to read 30 books this year."),
        ("My password manager is LastPass.", "I switched my password manager to Bitwarden."),
        ("I go to yoga on Tuesday evenings.", "I go to yoga on Thursday evenings now."),
        ("My dog is 2 years old.", "My dog turned 3."),
        ("My username is skyfox.", "My username is now skyfox92."),
        ("My bedtime is 11pm.", "My bedtime is 10:30pm now."),
        ("I work from home on Fridays.", "I work from home on Mondays now."),
        ("My team lead is Sara.", "My team lead is Omar now."),
        ("Our wedding date is June 14.", "Our wedding date moved to September 6."),
        ("I have two kids.", "I have three kids now."),
        ("I'm a vegetarian.", "I'm vegan now."),
        ("My monthly grocery budget is 400 euros.", "My monthly grocery budget is 450 euros now."),
        ("我的手机号是13800000000。", "我的手机号换成了13900000000。"),
        ("我在北京工作。", "我现在在上海工作。"),
        ("我今年30岁。", "我今年31岁了。"),
    ]),
    *_probes("replace", "no longer so", [
        ("I smoke.", "I quit smoking last year."),
        ("I have a car.", "I sold my car."),
        ("I'm married.", "I'm divorced now."),
        ("I work at Google.", "I don't work at Google anymore."),
        ("I have a cat.", "I don't have a cat anymore."),
    ]),
    *_probes("both", "two facts", [
        ("I'm allergic to penicillin.", "I'm allergic to cats too."),
        ("I speak French.", "I speak German as well."),
        ("My sister lives in Rome.", "My brother lives in Milan."),
        ("I have a dentist appointment on Monday.", "I have a haircut on Tuesday."),
        ("I like jazz.", "I like hip hop."),
        ("I visited Paris in April.", "I visited Rome in May."),
        ("My sister Ana lives in Porto.", "My sister Eva lives in Braga."),
        ("I play the piano.", "I play the violin too."),
        ("I had pasta for dinner yesterday.", "I had sushi for dinner today."),
        ("My best friend is Kai.", "My neighbour is Lena."),
        ("I own a bike.", "I own a car."),
        ("I run on Mondays.", "I swim on Tuesdays."),
        ("My favourite fruit is mango.", "My favourite vegetable is spinach."),
        ("Ana works at Siemens.", "I work at Bosch."),
        ("I went to Lisbon last year.", "I'm going to Lisbon next year."),
        ("I have a meeting with Tom on Monday.", "I have a meeting with Tom on Friday."),
        ("My mum's birthday is in May.", "My dad's birthday is in October."),
        ("我喜欢喝茶。", "我也喜欢喝咖啡。"),
    ]),
    *_probes("confirm", "said again", [
        ("I live in Seattle.", "Still living in Seattle."),
        ("My favourite colour is purple.", "Purple is still my favourite colour."),
        ("I work at Shopify.", "I'm still at Shopify."),
        ("I'm 40.", "I am forty years old."),
        ("I have two cats.", "I've got 2 cats."),
        ("My birthday is on March 3.", "My birthday is March 3rd."),
        ("I'm allergic to peanuts.", "I have a peanut allergy."),
        ("I prefer tea over coffee.", "I prefer tea to coffee."),
        ("My partner is called Alex.", "My partner's name is Alex."),
        ("I go climbing on Saturdays.", "I still go climbing every Saturday."),
        ("我住在成都。", "我还住在成都。"),
    ]),
]  # fmt: skip


# Written at the same time as PROBES, and not run until the rules the misses on PROBES led to
# were done (2026-12-07): what those rules do on statements they were not written for.
HELD_BACK: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My favourite film is Alien.", "My favourite film these days is Arrival."),
        ("I live in Denver.", "I live in Boulder now."),
        ("I work as a teacher.", "I work as a translator now."),
        ("My gym is PureGym.", "I changed gyms, my gym is now The Gym Group."),
        ("My car is a 2015 Golf.", "My car is a 2021 Corolla now."),
        ("I sleep about 6 hours a night.", "I sleep about 8 hours a night now."),
        ("My son is 12.", "My son turned 13 last week."),
        ("My phone is an iPhone 12.", "My phone is a Pixel 8 now."),
        ("I'm 65 kg.", "I'm 61 kg now."),
        ("My salary is 50k.", "My salary is 58k after the raise."),
        ("Our flight leaves at 7:40.", "Our flight leaves at 9:15 now."),
        ("I teach on Tuesdays and Thursdays.", "I teach on Mondays and Wednesdays now."),
        ("My daughter's school is Hill Primary.", "My daughter's school is Oak Academy now."),
        ("I usually cycle to work.", "I usually take the tram to work now."),
        ("My timezone is CET.", "My timezone is EST now."),
        ("Our team has 5 people.", "Our team has 8 people now."),
        ("I study in the evenings.", "I study in the mornings now."),
        ("我最喜欢的水果是苹果。", "我最喜欢的水果现在是芒果。"),
        ("我住在杭州。", "我搬到了深圳。"),
    ]),
    *_probes("replace", "no longer so", [
        ("I drink alcohol.", "I stopped drinking alcohol."),
        ("I'm engaged to Lee.", "Lee and I broke up."),
        ("I have a landline.", "I don't have a landline anymore."),
        ("I play in a band.", "I left the band."),
    ]),
    *_probes("both", "two facts", [
        ("I'm allergic to dust.", "I'm allergic to pollen as well."),
        ("My brother lives in Oslo.", "My cousin lives in Bergen."),
        ("I have a cat.", "I have a dog."),
        ("I like running.", "I like swimming."),
        ("I met Jo on Monday.", "I met Sam on Thursday."),
        ("I'm reading Dune.", "I'm also reading Emma."),
        ("My husband works at a bank.", "My wife works at a school."),
        ("Lunch is at noon.", "Dinner is at 7."),
        ("I grew up in Lyon.", "I live in Paris."),
        ("I bought a new phone in March.", "I bought a new laptop in June."),
        ("我会说英语。", "我也会说日语。"),
    ]),
    *_probes("confirm", "said again", [
        ("I live in Austin.", "I'm still based in Austin."),
        ("My favourite drink is lemonade.", "Lemonade is my favourite drink."),
        ("I have three kids.", "I have 3 children."),
        ("My birthday is in July.", "My birthday's in July."),
        ("I'm a nurse.", "I work as a nurse."),
        ("I go to the gym on Mondays.", "Every Monday I go to the gym."),
        ("My dog is called Pepper.", "My dog's name is Pepper."),
        ("我是老师。", "我还是老师。"),
    ]),
]  # fmt: skip


# Written after HELD_BACK was first run (2026-12-07) and before the rules its misses led to:
# what those rules do on statements they were not written for.
HELD_BACK_2: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My favourite author is Le Guin.", "My favourite author right now is Tolkien."),
        ("I live in Glasgow.", "I'm living in Edinburgh these days."),
        ("My running pace is 6 minutes per km.", "My running pace is 5:30 per km now."),
        ("My home address is 12 Park Lane.", "My home address is 4 Mill Road now."),
        ("My daughter is in year 3.", "My daughter is in year 4 now."),
        ("I get paid on the 15th.", "I get paid on the 1st now."),
        ("My mortgage rate is 4.5%.", "My mortgage rate dropped to 3.9%."),
        ("My boss is Karen.", "My boss is now Priya."),
        ("My blood pressure is 140/90.", "My blood pressure is 125/80 now."),
        ("I'm 1.70 m tall.", "I'm 1.72 m tall now."),
        ("My main language at work is Java.", "My main language at work is Kotlin now."),
        ("My wifi password is tulip42.", "The wifi password is now maple77."),
        ("I commute by car.", "I commute by bike now."),
        ("My cat weighs 4 kg.", "My cat weighs 5 kg now."),
        ("My parents live in Kent.", "My parents moved to Devon."),
        ("我每天早上六点起床。", "我现在每天早上七点起床。"),
    ]),
    *_probes("replace", "no longer so", [
        ("I eat meat.", "I don't eat meat anymore."),
        ("I have a gym membership.", "I cancelled my gym membership."),
        ("I play golf.", "I gave up golf."),
        ("I wear glasses.", "I don't wear glasses anymore since the surgery."),
    ]),
    *_probes("both", "two facts", [
        ("I'm allergic to latex.", "I'm allergic to wasps now."),
        ("My brother is a chef.", "My brother is a dad now."),
        ("I ran 5 km on Monday.", "I ran 8 km on Wednesday."),
        ("I have a son.", "I have a daughter."),
        ("I collect stamps.", "I collect coins."),
        ("My aunt lives in Cork.", "My uncle lives in Cork."),
        ("Zoe is my neighbour.", "Ravi is my neighbour."),
        ("I paid 20 euros for lunch.", "I paid 35 euros for dinner."),
        ("I want to visit Japan.", "I want to visit Peru."),
        ("我有一个哥哥。", "我有一个妹妹。"),
    ]),
    *_probes("confirm", "said again", [
        ("I'm from Dublin.", "I'm originally from Dublin."),
        ("My favourite sport is tennis.", "Tennis is my favourite sport."),
        ("I have two brothers.", "I've got two brothers."),
        ("I work night shifts.", "I still work night shifts."),
        ("My son is 10.", "My son is ten years old."),
        ("I'm married to Jamie.", "Jamie and I are married."),
        ("I don't drink coffee.", "I still don't drink coffee."),
        ("我喜欢游泳。", "我一直都喜欢游泳。"),
    ]),
]  # fmt: skip


# Written 2026-12-07 (twenty-first sitting) before any rule for verbs that end a state
# ("sold", "gave up", "cancelled", "left", "broke up"): ENDINGS to write the rules on,
# ENDINGS_HELD_BACK written at the same time and run only once the rules were done.
ENDINGS: list[Probe] = [
    *_probes("replace", "no longer so", [
        ("I have a motorbike.", "I sold my motorbike."),
        ("I own a boat.", "I sold the boat last summer."),
        ("I play tennis on weekends.", "I gave up tennis."),
        ("I go to a pottery class on Thursdays.", "I quit my pottery class."),
        ("I have a Netflix subscription.", "I cancelled my Netflix subscription."),
        ("I work at Google.", "I quit Google last month."),
        ("I sing in a choir.", "I left the choir."),
        ("I'm dating Chris.", "Chris and I broke up."),
        ("I'm married to Dana.", "Dana and I got divorced."),
        ("I volunteer at the animal shelter.", "I stopped volunteering at the animal shelter."),
        ("I'm a member of the chess club.", "I left the chess club."),
        ("I have a landline.", "I got rid of my landline."),
    ]),
    *_probes("both", "two facts", [
        ("I work at Google.", "I left Google early today."),
        ("I have a dog.", "I sold my old dog crate."),
        ("I play golf.", "I left my golf clubs in the car."),
        ("I have a car.", "I sold my bike."),
        ("I'm in a book club.", "I quit my job."),
        ("I play the guitar.", "I gave my old guitar to my nephew."),
    ]),
    *_probes("confirm", "said again", [
        ("I sold my car.", "I don't have a car anymore."),
        ("I gave up smoking.", "I stopped smoking."),
        ("I left the choir.", "I'm no longer in the choir."),
    ]),
]  # fmt: skip

ENDINGS_HELD_BACK: list[Probe] = [
    *_probes("replace", "no longer so", [
        ("I have a PlayStation.", "I sold my PlayStation."),
        ("I do yoga on Sunday mornings.", "I gave up yoga."),
        ("I have a Spotify subscription.", "I cancelled Spotify."),
        ("I'm on the football team.", "I quit the football team."),
        ("I work for the council.", "I resigned from the council."),
        ("I'm seeing someone called Robin.", "Robin and I split up."),
        ("I take piano lessons.", "I stopped taking piano lessons."),
        ("I have a gym membership at Virgin Active.", "I cancelled my Virgin Active membership."),
        ("I belong to a running club.", "I dropped out of the running club."),
        ("I'm engaged to Sam.", "I broke off my engagement to Sam."),
        ("I rent a flat in Leith.", "I moved out of my flat in Leith."),
    ]),
    *_probes("both", "two facts", [
        ("I have a PlayStation.", "I sold my old Xbox games."),
        ("I work for the council.", "I left the office at six today."),
        ("I do yoga.", "I quit coffee."),
        ("I play in a band.", "I left my amp at the band's rehearsal space."),
        ("I have a cat.", "I lost my cat's collar."),
        ("I'm married to Alex.", "Alex and I went to Rome."),
    ]),
    *_probes("confirm", "said again", [
        ("I gave up meat.", "I don't eat meat anymore."),
        ("I cancelled my gym membership.", "I don't have a gym membership anymore."),
        ("I quit my job.", "I quit my job."),
    ]),
]  # fmt: skip

# Written after ENDINGS_HELD_BACK's two misses were fixed ("the running club" is a thing,
# not a doing; a thing's head comes before its preposition), before running it.
ENDINGS_HELD_BACK_2: list[Probe] = [
    *_probes("replace", "no longer so", [
        ("I have an Amazon Prime membership.", "I cancelled Amazon Prime."),
        ("I drive a Tesla.", "I sold my Tesla."),
        ("I'm on the school board.", "I stepped down from the school board."),
        ("I go to the gym every morning.", "I stopped going to the gym."),
        ("I take Spanish classes.", "I dropped my Spanish classes."),
        ("I work for Amazon.", "I handed in my notice at Amazon."),
        ("I'm in a relationship with Noor.", "Noor and I broke up."),
        ("I have a subscription to The Economist.", "I unsubscribed from The Economist."),
        ("I run a small bakery.", "I closed my bakery."),
        ("I smoke.", "I quit smoking last year."),
    ]),
    *_probes("both", "two facts", [
        ("I go to the gym every morning.", "I left the gym early today."),
        ("I work for Amazon.", "I sold my Amazon shares."),
        ("I have a bike.", "I gave up cycling to work in winter."),
        ("I'm in a relationship with Noor.", "Noor and I split the bill."),
        ("I have a Tesla.", "I sold my Tesla shares."),
    ]),
    *_probes("confirm", "said again", [
        ("I sold my Tesla.", "I no longer own a Tesla."),
        ("I quit smoking.", "I gave up smoking for good."),
        ("Noor and I broke up.", "I broke up with Noor."),
    ]),
]  # fmt: skip

# Written 2026-12-07 (twenty-first sitting) before any rule for "I'm a <job>": ROLES to
# write the rules on, ROLES_HELD_BACK written at the same time and run once they were done.
ROLES: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I'm a software engineer.", "I'm a product manager now."),
        ("I'm a teacher.", "I'm a headteacher now."),
        ("I'm a nurse.", "I work as a midwife now."),
        ("I work as a chef.", "I'm a restaurant manager now."),
        ("I'm an accountant.", "I'm a financial analyst these days."),
        ("I'm a student.", "I'm a junior developer now."),
    ]),
    *_probes("both", "two facts", [
        ("I'm a nurse.", "I'm a runner."),
        ("I'm a software engineer.", "I'm a big fan of jazz."),
        ("I'm a teacher.", "I'm a mother of two."),
        ("I'm a doctor.", "I'm a vegetarian."),
        ("My sister is a nurse.", "I'm a lawyer."),
        ("I'm a designer.", "My brother is a designer too."),
    ]),
    *_probes("confirm", "said again", [
        ("I'm a nurse.", "I work as a nurse."),
        ("I work as an electrician.", "I'm an electrician."),
        ("I'm a software engineer.", "I'm still a software engineer."),
        ("I'm a teacher.", "I am a teacher."),
    ]),
]  # fmt: skip

ROLES_HELD_BACK: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I'm a pharmacist.", "I'm a pharmacy manager now."),
        ("I'm a bartender.", "I'm a barista now."),
        ("I'm a data analyst.", "I'm a data scientist now."),
        ("I'm a paramedic.", "I'm a firefighter now."),
        ("I'm a freelance photographer.", "I'm a graphic designer now."),
    ]),
    *_probes("both", "two facts", [
        ("I'm a lawyer.", "I'm a keen cyclist."),
        ("I'm a plumber.", "I'm a dad."),
        ("I'm an architect.", "I'm a morning person."),
        ("I'm a dentist.", "My wife is a dentist too."),
        ("I'm a carpenter.", "I'm a big believer in routines."),
    ]),
    *_probes("confirm", "said again", [
        ("I'm a pharmacist.", "I work as a pharmacist."),
        ("I'm a civil engineer.", "I'm still a civil engineer."),
        ("I work as a journalist.", "I'm a journalist."),
    ]),
]  # fmt: skip

# Written 2026-12-07 (twenty-first sitting) before the rules for held-back-2's misses that
# were still open ("The wifi password is now ...", "by bike now", "Jamie and I are
# married"), which the rules were written on: how they do on other phrasings.
HELD_BACK_3: list[Probe] = [
    *_probes("replace", "value changed", [
        ("The door code is 4821.", "The door code is now 7733."),
        ("The garage code is 1234.", "The new garage code is 9090."),
        ("I take the bus to work.", "I take the train to work now."),
        ("I get to work by car.", "I get to work by bike these days."),
        ("My partner is Alex.", "Sam and I are together now."),
        ("I fly with Ryanair.", "I fly with easyJet now."),
    ]),
    *_probes("both", "two facts", [
        ("The door code is 4821.", "The gate code is 1111."),
        ("I take the bus to work.", "I take the train to the airport."),
        ("Sam and I are married.", "Sam and I are going to Spain."),
        ("The wifi password is swordfish.", "The wifi name is HomeNet."),
    ]),
    *_probes("confirm", "said again", [
        ("Sam and I got married.", "I'm married to Sam."),
        ("I'm engaged to Kim.", "Kim and I are engaged."),
        ("The door code is 4821.", "The door code is still 4821."),
        ("I cycle to work.", "I still cycle to work."),
    ]),
]  # fmt: skip

# Written at the end of the twenty-first sitting, after every rule above, and run once: the
# sitting's honest figure for endings, occupations, couples, transport and "the" codes.
HELD_BACK_4: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I have a scooter.", "I sold my scooter last week."),
        ("I play water polo.", "I gave up water polo after my injury."),
        ("I have a Hello Fresh subscription.", "I cancelled Hello Fresh."),
        ("I'm a member of the allotment society.", "I left the allotment society."),
        ("I'm a waiter.", "I'm a sous chef now."),
        ("I work as a receptionist.", "I'm an office manager these days."),
        ("I'm going out with Leo.", "Leo and I split up last month."),
        ("I drive to the office.", "I take the tube to the office now."),
        ("The alarm code is 2580.", "The alarm code is now 1470."),
        ("I walk the dog at 7.", "I walk the dog at 8 now."),
    ]),
    *_probes("both", "two facts", [
        ("I have a scooter.", "I sold my scooter helmet."),
        ("I play water polo.", "I left my water polo cap at the pool."),
        ("I'm a waiter.", "I'm a night owl."),
        ("I'm a nurse.", "My husband is a nurse too."),
        ("I'm going out with Leo.", "Leo and I went to the cinema."),
        ("I drive to the office.", "I take the tube to the museum."),
        ("The alarm code is 2580.", "The safe code is 9999."),
        ("I work at the library.", "I left the library at noon."),
    ]),
    *_probes("confirm", "said again", [
        ("I'm a sous chef.", "I work as a sous chef."),
        ("Leo and I are together.", "I'm going out with Leo."),
        ("I gave up water polo.", "I quit water polo."),
        ("The alarm code is 2580.", "The alarm code is still 2580."),
        ("I sold my scooter.", "I don't have a scooter anymore."),
    ]),
]  # fmt: skip

# Written 2026-12-07 (twenty-first sitting) before the rule for a change said verb first
# ("I changed my email to ..."), and run before and after it.
CHANGES: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My email is ana@old.com.", "I changed my email to ana@new.com."),
        ("My phone number is 555-0100.", "I updated my phone number to 555-0101."),
        ("My dentist appointment is on Thursday.", "I moved my dentist appointment to Friday."),
        ("My home address is 3 Elm Street.", "I've changed my home address to 9 Oak Road."),
    ]),
    *_probes("both", "two facts", [
        ("My email is ana@old.com.", "I changed my mind about the trip."),
        ("My favourite colour is blue.", "I changed my bike to a red one."),
    ]),
    *_probes("confirm", "said again", [
        ("My email is ana@new.com.", "I changed my email to ana@new.com."),
    ]),
]  # fmt: skip


# Written at the start of the twenty-second sitting, before any rule of that sitting, and run
# once unseen: everyday updates said the ways people say them in passing.
HELD_BACK_5: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I work at Siemens.", "I resigned from Siemens and joined Bosch."),
        ("I work for Deloitte.", "I've just started a new job at KPMG."),
        ("I'm vegetarian.", "I started eating meat again."),
        ("I have two cats.", "I have three cats now."),
        ("I'm 34.", "I turned 35 today."),
        ("My manager is Sarah.", "My new manager is Tom."),
        ("I'm learning Spanish.", "I stopped learning Spanish."),
        ("I live in Leeds.", "We relocated to Bristol in the spring."),
        ("My gym is PureGym.", "I switched gyms to The Gym Group."),
        ("I'm single.", "I got married last weekend."),
        ("My car is a Honda Civic.", "I traded in my Civic for a Tesla."),
        ("I go to bed at 11.", "These days I go to bed at midnight."),
    ]),
    *_probes("both", "two facts", [
        ("I work at Siemens.", "My brother works at Bosch."),
        ("I'm learning Spanish.", "I'm learning to knit."),
        ("I have two cats.", "I have two sisters."),
        ("My manager is Sarah.", "My neighbour is Tom."),
        ("I live in Leeds.", "I was born in Bristol."),
        ("I'm vegetarian.", "I started running again."),
        ("I go to bed at 11.", "I get up at 7."),
        ("My car is a Honda Civic.", "My wife drives a Tesla."),
    ]),
    *_probes("confirm", "said again", [
        ("I work at Bosch.", "I'm still at Bosch."),
        ("I live in Bristol.", "I still live in Bristol."),
        ("My manager is Tom.", "Tom is my manager."),
        ("I have three cats.", "I've got three cats."),
        ("I'm vegetarian.", "I don't eat meat."),
    ]),
]  # fmt: skip


# Written in the twenty-second sitting after its first rules (providers, diets said by what
# one eats, "we", "got married", switching providers) and before the next, run once unseen:
# the same families in other words.
HELD_BACK_6: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My dentist is Dr Patel.", "My new dentist is Dr Okafor."),
        ("My landlord is Mr Hughes.", "Our landlord is now Mrs Webb."),
        ("My bank is Barclays.", "I switched banks to Starling."),
        ("I'm pescatarian.", "I've gone vegan."),
        ("I'm vegan.", "I eat meat again."),
        ("We live in Glasgow.", "We moved to Dundee last year."),
        ("I'm engaged.", "I got married in June."),
        ("I'm married.", "We got divorced last year."),
        ("My coach is Ian.", "Ian isn't my coach anymore, my coach is Rhona."),
        ("I start work at 9.", "I start work at noon now."),
        ("My phone is a Pixel 6.", "I swapped my Pixel for an iPhone."),
    ]),
    *_probes("both", "two facts", [
        ("My dentist is Dr Patel.", "My dentist is very gentle."),
        ("My bank is Barclays.", "My bank is closed on Sundays."),
        ("My landlord is Mr Hughes.", "My neighbour is Mr Webb."),
        ("I'm vegan.", "I eat a lot of lentils."),
        ("We live in Glasgow.", "We went to Dundee last year."),
        ("I'm engaged.", "My sister got married in June."),
        ("My coach is Ian.", "My son's coach is Rhona."),
        ("I start work at 9.", "I have lunch at noon."),
    ]),
    *_probes("confirm", "said again", [
        ("My dentist is Dr Patel.", "Dr Patel is my dentist."),
        ("I'm vegetarian.", "I stopped eating meat years ago."),
        ("We live in Dundee.", "We still live in Dundee."),
        ("I got married in June.", "I'm married."),
        ("My bank is Starling.", "My bank is still Starling."),
    ]),
]  # fmt: skip


# Written in the twenty-second sitting before any rule for them, run once unseen: a
# relative's things and doings ended, beside the user's own.
RELATIVES: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My sister has a car.", "My sister sold her car."),
        ("My brother plays rugby.", "My brother gave up rugby."),
        ("My dad works at the post office.", "My dad retired from the post office."),
        ("Ana has a Spotify subscription.", "Ana cancelled her Spotify subscription."),
        ("My mum is a member of the book club.", "My mum left the book club."),
        ("My son goes to St Mary's school.", "My son left St Mary's."),
        ("My husband smokes.", "My husband quit smoking."),
        ("My sister is dating Tom.", "My sister and Tom broke up."),
    ]),
    *_probes("both", "two facts", [
        ("I have a car.", "My sister sold her car."),  # hers, not mine
        ("My sister has a car.", "I sold my car."),
        ("My brother plays rugby.", "My brother left his rugby boots at home."),
        ("My dad works at the post office.", "My dad left the post office early today."),
        ("My sister has a car.", "My brother sold his car."),
    ]),
    *_probes("confirm", "said again", [
        ("My brother gave up rugby.", "My brother quit rugby."),
        ("My sister sold her car.", "My sister got rid of her car."),
    ]),
]  # fmt: skip


# Written after the relatives' rules (a relative's ending read as they would say it) and
# run once unseen: other relatives, names and verbs.
RELATIVES_HELD_BACK: list[Probe] = [
    *_probes("replace", "value changed", [
        ("My wife has a gym membership.", "My wife cancelled her gym membership."),
        ("My uncle owns a boat.", "My uncle sold his boat last summer."),
        ("Priya works for Unilever.", "Priya resigned from Unilever."),
        ("My daughter plays the cello.", "My daughter gave up the cello."),
        ("My grandfather smokes a pipe.", "My grandfather stopped smoking a pipe."),
        ("My cousin is in a choir.", "My cousin left the choir."),
    ]),
    *_probes("both", "two facts", [
        ("I play the cello.", "My daughter gave up the cello."),
        ("My uncle owns a boat.", "My aunt sold her boat."),
        ("Priya works for Unilever.", "Priya left Unilever early today."),
        ("My wife has a gym membership.", "My wife left her gym bag at work."),
    ]),
    *_probes("confirm", "said again", [
        ("My uncle sold his boat.", "My uncle got rid of his boat."),
        ("My daughter gave up the cello.", "My daughter quit the cello."),
    ]),
]  # fmt: skip


# Written by a helper that had read no rule, no test and no other set of this file: only the
# instructions "60 pairs from how people talk about their lives in chat, tricky but each
# with one clear answer; both-pairs that look like updates but are not".  Long casual
# sentences, as people chat, where the sets above are mostly one plain clause.
HELD_BACK_7: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I drive a 2015 Honda Civic to work.", "Traded in the Civic last weekend, I'm driving a Tesla Model 3 now."),
        ("My manager is a guy called Tom Reeves.", "Tom left the company, so I report to Priya Shah these days."),
        ("I'm on the night shift at the hospital, 7pm to 7am.", "They finally moved me onto days, so I'm doing 7am to 7pm now."),
        ("I feed my dog Max Royal Canin kibble.", "Switched Max over to raw food since last month, the kibble was upsetting his stomach."),
        ("I'm doing a master's in data science at Manchester.", "I ended up dropping out of the master's and I'm doing a UX bootcamp online instead."),
        ("My phone is an iPhone 12.", "Finally upgraded, I'm on a Pixel 8 now."),
        ("I bank with Barclays.", "Moved everything over to Monzo and closed the Barclays account."),
        ("I'm single at the moment.", "Daniel proposed last night, we're engaged!!"),
        ("I go to the gym at 6am before work.", "I've given up on mornings, I hit the gym after work around 6pm now."),
        ("My rent is £950 a month.", "Landlord put the rent up to £1,100 from this month."),
        ("I take 20mg of citalopram every day.", "My GP bumped my citalopram up to 30mg a couple of weeks ago."),
        ("I'm a junior developer at Sage.", "Got promoted to senior developer last week, still at Sage."),
        ("We rent a flat in Shoreditch.", "We finally bought a house out in Walthamstow and moved in last month."),
        ("I'm vegan.", "I've started eating fish again, so I guess I'm pescatarian now."),
        ("My son Leo goes to Oakfield Primary.", "We moved Leo to St Mary's after half term, he's much happier there."),
        ("I use Spotify for all my music.", "Cancelled Spotify, I'm on Apple Music now since it came with the Apple One bundle."),
        ("I don't drink coffee at all.", "Somehow I've ended up on two coffees a day since the baby arrived."),
        ("I'm learning Spanish on Duolingo.", "Gave up on Spanish, I'm doing Japanese on Duolingo instead."),
        ("My partner Jess works from home full-time.", "Jess's company scrapped remote work, so she's back in the office five days a week."),
        ("I play five-a-side football on Tuesdays.", "Our five-a-side moved to Thursdays because the pitch kept getting double booked."),
        ("My mum lives with us.", "Mum moved into a care home back in October."),
        ("I'm on Vodafone's 30GB plan.", "When my contract ran out I switched to a Three unlimited SIM."),
        ("I weigh about 85 kg.", "I'm down to 78 kg now after cutting out sugar."),
        ("I'm saving £200 a month into my ISA.", "Since the pay rise I've upped my ISA payments to £400 a month."),
        ("My favourite show right now is Severance.", "Honestly The Bear has replaced Severance as my favourite, I'm obsessed."),
        ("I get the train into Leeds for work.", "I've been cycling in ever since they cancelled half the trains, no more train for me."),
        ("My laptop is a ThinkPad X1 Carbon.", "The ThinkPad died on me, so I'm using a MacBook Air now."),
        ("我在北京的一家互联网公司做产品经理。", "我上个月辞职了，现在在杭州一家创业公司做运营。"),
        ("我每天早上跑步五公里。", "膝盖受伤以后我就不跑步了，现在改成每天游泳。"),
        ("我现在住在上海浦东。", "我们已经搬到苏州了，上海的房租实在太贵。"),
    ]),
    *_probes("both", "two facts", [
        ("I drive a Ford Focus.", "My wife just bought herself a Mini Cooper."),
        ("I work as a nurse at St James's.", "My brother just got a job as a paramedic."),
        ("We live in Bristol.", "We're thinking about maybe moving to Cardiff next year."),
        ("I'm vegetarian.", "I used to eat meat all the time back at uni."),
        ("I report to Mark Ellis.", "Mark's boss is a woman called Helen Price."),
        ("I have an iPhone 14.", "I use an old Kindle Paperwhite for reading in bed."),
        ("I do yoga on Monday evenings.", "Just signed up for a pottery class on Wednesdays."),
        ("Our dog Bruno is a beagle.", "We're fostering a greyhound called Pepper for a few weeks."),
        ("I bank with Nationwide.", "Should I switch to Monzo? Their app looks so much nicer."),
        ("I live in Manchester.", "If I got the Berlin job I'd move there in a heartbeat."),
        ("I take metformin twice a day.", "My doctor said we might switch me to Ozempic if my numbers don't improve."),
        ("I always fly easyJet because it's the cheapest.", "Flew BA to New York last month, but only because work was paying."),
        ("I earn about £42k.", "My flatmate's on about £60k, which is wild to me."),
        ("I moved to Glasgow in 2019.", "Before that I lived in Aberdeen for six years."),
        ("Our son Jack is allergic to peanuts.", "Our daughter Lily is allergic to cats."),
        ("My phone contract is with Vodafone.", "Our home broadband is with BT."),
        ("我在上海工作。", "我老婆在南京工作，我们只有周末才能见面。"),
        ("我养了一只柯基叫豆豆。", "我爸妈家里养了一只橘猫。"),
    ]),
    *_probes("confirm", "said again", [
        ("I'm teetotal.", "I don't drink alcohol at all, haven't for years."),
        ("I work from home full-time.", "I don't go into an office, I'm fully remote."),
        ("My husband's name is Raj.", "Oh, Raj is my husband, by the way."),
        ("I'm lactose intolerant.", "Dairy doesn't agree with me, my body can't handle lactose."),
        ("I live alone.", "It's just me in the flat, no flatmates or anything."),
        ("I'm a primary school teacher.", "I teach at a primary school."),
        ("I have two kids.", "I'm a mum of two."),
        ("I use a Samsung Galaxy S23.", "My phone's the Galaxy S23."),
        ("I go to bed around 11pm most nights.", "I'm usually asleep by about eleven."),
        ("I'm left-handed.", "I write with my left hand."),
        ("我不吃辣。", "我一点辣都受不了，辣的东西我都不吃。"),
        ("我是独生子女。", "我没有兄弟姐妹。"),
    ]),
]  # fmt: skip


# Written like HELD_BACK_7 by another helper that read nothing here, and run once, unseen,
# after the rules written for HELD_BACK_7 (the twenty-third sitting): the honest measure of
# how those rules carry to chat nobody here wrote.
HELD_BACK_8: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I'm a junior analyst at Deloitte in Manchester, mostly doing audit support, which is about as exciting as it sounds.",
         "Left Deloitte last month, I'm a data engineer at Monzo now and honestly the commute into London is the only downside."),
        ("I manage a team of four on the checkout squad, mostly keeping the payments flow from falling over.",
         "They reorged us in March and I'm back to being an individual contributor, no direct reports anymore, which is kind of a relief."),
        ("I work from home Mondays and Fridays and go into the office the rest of the week.",
         "New policy since last month means we're in the office four days a week now, only Fridays at home."),
        ("We rent a two-bed flat above a bakery in Headingley, the smell in the morning is unreal.",
         "Finally got the keys to our own place in Chapel Allerton last week, so no more landlord and sadly no more bakery smell."),
        ("I share a house with two guys from uni, Tom and Raj, it's chaotic but cheap.",
         "Living alone these days, the uni house broke up in January and I found a little studio in Walthamstow."),
        ("My mum still works as a nurse at St James's, she does nights mostly.",
         "Mum finally retired from nursing at Easter, she's at home full-time now and already bored out of her mind."),
        ("My sister Hannah lives in Melbourne, so our calls are always at weird hours.",
         "Hannah moved back from Australia in the autumn and she's in Glasgow now, so at least we're in the same time zone."),
        ("We've got one cat, a grumpy old tabby called Biscuit.",
         "We don't have any pets anymore, Biscuit died in June and we're not ready for another one yet."),
        ("Our dog Pepper goes to doggy daycare three days a week in Clapham.",
         "Pulled Pepper out of daycare, a dog walker comes at lunchtime instead since it's half the price."),
        ("I take 50mg of sertraline every morning.",
         "Doctor bumped my sertraline up to 100mg last month because the lower dose wasn't really doing much."),
        ("I wear glasses for distance, mostly just for driving and the cinema.",
         "Had laser eye surgery in February, so no glasses at all anymore, still feels weird not pushing them up my nose."),
        ("I'm vegan, have been since 2019, mostly for environmental reasons.",
         "I eat fish again these days, went pescatarian after my iron levels got really low."),
        ("I drink like four cups of coffee a day, it's basically my whole personality.",
         "Quit caffeine completely in the new year, herbal tea only now and my sleep is so much better."),
        ("I pay for Spotify Premium, the family plan I share with my flatmates.",
         "Cancelled Spotify and moved over to Apple Music since it comes bundled with Apple One anyway."),
        ("My rent is £950 a month, which is a lot for what it is.",
         "Landlord put the rent up to £1,100 from this month, absolutely gutted."),
        ("I bank with Barclays, always have since my first student account.",
         "Switched my current account to Nationwide for the £175 switching bonus, the Barclays one is closed now."),
        ("My phone's an iPhone 12 and the battery is on its last legs.",
         "Finally got a Pixel 8 in the Black Friday sale, first time on Android in years."),
        ("I write all my notes in Notion, my whole life is in there.",
         "Moved everything from Notion to Obsidian over Christmas, I prefer having plain files stored locally."),
        ("I drive a 2014 Ford Focus, it's done about 120k miles.",
         "Sold the Focus and ended up leasing a Kia Niro EV, so no more petrol stations for me."),
        ("I cycle to work along the canal, takes about 25 minutes.",
         "Since I changed offices I take the 36 bus instead, cycling through that big roundabout was too sketchy."),
        ("I play five-a-side football every Tuesday night in Stockport.",
         "Gave up football after I did my ACL, I'm doing bouldering on Tuesdays instead."),
        ("I'm doing a part-time MSc in data science with the Open University.",
         "Dropped the OU master's after the first year, couldn't keep up with a full-time job and a baby."),
        ("My boyfriend Sam and I have been together about three years.",
         "Sam and I broke up in the summer, I'm single now and mostly fine about it."),
        ("I'm engaged to Priya, the wedding is planned for next June.",
         "Priya and I got married in Lisbon in June, still getting used to saying 'my wife'."),
        ("I fly home to Dublin with Ryanair about once a month.",
         "These days I take the train and ferry home to Dublin instead of flying, trying to cut down my carbon footprint."),
        ("My favourite show at the moment is Succession, I've rewatched it twice.",
         "Current obsession is The Bear, it's properly knocked Succession off the top spot for me."),
        ("I'm learning Spanish on Duolingo, on a 200-day streak.",
         "Stopped Spanish altogether, I'm doing Japanese now with a tutor on italki ahead of our trip to Osaka."),
        ("我在上海一家外企做市场营销，天天加班到很晚。",
         "上个月辞职了，现在回杭州老家开了个小咖啡店，自己当老板。"),
        ("我每天坐地铁2号线上班，单程要四十分钟。",
         "现在不坐地铁了，买了辆电动车，骑车上班二十分钟就到。"),
        ("我用的是中国移动的套餐，每个月128块。",
         "上周把号码转到联通了，套餐才59一个月，比移动便宜多了。"),
    ]),
    *_probes("both", "two facts", [
        ("I work as a paramedic for West Midlands Ambulance Service.",
         "My husband just started a new job as a firefighter in Coventry, so our shifts are going to be a nightmare to line up."),
        ("I drive a Toyota Yaris hybrid, it's perfect for the school run.",
         "We've just bought a second car, a used Volvo XC60, mainly for my partner's longer commute."),
        ("My personal laptop is a MacBook Air M2.",
         "Work just handed me a Lenovo ThinkPad running Windows 11 and I already miss macOS."),
        ("I live in a flat in Hackney.",
         "We're thinking about moving out to Kent next year if we can save up enough for a deposit."),
        ("I'm a secondary school maths teacher.",
         "If the pay doesn't improve I might retrain as a software developer one day, but I'm nowhere near deciding."),
        ("I've got an iPhone 13.",
         "Is it worth upgrading to the 15 Pro or should I just get a new battery put in and keep going?"),
        ("I'm vegetarian.",
         "Growing up in Argentina we had steak practically every Sunday, my dad treated the asado like a religion."),
        ("I don't drink alcohol at all.",
         "Made an exception at my brother's wedding on Saturday and had a sip of champagne for the toast, then straight back to lemonade."),
        ("We have a border collie called Meg.",
         "My parents just adopted a rescue greyhound named Dash, Meg is going to be so jealous when they visit."),
        ("I go to pilates on Wednesday mornings before work.",
         "My daughter Isla started ballet on Wednesday afternoons, so I'm doing an earlier school pickup that day."),
        ("I'm the team lead for the mobile app team at Ocado.",
         "My colleague Dev just got promoted to lead the web team, so we'll be working together a lot more."),
        ("I live in Bristol, just off Gloucester Road.",
         "My best mate Charlie has just moved to Bristol too, he found a place in Bedminster."),
        ("I take levothyroxine every morning for an underactive thyroid.",
         "GP has put me on a week of amoxicillin for a chest infection, hopefully it clears up quickly."),
        ("I pay for Netflix, the standard plan.",
         "Signed up to Disney+ this week so the kids can binge Bluey over half term."),
        ("I take the train up to Edinburgh whenever I visit my gran.",
         "Back when I lived in London I used to fly up with easyJet, but that was years ago."),
        ("My favourite food is my nan's lamb hotpot.",
         "Favourite restaurant in town has to be Dishoom, I always get the black daal."),
        ("I speak Polish at home with my parents.",
         "My girlfriend's trying to learn Polish on Babbel so she can finally understand my mum."),
        ("I drive a 2016 Skoda Octavia estate.",
         "Honestly dreaming of a Tesla Model 3, but there's no way we can afford one this year."),
        ("我在深圳做产品经理，主要负责一款健身App。",
         "我老婆最近跳槽去了腾讯，做UI设计，比以前忙多了。"),
        ("我每周六上午都去打羽毛球。",
         "这周六要陪孩子去参加钢琴考级，羽毛球只能请一次假了。"),
    ]),
    *_probes("confirm", "said again", [
        ("I'm allergic to penicillin, found out the hard way as a kid.",
         "Just so you know, penicillin is a no-go for me, I come out in hives."),
        ("I work nights at the Amazon warehouse in Dunstable.",
         "Yeah I'm on the night shift at the Amazon fulfilment centre out in Dunstable, 10pm till 6."),
        ("My daughter Chloe is seven.",
         "Chloe's in Year 3, she turned seven a few weeks ago."),
        ("I'm lactose intolerant so no milk in my tea.",
         "Dairy really doesn't agree with me, I stick to oat milk for everything."),
        ("We live in a terraced house in Sheffield, near Hillsborough.",
         "Our place is a little two-up two-down terrace in Hillsborough, Sheffield."),
        ("I'm a Liverpool fan through and through.",
         "Been supporting Liverpool since I was a kid, never miss a match on telly if I can help it."),
        ("I use a Kindle Paperwhite for all my reading.",
         "Pretty much every book I read is on my Paperwhite, I barely buy physical copies."),
        ("My commute is about an hour each way on the Northern line.",
         "Takes me roughly sixty minutes to get into work on the tube, Northern line both ways."),
        ("I'm left-handed.",
         "Being a lefty, I always end up knocking elbows with whoever sits next to me at dinner."),
        ("我对花生过敏。",
         "花生我是一点都不能碰的，吃了就过敏。"),
    ]),
]  # fmt: skip


# Written like HELD_BACK_7 by a third helper that read nothing here, asked for more "both"
# pairs that share words and even words of change with the earlier statement, and run once,
# unseen, after every rule of the twenty-third sitting (the chat-clause readings and the
# replacement by a settled change: :mod:`shiyi.memory.lifecycle.said_instead`).
HELD_BACK_9: list[Probe] = [
    *_probes("replace", "value changed", [
        ("I work as a nurse on the cardiology ward at St James's in Leeds.", "Left nursing back in March, I'm doing medical device sales for Medtronic now and the hours are so much better honestly."),
        ("My manager is Karen, she's pretty chill about remote days.", "Karen got moved over to compliance so I report to Tom Hughes these days, much stricter guy."),
        ("I start work at 8am every weekday.", "They pushed our start time to 10 since last month so I no longer have to get up at six, which is amazing."),
        ("We rent a two-bed flat in Clapham.", "Ended up buying a little terraced house in Croydon, got the keys last Friday so no more renting for us!"),
        ("My partner's name is Jess, we've been together four years.", "Jess and I split up in January, I'm seeing someone called Priya now and it's going really well."),
        ("I don't have any pets, the landlord doesn't allow them.", "Finally got a dog! The new landlord is fine with pets so we adopted a greyhound called Luna from the rescue."),
        ("I take 20mg of citalopram every morning.", "Doctor switched me from citalopram to sertraline 50mg because of the side effects, been on it two weeks now."),
        ("I'm vegan, have been for about three years.", "I've started eating fish again because my iron levels were awful, so I'm pescatarian these days rather than vegan."),
        ("I pay for Spotify Premium, the family plan.", "Cancelled Spotify and moved everyone over to Apple Music since it came bundled with Apple One anyway."),
        ("My phone is a Samsung Galaxy S21.", "Switched to an iPhone 15 last week after the Samsung screen died, still getting used to iOS."),
        ("I use Notion for all my notes and to-do lists.", "Gave up on Notion, it got way too slow, so everything lives in Obsidian now."),
        ("I drive a 2015 Ford Focus.", "Traded the Focus in for a used Tesla Model 3, so I'm fully electric now."),
        ("I take the train to work, about 40 minutes each way.", "I cycle to the office instead of getting the train these days, it's quicker and I save like £150 a month."),
        ("I play five-a-side football on Tuesday nights.", "Knee's been too dodgy so I quit the Tuesday five-a-side and joined a padel group instead."),
        ("I'm a member at the PureGym on the high street.", "Moved my membership from PureGym to David Lloyd, pricier but the pool is worth it."),
        ("I'm doing a part-time MSc in data science with the Open University.", "Dropped out of the MSc after the first year, it was too much on top of work, so I'm not studying anymore."),
        ("I'm single and not really looking right now.", "Got engaged to Marco on Saturday!! Still can't quite believe it."),
        ("We're going to Portugal for our summer holiday in August.", "Scrapped the Portugal trip, the flights were crazy, so we're doing Croatia in August instead."),
        ("My favourite show is The Office, I've watched it like ten times.", "Honestly Severance has overtaken The Office as my all-time favourite, I'm obsessed."),
        ("I'm learning Spanish on Duolingo, about a 200 day streak.", "Ditched Spanish and switched the course to Japanese since we're moving to Osaka for a year in the autumn."),
        ("My mum lives in Glasgow, about a five-hour drive from us.", "Mum finally sold her place in Glasgow and moved down to Bath, so she's only 20 minutes away from us now."),
        ("We heat the house with an old gas boiler.", "Got a heat pump installed in October so the gas boiler is gone for good."),
        ("I'm a junior backend developer at a fintech called Cleo.", "Got promoted to senior engineer last month, same company, finally!"),
        ("I go to the gym in the mornings before work.", "I've moved my workouts to the evenings since the baby arrived, mornings are just chaos now."),
        ("Our vet is the Medivet on Church Road.", "We switched vets to Vets4Pets at the retail park after Medivet put their prices up again."),
        ("My bank is Barclays.", "Moved my current account over to Monzo and closed the Barclays one completely."),
        ("I smoke about ten a day.", "Three months without a cigarette now, I'm officially an ex-smoker!"),
        ("I'm on EE, £35 a month.", "Ported my number to Giffgaff, £10 a month rolling, no idea why I paid EE so much for so long."),
        ("我现在在北京一家互联网公司做产品经理。", "上个月辞职了，回了杭州老家，现在在阿里做运营。"),
        ("我每天要喝三杯咖啡，不然一点精神都没有。", "最近胃不太好，咖啡已经彻底戒了，现在只喝点绿茶。"),
    ]),
    *_probes("both", "two facts", [
        ("I work as a primary school teacher in Leeds.", "My husband just quit his office job and started teaching at a secondary school, so now we're both teachers lol."),
        ("My phone is a Pixel 8.", "Work finally gave me a company phone, an iPhone 14, which I only use for Teams and Outlook."),
        ("I drive a Honda Civic.", "Changed the tyres on the Civic yesterday, went with Michelins this time."),
        ("My dentist is Dr Patel at Smile Dental.", "Had to move my dentist appointment with Dr Patel to Friday because of a work thing."),
        ("I live in Manchester, in Didsbury.", "We're thinking about maybe moving to Lisbon in a couple of years if remote work sticks around."),
        ("I drive a 2017 VW Golf.", "Should I sell the Golf and get an EV? Petrol is killing me but I'm not sure about charging at a flat."),
        ("I'm vegetarian.", "I used to eat meat all the time as a kid, my dad was a butcher actually."),
        ("I don't drink alcohol.", "Had a sip of champagne for the toast at my sister's wedding on Saturday, just that once, straight back to lime and soda after."),
        ("I subscribe to Netflix.", "Also added Disney+ this month so the kids can watch Bluey, on top of Netflix."),
        ("My manager is Sarah Collins.", "My wife got a new manager this week and she sounds like a nightmare, micromanaging everything."),
        ("We have a black lab called Bruno.", "My parents just adopted a rescue cat called Pickle, Bruno is going to lose his mind when we visit."),
        ("I take levothyroxine 100mcg every morning for my thyroid.", "GP also started me on vitamin D, 1000 IU a day, since my levels came back low."),
        ("I'm on metformin for type 2 diabetes.", "My dad's doctor just switched him off metformin onto Ozempic, wondering if that would work for me too."),
        ("We live in a three-bed semi in Reading.", "Finally redid the kitchen in the Reading house, took three months but it looks amazing."),
        ("I work from home on Mondays and Fridays.", "Have to go into the office this Friday for an all-hands, annoying but it's just this once."),
        ("I cycle to work most days.", "My son's started taking the bus to school instead of walking since it's getting dark earlier."),
        ("I drive a Toyota Yaris.", "We bought a second car, a Skoda Octavia estate, mainly for my wife and the school run."),
        ("I play the guitar, mostly acoustic stuff.", "Started piano lessons on Wednesdays too, figured I'd finally learn some theory properly."),
        ("I'm studying law at the University of Edinburgh.", "My younger brother just switched his degree from law to economics, mum is not thrilled."),
        ("My girlfriend is called Hannah.", "Hannah changed jobs, she's at Deloitte now, so we're both in consulting haha."),
        ("We holiday in Cornwall every summer.", "Would love to try somewhere abroad like Crete one year, but the kids would riot if we skipped Cornwall."),
        ("My favourite band is Arctic Monkeys.", "My daughter's new favourite band is apparently Stray Kids, she's switched from Taylor Swift completely."),
        ("I speak French and English.", "Been picking up a bit of Italian on Babbel for our trip to Rome, only the basics so far."),
        ("I bank with Nationwide.", "Opened a Chase savings account for the 5% interest, keeping Nationwide for everyday stuff though."),
        ("My laptop is a MacBook Air M2.", "Updated the MacBook to the latest macOS and replaced the charger that the dog chewed through."),
        ("I'm lactose intolerant.", "Switched from oat milk to Lactofree in my coffee, tastes more like normal milk."),
        ("I go to CrossFit three times a week.", "Moved my CrossFit sessions from early mornings to lunchtimes, still the same three days a week."),
        ("我住在上海浦东。", "我爸妈刚从苏州搬到上海了，住在闵行，离我们不算太远。"),
        ("我开的是一辆比亚迪汉。", "最近在纠结要不要把比亚迪换成特斯拉，大家觉得值得吗？"),
        ("我养了一只柯基，叫豆豆。", "豆豆换了一家宠物医院，之前那家离得太远了。"),
    ]),
    *_probes("confirm", "said again", [
        ("I'm allergic to penicillin.", "Just a heads up, I can't have penicillin, I come out in hives."),
        ("I work night shifts at the Amazon warehouse in Coventry.", "Yeah still doing nights at the Coventry Amazon depot, my sleep schedule is a mess."),
        ("My husband's name is David.", "Dave, my husband, says hi lol."),
        ("I live with two flatmates in Bristol.", "There's three of us sharing the flat here in Bristol, me and two others."),
        ("I'm left-handed.", "As a lefty, spiral notebooks are my nemesis."),
        ("I don't own a car.", "No car here, I get everywhere by bike or bus."),
        ("My daughter Emily is seven.", "Emily's 7 now, going on 17 honestly."),
        ("I use Ubuntu on my home PC.", "My desktop at home runs Ubuntu Linux, haven't touched Windows there in years."),
        ("I'm training for the London Marathon in April.", "Long run this weekend is 18 miles, all part of the prep for London in April."),
        ("我是素食主义者。", "我不吃肉，已经好几年了。"),
    ]),
]  # fmt: skip
