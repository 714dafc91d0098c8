"""Words that name an occupation: "I'm a nurse" says what the user does for a living.

"I work as a nurse" always named the ``job`` slot; "I'm a nurse" named none, so "I'm a
product manager now" stayed active beside "I'm a software engineer", and "I'm a nurse"
beside "I work as a nurse".  A role is an occupation when its last word is one of
:data:`OCCUPATIONS` (common English job nouns), whole or at the end of a compound
("headteacher", "schoolteacher"): "a junior developer", "a restaurant manager", "a
freelance photographer".  What people are rather than do ("a runner", "a big fan of jazz",
"a mother of two", "a vegetarian", "a morning person") is no occupation.
"""

from __future__ import annotations

import re

OCCUPATIONS = (
    "accountant", "actor", "actress", "administrator", "agent", "analyst", "apprentice",
    "architect", "artist", "assistant", "attorney", "auditor", "baker", "banker", "barber",
    "barista", "barrister", "bartender", "beautician", "bookkeeper", "builder", "butcher",
    "buyer", "caregiver", "carer", "carpenter", "cashier", "ceo", "cfo", "chef",
    "childminder", "cleaner", "clerk", "coach", "consultant", "cook", "coordinator",
    "counsellor", "counselor", "courier", "cto", "dancer", "dentist", "designer",
    "developer", "director", "doctor", "driver", "economist", "editor", "electrician",
    "engineer", "entrepreneur", "executive", "farmer", "firefighter", "founder",
    "gardener", "hairdresser", "historian", "inspector", "instructor", "intern",
    "interpreter", "janitor", "journalist", "judge", "labourer", "laborer", "lawyer",
    "lecturer", "librarian", "lifeguard", "machinist", "manager", "marketer", "mechanic",
    "midwife", "musician", "nanny", "nurse", "officer", "optician", "optometrist",
    "paralegal", "paramedic", "pharmacist", "photographer", "physician", "physicist",
    "physiotherapist", "pilot", "plumber", "police officer", "politician", "porter",
    "postman", "postwoman", "producer", "professor", "programmer", "psychiatrist",
    "psychologist", "receptionist", "recruiter", "researcher", "salesman", "saleswoman",
    "salesperson", "scientist", "secretary", "soldier", "solicitor", "specialist",
    "student", "supervisor", "surgeon", "surveyor", "tailor", "teacher", "technician",
    "therapist", "translator", "tutor", "vet", "veterinarian", "waiter", "waitress",
    "welder", "writer",
)  # fmt: skip
_HEADS = "|".join(sorted(map(re.escape, OCCUPATIONS), key=len, reverse=True))
# Words judging how well one does something: "a good cook" and "a terrible driver" say how
# one cooks or drives, not what one does for a living.
_JUDGED = (
    r"(?!(?:[a-z-]+\s+){0,3}?(?:good|great|bad|terrible|awful|decent|excellent|amazing|brilliant"
    r"|fantastic|lousy|poor|careful|reckless|fast|slow|keen|natural|born|better|worse|best"
    r"|worst|horrible|wonderful|fine|nervous|confident)\s)"
)
ROLE = rf"(?:a|an)\s+{_JUDGED}(?:[a-z-]+\s+){{0,3}}?[a-z-]*(?:{_HEADS})s?\b"
"""A regular expression (case-insensitive use) for "a <role>" whose head is an
occupation: "a nurse", "a junior developer", "an accountant" (not "a good cook")."""
