"""Words the stemmer leaves apart from the word a question asks with, as that word.

The keyword index emits a word's Snowball stem beside the word (:mod:`shiyi.index.text`), so
"paint" finds "painted".  Snowball only strips endings, and these tables say what it cannot:

* :data:`IRREGULAR_VERBS`: a question asks with the base form ("What did Sam *buy*?", "Where
  did Ana *go*?", "Who did Lea *meet*?": English asks with "did" and the base form), a person
  tells it in the past ("I *bought*", "we *went*", "I *met*").  Regular verbs meet through
  their stem ("painted" -> ``paint``); irregular ones did not.  Forms that are mostly
  something else in a chat are left out: "bit" (a bit), "rose" (a flower, a name), "ground",
  "wound", "shot" (a photo, a vaccine), "lit", "stuck", "bent", "fed" (fed up), "drunk",
  "bore"/"born", "tore"/"torn" (tear is also crying), "lay"/"laid"/"lain" (lie or lay).
* :data:`IRREGULAR_PLURALS`: "children" -> ``child``.
* :data:`FAMILY_WORDS`: "kids" -> ``child``, "mom" -> ``mother``.
* :data:`CHAT_WORDS`: "bday" -> ``birthday``, "pic" -> ``picture``.

Each table maps a form to the word whose stem it is also indexed as; the form itself stays
indexed, so it still matches itself first.  Written from general usage, not from any dataset.
"""

from __future__ import annotations


def _forms(table: dict[str, str]) -> dict[str, str]:
    """``{"buy": "bought", "go": "went gone"}`` -> ``{"bought": "buy", "went": "go", ...}``."""
    return {form: base for base, forms in table.items() for form in forms.split()}


IRREGULAR_VERBS: dict[str, str] = _forms(
    {
        "arise": "arose arisen",
        "awake": "awoke awoken",
        "become": "became",
        "begin": "began begun",
        "bite": "bitten",
        "bleed": "bled",
        "blow": "blew blown",
        "break": "broke broken",
        "breed": "bred",
        "bring": "brought",
        "build": "built",
        "burn": "burnt",
        "buy": "bought",
        "catch": "caught",
        "choose": "chose chosen",
        "cling": "clung",
        "come": "came",
        "creep": "crept",
        "deal": "dealt",
        "dig": "dug",
        "draw": "drew drawn",
        "dream": "dreamt",
        "drink": "drank",
        "drive": "drove driven",
        "eat": "ate eaten",
        "fall": "fell fallen",
        "feel": "felt",
        "fight": "fought",
        "find": "found",
        "flee": "fled",
        "fly": "flew flown",
        "forbid": "forbade forbidden",
        "forget": "forgot forgotten",
        "forgive": "forgave forgiven",
        "freeze": "froze frozen",
        "get": "got gotten",
        "give": "gave given",
        "go": "went gone",
        "grow": "grew grown",
        "hang": "hung",
        "hear": "heard",
        "hide": "hid hidden",
        "hold": "held",
        "keep": "kept",
        "kneel": "knelt",
        "know": "knew known",
        "lead": "led",
        "leap": "leapt",
        "learn": "learnt",
        "leave": "left",
        "lend": "lent",
        "lose": "lost",
        "make": "made",
        "mean": "meant",
        "meet": "met",
        "mistake": "mistook mistaken",
        "overcome": "overcame",
        "overtake": "overtook overtaken",
        "pay": "paid",
        "rebuild": "rebuilt",
        "retake": "retook retaken",
        "ride": "rode ridden",
        "ring": "rang",
        "run": "ran",
        "say": "said",
        "see": "saw seen",
        "seek": "sought",
        "sell": "sold",
        "send": "sent",
        "shake": "shook shaken",
        "shine": "shone",
        "shrink": "shrank shrunk",
        "sing": "sang sung",
        "sink": "sank sunk",
        "sit": "sat",
        "sleep": "slept",
        "slide": "slid",
        "speak": "spoke spoken",
        "spell": "spelt",
        "spend": "spent",
        "spin": "spun",
        "spit": "spat",
        "spring": "sprang sprung",
        "stand": "stood",
        "steal": "stole stolen",
        "sting": "stung",
        "stink": "stank",
        "strike": "struck",
        "swear": "swore sworn",
        "sweep": "swept",
        "swim": "swam swum",
        "swing": "swung",
        "take": "took taken",
        "teach": "taught",
        "tell": "told",
        "think": "thought",
        "throw": "threw thrown",
        "undertake": "undertook undertaken",
        "understand": "understood",
        "wake": "woke woken",
        "wear": "wore worn",
        "weep": "wept",
        "win": "won",
        "withdraw": "withdrew withdrawn",
        "write": "wrote written",
    }
)
"""Past forms and participles -> base form ("bought" -> "buy")."""

IRREGULAR_PLURALS: dict[str, str] = {
    "children": "child",
    "grandchildren": "grandchild",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "geese": "goose",
    "wives": "wife",
    "knives": "knife",
    "wolves": "wolf",
    "halves": "half",
    "loaves": "loaf",
    "thieves": "thief",
    "shelves": "shelf",
    "calves": "calf",
}
"""Plurals Snowball leaves apart from their singular ("children" / "child"); only those that
are no other word ("leaves" and "lives" are verbs too: "she lives in Oslo" must still meet
"live").  Short ones ("men") are stemmed too, as their singular."""

FAMILY_WORDS: dict[str, str] = {
    **dict.fromkeys(["kid", "kids", "kiddo", "kiddos"], "child"),
    **dict.fromkeys(["mom", "moms", "mum", "mums", "mommy", "mummy", "mama", "momma"], "mother"),
    **dict.fromkeys(["dad", "dads", "daddy", "papa"], "father"),
    **dict.fromkeys(["grandma", "grandmas", "granny", "grandmom", "nana"], "grandmother"),
    **dict.fromkeys(["grandpa", "grandpas", "granddad", "grandad", "gramps"], "grandfather"),
    **dict.fromkeys(["grandkid", "grandkids"], "grandchild"),
    "hubby": "husband",
    "bro": "brother",
    "sis": "sister",
}
"""What people call their family in a chat, and what a question about them says: "Melanie's
kids" are asked about as her children, "my mom" as her mother.  Each word is also stemmed as
the plain one (a closed class: no word here means anything else in a chat)."""

CHAT_WORDS: dict[str, str] = {
    **dict.fromkeys(["bday", "bdays"], "birthday"),
    **dict.fromkeys(["pic", "pics", "pix"], "picture"),
    **dict.fromkeys(["vid", "vids"], "video"),
    **dict.fromkeys(["convo", "convos"], "conversation"),
    **dict.fromkeys(["fav", "favs", "fave", "faves"], "favorite"),
    **dict.fromkeys(["bf", "bfs"], "boyfriend"),
    **dict.fromkeys(["gf", "gfs"], "girlfriend"),
    **dict.fromkeys(["bestie", "besties", "bff", "bffs"], "friend"),
    **dict.fromkeys(["roomie", "roomies"], "roommate"),
    **dict.fromkeys(["vacay", "vacays"], "vacation"),
    **dict.fromkeys(["congrats", "grats"], "congratulations"),
    **dict.fromkeys(["tmrw", "tmr", "tomoz"], "tomorrow"),
    **dict.fromkeys(["veggie", "veggies"], "vegetable"),
    "yrs": "year",
    **dict.fromkeys(["wks", "wk"], "week"),
    "hrs": "hour",
    "mins": "minute",
    "fam": "family",
    "uni": "university",
    "hols": "holiday",
    "yday": "yesterday",
    "tonite": "tonight",
    "nite": "night",
    "wknd": "weekend",
    "xmas": "christmas",
    "appt": "appointment",
    "anniv": "anniversary",
    "ppl": "people",
    "info": "information",
    "luv": "love",
    "prof": "professor",
    "insta": "instagram",
    "meds": "medication",
    "wifey": "wife",
}
"""Short forms people type in chats, as the word a question asks with: "my bday" is asked
about as a birthday, "sent a pic" as a picture, "my bf" as a boyfriend.  Only forms with one
reading in a chat ("doc" is a doctor or a document, "min" a minute or a minimum, "hw" homework
or hardware: left out).  Written from general usage; real chats between people (not the
model-written LoCoMo turns) are full of them."""

WORD_FORMS: dict[str, str] = IRREGULAR_VERBS | IRREGULAR_PLURALS | FAMILY_WORDS | CHAT_WORDS
"""Every form above -> the word it is also stemmed as."""
