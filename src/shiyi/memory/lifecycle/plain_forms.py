"""Roundabout statements read as the plain statement they amount to.

People rarely restate a value the way they first stated it.  "I'm vegetarian" is later
"I started eating meat again"; "My gym is PureGym" is later "I switched gyms to The Gym
Group".  The slot rules of :mod:`~shiyi.memory.lifecycle.stated_slots` read plain shapes
("I'm a vegan", "my gym is X"), so each roundabout form here is rewritten into the plain
sentence it means before they read it:

* what one eats said by what one does: "I went vegan" is "I'm vegan"; "I don't eat meat
  (anymore)", "I stopped eating meat" and "I gave up meat" are "I'm vegetarian"; "I eat meat"
  and "I started eating meat again" are "I'm an omnivore";
* a change of provider said with a plural: "I switched gyms to X", "I changed banks to X"
  are "my gym is X", "my bank is X";
* one value taking another's place: "The Bear has replaced Severance as my favourite show"
  is "my favourite show is The Bear";
* a rise: "I got promoted to head of science" is "I work as a head of science";
* an amount moved to a new value: "My landlord put the rent up to £1,100", "I upped my
  savings to £400 a month" are "my rent is £1,100", "my savings is £400 a month";
* whom one reports to: "I report to Priya Shah" is "my manager is Priya Shah".

Only whole sentences are rewritten, so a sentence saying more ("I don't eat meat on
Fridays", "I switched gyms because of the price") keeps its own reading.  The stored fact
keeps the user's words; only the slot reading uses the plain form.
"""

from __future__ import annotations

import re

_WHEN = (
    r"(?:\s+(?:anymore|any more|at all|again|now|these days|nowadays|recently|lately|today"
    r"|yesterday|last\s+\w+|this\s+\w+|in\s+\w+|long\s+ago|from\s+(?:this|next)\s+\w+"
    r"|(?:(?:a few|a couple of|several|many|some|a|an|one|two|three|four|five|six|seven"
    r"|eight|nine|ten|\d+)\s+)?(?:days?|weeks?|months?|years?|ages)\s+ago))*"
)
# Longer text is no one plain statement (and is not worth reading as one).
_LONGEST = 300
_I = r"^I(?:['’]ve|\s+have)?(?:\s+(?:just|finally|recently|already|now))?"
_DIET = r"(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|plant[- ]based|keto|paleo)"
_MEAT = r"(?:meat|red meat and poultry)"
_NAME = r"(?-i:[A-Z])[\w'’&.-]*(?:\s+(?-i:[A-Z])[\w'’&.-]*){0,3}"
_UNIT = r"(?:kg|g|mg|mcg|ml|lbs?|%|k|grand|quid|pounds|dollars|euros|hours?|hrs?|minutes?|mins?)"
_MOVED_TO = (
    r"(?:put|pushed|bumped|jacked|hiked|raised|increased|upped|cut|lowered|reduced|dropped"
    r"|brought|moved|changed|lifted)"
)

_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern + "$", re.IGNORECASE), plain)
    for pattern, plain in (
        # "I went vegan", "I've become vegetarian": the diet
        (rf"{_I}\s+(?:went|gone|turned|became|become)\s+(?P<diet>{_DIET}){_WHEN}", "I'm {diet}"),
        # "I don't eat meat anymore", "I stopped eating meat", "I gave up meat": no meat
        (rf"^I\s+(?:don['’]?t|do not|no longer)\s+eat\s+{_MEAT}{_WHEN}", "I'm vegetarian"),
        (rf"{_I}\s+(?:stopped|quit|gave up|given up)\s+(?:eating\s+)?{_MEAT}{_WHEN}",
         "I'm vegetarian"),
        # "I eat meat", "I started eating meat again": meat
        (rf"^I\s+(?:still\s+)?eat\s+{_MEAT}{_WHEN}", "I'm an omnivore"),
        (rf"{_I}\s+(?:started|begun|began)\s+eating\s+{_MEAT}{_WHEN}", "I'm an omnivore"),
        (rf"^I['’]m\s+eating\s+{_MEAT}{_WHEN}", "I'm an omnivore"),
        # "I switched gyms to The Gym Group": my gym is The Gym Group
        (rf"{_I}\s+(?:switched|changed|swapped)\s+(?P<plural>[a-z]+s)\s+to\s+(?P<value>(?-i:[A-Z]).*)",
         "my {plural} is {value}"),
        # "The Bear has replaced Severance as my favourite show": my favourite show is ...
        (rf"^(?P<value>{_NAME})\s+(?:has\s+)?(?:now\s+)?(?:replaced|taken over from"
         rf"|overtaken)\s+{_NAME}\s+as\s+my\s+(?P<owned>[a-z]+(?:\s+[a-z]+)?){_WHEN}",
         "my {owned} is {value}"),
        # "I got promoted to head of science last week": I work as a head of science (a
        # promotion is to a job, whatever its words)
        (rf"{_I}\s+(?:got|been|was)\s+promoted\s+to\s+(?P<role>[a-z]+(?:\s+[a-z]+){{0,3}}?)"
         rf"{_WHEN}", "I work as a {role}"),
        # "My landlord put the rent up to £1,100": my rent is £1,100
        (rf"^(?!(?:they|he|she|it|you|someone|people)\b)(?:(?:my|our|the)\s+)?(?:[a-z]+\s+)?"
         rf"(?:(?:i|we)(?:['’]ve|\s+have)?\s+)?"
         rf"{_MOVED_TO}\s+(?:my|our|the)\s+(?P<owned>[a-z]+(?:\s+[a-z]+)??)\s+(?:up\s+|down\s+)?to"
         rf"\s+(?P<value>[£$€]?\d[\d,.]*\s*(?:{_UNIT})?(?:\s+(?:a|an|per)\s+[a-z]+)?){_WHEN}",
         "my {owned} is {value}"),
        # "I report to Priya Shah these days": my manager is Priya Shah
        (rf"^I\s+(?:now\s+)?report\s+(?:directly\s+)?to\s+(?P<value>{_NAME}){_WHEN}",
         "my manager is {value}"),
    )
)  # fmt: skip


def plain_form(sentence: str) -> str:
    """``sentence`` as the plain statement it amounts to, or unchanged when it is not one of
    the roundabout forms above."""
    if len(sentence) > _LONGEST or "\n" in sentence:
        return sentence
    for pattern, plain in _REWRITES:
        if found := pattern.match(sentence):
            parts = {name: value or "" for name, value in found.groupdict().items()}
            if "plural" in parts:
                parts["plural"] = _singular(parts["plural"])
            return plain.format(**parts)
    return sentence


def _singular(word: str) -> str:
    """ "gyms": gym, "pharmacies": pharmacy, "churches": church (regular plurals only)."""
    lower = word.lower()
    if lower.endswith("ies"):
        return word[:-3] + "y"
    if lower.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1]
