"""Heuristic entity extraction (no model): names, places, code identifiers, paths, URLs, tags.

Runs on every message, so it must be cheap (well under 2 ms for 500 characters once jieba is
warm).  Structured spans (URLs, emails, paths, code) are found first and blanked out of a
working copy so that later, looser patterns (capitalised names) do not re-match their pieces.

Chinese uses ``jieba.posseg`` with ``HMM=False``: dictionary words tagged as names (nr),
places (ns), organisations (nt), other proper nouns (nz) and nouns (n).  HMM would also guess
out-of-dictionary person names (``张伟``) but costs ~7x more time, which breaks the budget;
``jieba.analyse.extract_tags`` was not used because it needs a whole-document IDF pass and
yields keywords without a type.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from shiyi.index.text import STOP_WORDS, is_number, load_jieba, word_set
from shiyi.memory.models import EntityRecord

_FILE_EXTS = word_set(
    "py pyi js ts tsx jsx json toml yaml yml md txt rst cfg ini sh bash zsh c h cc cpp hpp rs "
    "go java kt rb php sql html css scss csv tsv log lock xml db sqlite sqlite3 env ipynb"
)
_TLDS = word_set("com org net io dev ai cn app co edu gov uk de jp me info")
TECHNOLOGIES = word_set(
    """python rust java javascript typescript golang docker kubernetes k8s sqlite sqlite3
    postgres postgresql mysql redis kuzu jieba linux macos windows git github gitlab react vue
    django flask fastapi pytorch numpy pandas aws gcp azure nginx node.js npm pip pytest mypy
    ruff kafka elasticsearch graphql openai deepseek llama chatgpt claude qwen ollama"""
)
# Capitalised at the start of a sentence for grammar, not because they name something.
_NOT_NAMES = STOP_WORDS | word_set(
    """hello hi hey thanks thank please ok okay sure yes today tomorrow yesterday let lets
    maybe also however but so now then note todo fixme see use run add fix make we'll i'm
    it's mr mrs ms dr prof st monday tuesday wednesday thursday friday saturday sunday"""
)
# A month or a day of the week names a time, not a thing: as an entity "March" tied every turn
# said in March to every other (the graph bridge led from "I started the cello in March" to
# all of them).  A month stays a name when something marks a person ("I told April"); a short
# form only when a day number stands beside it ("Jan 5"), as "Jan" and "Mar" are also names
# and words.  Relative words around it ("last June", "early March") name no more.
_MONTHS = word_set(
    "january february march april june july august september sept october november december"
)
_MONTH_SHORT = word_set("jan feb mar apr jun jul aug sep oct nov dec")
_DAYS = word_set("mondays tuesdays wednesdays thursdays fridays saturdays sundays weekend weekends")
_WHEN_WORDS = word_set("last next early late mid this every each since until till by")
_DAY_NUMBER = re.compile(r"(?<!\s)\s*\d{1,4}\b")  # never from inside a run of spaces
_ORG_SUFFIXES = word_set("inc corp ltd llc gmbh university company foundation labs group")
_POS_TYPES = {"nr": "person", "nrfg": "person", "nrt": "org", "ns": "place", "nt": "org"}
_POS_TYPES |= {"nz": "concept", "n": "concept"}

# Linear time on any input (issue 29: one 16k-character token took 15.7 s): a pattern whose
# match may begin inside a run of its own characters, then scans to the run's end and fails,
# costs run length squared.  So each of these starts only where such a run starts (the
# lookbehinds) or at a separator it cannot cross back over; tests/memory/test_entities_linear
# feeds every pattern long runs of every character class.
_URL = re.compile(r"(?:https?|ftp)://[^\s<>\"'()\[\]{}]+[^\s<>\"'()\[\]{}.,;:!?]")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_HANDLE = re.compile(r"(?<![\w@])[@#][\w][\w.-]*\w|(?<![\w@])[@#]\w")
# Starts: after a non-path character, at "~", or at the second "/" of "//" (the old pattern
# found "/b/c" in "a//b/c"; a start after one "/" would rescan "-/-/-/..." from every "-").
_PATH = re.compile(r"(?:(?<![\w.~/-])|(?=~)|(?<=/)(?=/))~?/?(?:[\w.-]+/)+[\w.-]*\w")
# A run this long of URL/base64/hex characters is a blob (a key, an encoded file), never a
# name: blanked before anything else reads it, so it yields no entities (a 120k-character
# base64 paste gave a thousand junk ones).
MAX_TOKEN = 256
_BLOB_CHAR = r"[A-Za-z0-9+/=_.:%~?&#-]"
_BLOB = re.compile(rf"(?<!{_BLOB_CHAR}){_BLOB_CHAR}{{{MAX_TOKEN},}}")
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
# The name (group 1) starts after any leading dots: ".agg(" in "df.sum().agg(" is a call.
_CALL = re.compile(r"(?<![\w.])\.*([A-Za-z_][\w.]*)(?=\()")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b")
_SNAKE = re.compile(r"\b_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*\b")
_CAMEL = re.compile(
    r"\b[a-z]+[0-9]*(?:[A-Z][a-z0-9]*)+\b"  # camelCase
    r"|\b(?:[A-Z][a-z0-9]+){2,}\b"  # PascalCase
    r"|\b[A-Z]{2,}[a-z0-9]*(?:[A-Z][a-z0-9]+)+\b"  # HTTPServer
)
_PROPER = re.compile(r"(?<![\w.])[A-Z][\w'&-]*(?:[ \t]+[A-Z][\w'&-]*)*")
_WORD = re.compile(r"[A-Za-z][\w.]*")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_SENTENCE_END = frozenset(".!?。！？\n:;-*>\"'(")
_HONORIFIC = re.compile(r"\b(?:mr|mrs|ms|dr|prof|st)\.$", re.IGNORECASE)
_PERSON_BEFORE = re.compile(
    r"\b(?:mr|mrs|ms|dr|prof|with|told|ask|asked|thank|thanks|cc|hello|hi|hey|dear)\.?,?\s+$"
)
_PERSON_AFTER = re.compile(r"^\s*(?:'s\b|said|says|asked|told|wants|likes|prefers|thinks|wrote)")
_PLACE_BEFORE = re.compile(r"\b(?:in|at|to|from|near|visit|visited)\s+$")

MAX_ALIASES = 16
"""Spellings of one entity kept from one text (beyond them, a text is playing games)."""
_CONTEXT = 24
"""Characters around a name that :func:`_name_kind` and :func:`_at_sentence_start` read."""

_pos_lock = threading.Lock()
_pos_cut: Callable[..., list[Any]] | None = None


def normalize_name(name: str) -> str:
    """The key of an entity: NFKC, case-folded, spaces collapsed, outer punctuation gone."""
    text = " ".join(unicodedata.normalize("NFKC", name).casefold().split())
    start, end = 0, len(text)
    while start < end and _is_punct(text[start]):
        start += 1
    while end > start and _is_punct(text[end - 1]):
        end -= 1
    return text[start:end]


def _is_punct(char: str) -> bool:
    # "_" is punctuation to Unicode but part of identifiers such as "__init__".
    return char != "_" and unicodedata.category(char)[0] in "PS"


def _pos_segmenter() -> Callable[..., list[Any]]:
    global _pos_cut
    if _pos_cut is None:
        with _pos_lock:
            if _pos_cut is None:
                load_jieba()
                import jieba.posseg

                _pos_cut = jieba.posseg.lcut
    return _pos_cut


class _Collector:
    """Candidates in order of discovery, de-duplicated by normalised name."""

    def __init__(self) -> None:
        self.records: dict[str, EntityRecord] = {}
        self._spellings: dict[str, set[str]] = {}

    def add(self, display: str, kind: str) -> None:
        display = display.strip()
        name = normalize_name(display)
        if _is_junk(name):
            return
        if name in TECHNOLOGIES:
            kind = "technology"
        known = self.records.get(name)
        if known is None:
            self.records[name] = EntityRecord(name=name, type=kind, display=display)
            self._spellings[name] = {display}
            return
        spellings = self._spellings[name]
        # A set, and a cap: "aB", "Ab", "AB"... thousands of spellings are no aliases.
        if display not in spellings and len(known.aliases) < MAX_ALIASES:
            spellings.add(display)
            known.aliases.append(display)


def _is_junk(name: str) -> bool:
    bare = name.lstrip("@#")
    if bare.split("'")[0] in _NOT_NAMES:  # "I've", "It's" opening sentences
        return True
    return len(bare) < 2 or is_number(bare) or name in _NOT_NAMES or name in ("e.g", "i.e")


def _dotted_kind(name: str) -> str:
    last = name.rsplit(".", 1)[-1].lower()
    if last in _FILE_EXTS:
        return "file"
    return "url" if last in _TLDS and "_" not in name else "identifier"


def _structured(work: str, out: _Collector) -> str:
    """Record URLs, emails, tags, paths and code; return ``work`` with them blanked out."""

    def take(pattern: re.Pattern[str], kind: Callable[[str], str], group: int = 0) -> None:
        nonlocal work

        def record(match: re.Match[str]) -> str:
            out.add(match.group(group), kind(match.group(group)))
            return " " * len(match.group())

        work = pattern.sub(record, work)

    take(_URL, lambda _: "url")
    take(_EMAIL, lambda _: "person")
    take(_HANDLE, lambda s: "person" if s.startswith("@") else "concept")
    take(_PATH, lambda _: "file")
    take(_BACKTICK, lambda s: _dotted_kind(s) if "." in s else "identifier", group=1)
    take(_CALL, lambda _: "identifier", group=1)
    take(_DOTTED, _dotted_kind)
    take(_SNAKE, lambda _: "identifier")
    take(_CAMEL, lambda _: "identifier")
    return work


def _trimmed_names(work: str) -> Iterator[tuple[int, str]]:
    """Capitalised word runs with leading/trailing non-name words removed: (start, text)."""
    for match in _PROPER.finditer(work):
        words = match.group().split()
        offsets = [m.start() + match.start() for m in re.finditer(r"\S+", match.group())]
        # Indices, not slices: "The The The ..." would copy the list once per word.
        first, last = 0, len(words)
        while first < last and normalize_name(words[first]) in _NOT_NAMES:
            first += 1
        while last > first and normalize_name(words[last - 1]) in _NOT_NAMES:
            last -= 1
        if first < last:
            yield offsets[first], " ".join(words[first:last])


def _at_sentence_start(work: str, start: int) -> bool:
    # Walk back over blanks by index (never copy or search all the text before each name:
    # that is quadratic in names); the blanks before different names do not overlap.
    end = start
    while end > 0 and work[end - 1] in " \t":
        end -= 1
    before = work[max(0, end - _CONTEXT) : end]
    if _HONORIFIC.search(before):  # "Dr. Smith": the dot ends an abbreviation, not a sentence
        return False
    return not before or before[-1] in _SENTENCE_END


def _name_kind(work: str, start: int, name: str) -> str:
    # After the blanks (an email blanked out leaves a long run), by index: the blanks after
    # different names do not overlap, so this stays linear in the text.
    end = start + len(name)
    while end < len(work) and work[end].isspace():
        end += 1
    before, after = work[max(0, start - 12) : start].lower(), work[end : end + _CONTEXT]
    if name.split()[-1].lower().rstrip(".") in _ORG_SUFFIXES:
        return "org"
    if _PERSON_BEFORE.search(before) or _PERSON_AFTER.match(after):
        return "person"
    if _PLACE_BEFORE.search(before):
        return "place"
    return "concept"


def _proper_nouns(work: str, out: _Collector) -> None:
    found = list(_trimmed_names(work))
    counts: dict[str, int] = {}
    for _, name in found:
        counts[normalize_name(name)] = counts.get(normalize_name(name), 0) + 1
    for start, name in found:
        # A lone capitalised word opening a sentence is usually just grammar.
        lone_opener = " " not in name and _at_sentence_start(work, start)
        if lone_opener and counts[normalize_name(name)] == 1:
            continue
        kind = _name_kind(work, start, name)
        if not _names_a_time(work, start, name, kind):
            out.add(name, kind)


def _names_a_time(work: str, start: int, name: str, kind: str) -> bool:
    """Whether ``name`` (at ``start`` of ``work``) is a month or weekdays, not a name."""
    core = [word for word in normalize_name(name).split() if word not in _WHEN_WORDS]
    if len(core) != 1:
        return False
    word = core[0]
    if word in _DAYS:
        return True
    if word in _MONTHS:
        return kind != "person"
    if word in _MONTH_SHORT:
        before = work[max(0, start - 6) : start]
        return bool(_DAY_NUMBER.match(work, start + len(name)) or re.search(r"\d\s*$", before))
    return False


def _technologies(work: str, out: _Collector) -> None:
    """Known technologies written in lower case ("we use sqlite")."""
    for match in _WORD.finditer(work):
        if match.group().lower() in TECHNOLOGIES:
            out.add(match.group(), "technology")


def _chinese(text: str, out: _Collector) -> None:
    runs = _HAN_RUN.findall(text)
    if not runs:
        return
    cut = _pos_segmenter()
    for run in runs:
        for pair in cut(run, HMM=False):
            kind = _POS_TYPES.get(pair.flag)
            if kind is not None and len(pair.word) >= 2:
                out.add(pair.word, kind)


def extract_entities(text: str) -> list[EntityRecord]:
    """Entities mentioned in ``text``, de-duplicated by :func:`normalize_name`, in order."""
    out = _Collector()
    work = _BLOB.sub(" ", unicodedata.normalize("NFKC", text))
    work = _structured(work, out)
    _proper_nouns(work, out)
    _technologies(work, out)
    _chinese(work, out)
    return list(out.records.values())
