"""Tokenising text for keyword search: numbers, dates, identifiers, paths and Chinese words.

Stock full-text tokenisers drop digits and split identifiers, so ``404``, ``user3`` or
``2024-05-01`` become unsearchable.  :func:`tokenize` emits the terms we want to match
ourselves; the keyword index stores them space-joined and only splits on spaces.

A compound term (a date, a path, ``snake_case``, ``camelCase``) is emitted whole *and* as its
parts: the whole term is rare, so BM25 ranks exact matches first, while the parts still let a
partial query (``main.py``, ``camel``) find it.  A hyphenated word is also emitted joined
("de-stress" -> ``destress``, "well-being" -> ``wellbeing``): both are written (on the dev
sets "de-stress" and "destress", "start-up" and "startup", "non-profit" and "nonprofit").

Chinese is segmented with jieba's *search* mode (``lcut_for_search``): it yields the
dictionary words plus their shorter in-dictionary sub-words (``中华人民共和国`` also gives
``人民``, ``共和国``), so a query for a short word finds a document where precise mode would
have kept one long word.  Index and query are segmented the same way, so the extra sub-words
cost only a little precision, which BM25's length normalisation absorbs.

With ``stems`` (the memory's keyword index; the knowledge base keeps exact words), an
English word is also emitted as its Snowball stem when that differs (``painted`` ->
``painted paint``), so "paint" finds "painted" and "studies" finds "study". The word itself
stays, so exact forms still rank first and an index written before stems existed keeps
matching. Measured on the LoCoMo dev conversations (BM25 alone, R@10): words only 0.606,
stems replacing words 0.647, word plus stem 0.641 (kept: no re-index of old stores).

A British spelling is stemmed as its American one (``favourite`` -> ``favorit``, the stem of
``favorite``; ``colour`` -> ``color``; ``organised`` -> ``organiz``): people who write one
spelling talk with people, and models, who write the other, and a user's "my favourite
colour" must be found by "favorite color".  The table is breame's 1,730 British words with
their American spelling (the word-by-word list of dual spellings, Apache-2.0); a word in one
spelling only, or in both, stays as it is.
Words Snowball leaves apart from the word a question asks with are stemmed as that word
(the tables of :mod:`shiyi.index.word_forms`): an irregular verb's past as its base form
("bought" -> ``buy``, "went" -> ``go``: "What did Sam buy?" meets "I bought"), an irregular
plural as its singular ("children" -> ``child``; on the dev sets "children" and "child" are
about as common, 114 and 97 turns, and questions ask with either), the family words people
chat in as the plain ones ("kids" -> ``child``, "mom" -> ``mother``: LoCoMo dev turns say
"kids" 74 times and "children" once, its questions "children" or "child" 12 times), and the
short forms people type ("bday" -> ``birthday``, "pic" -> ``pictur``, "bf" -> ``boyfriend``).
A word before "n't" is no verb form ("won't" does not say "win").
A word stretched as people stretch words in a chat ("loooove", "sooo goooood", "yesss") is
also indexed as the English words it can be (:func:`shiyi.index.english.unstretched`: "love";
"so"; "good" and "god"), and stemmed as they are ("loooved" -> ``loved love``), so "What does
Jo love?" meets "i loooove it".  The LoCoMo dev turns stretch 2 words in 1,451 turns; people
chatting on a phone stretch many more.
Spelling them out for the embedding as well was measured and left out: on the LoCoMo dev
conversations MiniLM alone went 0.502 -> 0.498 at R@10, hybrid 0.786 / 0.832 -> 0.788 /
0.829 at R@10 / R@20 (its turns are model-written; "pic" and "congrats" are most of theirs).

jieba loads its dictionary on first use (~0.5-1 s); call :func:`warm_up` at start-up to pay
that in a background thread instead of on the first message.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache

from shiyi.index.english import is_stretched, unstretched
from shiyi.index.word_forms import WORD_FORMS

_HAN = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_RUN = re.compile(f"[{_HAN}]+")

# Order matters: the first alternative that matches at a position wins.  Linear time: the
# email and path alternatives begin only where a run of their characters begins (or at a
# "~" or "/"), as an attempt from inside a run would rescan it to its end (issue 29: a run of
# 16k "-" took seconds); a run an earlier token stopped inside is read as words.
_TOKEN = re.compile(
    r"(?P<url>(?:https?|ftp)://[^\s<>\"'()\[\]{}]+|www\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'()]*)"
    r"|(?P<email>(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<date>\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)|\d{1,2}:\d{2}(?::\d{2})?(?!\d))"
    r"|(?P<path>(?:(?<![\w.-])|(?=[~/])|(?=\.{1,2}/))(?:~|\.{1,2})?/?[\w.-]+(?:/[\w.-]+)+/?|/[\w.-]+)"
    r"|(?P<word>\w+(?:[.\-]\w+)*)"
)
_NEGATION = re.compile(r"['’]t\b")
"""What follows "won" in "won't" (and "don" in "don't"): the word before is no word of its own."""
_SEPARATORS = re.compile(r"[._\-/@:+~]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def word_set(words: str) -> frozenset[str]:
    """A set from a whitespace-separated list, which reads better than quoted literals."""
    return frozenset(words.split())


STOP_WORDS: frozenset[str] = word_set(
    """
    a an the and or but if of to in on at by for with from as into about over than then
    is are was were be been being am do does did done have has had i me my we our you your
    he him his she her it its they them their this that these those there here what which
    who whom how why when where so not no yes can could will would shall should may might
    must just also very too up out off s t re ve ll d m e.g i.e etc
    的 了 是 在 和 与 及 或 也 就 都 而 着 过 吗 呢 吧 啊 呀 嘛 哦 我 你 他 她 它 们 我们 你们 他们
    这 那 这个 那个 这些 那些 之 把 被 让 给 对 从 向 以 于 并 但 还 又 很 就是 一个 一下 有 没有 不
    """
)

_log = logging.getLogger(__name__)
_STEMMABLE = re.compile(r"[a-z]{4,}")
# Shorter words are left alone ("was" is not "wa").
_stemmer_lock = threading.Lock()
_stem_words: Callable[[str], str] | None = None
_american: dict[str, str] | None = None
_jieba_lock = threading.Lock()
_cut_for_search: Callable[[str], list[str]] | None = None


def _segmenter() -> Callable[[str], list[str]]:
    """jieba's search-mode cutter, loading the dictionary once (thread-safe, quiet)."""
    global _cut_for_search
    if _cut_for_search is None:
        with _jieba_lock:
            if _cut_for_search is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _cut_for_search = jieba.lcut_for_search
    return _cut_for_search


def load_jieba() -> None:
    """Load jieba's dictionary now (blocking, ~0.5-1 s the first time, then free)."""
    _segmenter()


def warm_up() -> threading.Thread:
    """Load jieba (and its POS tagger, used by entity extraction) in a daemon thread so the
    first real message does not wait for the dictionary."""

    def run() -> None:
        try:
            _segmenter()
            import jieba.posseg  # noqa: F401  (its import loads the tagger's tables)
        except Exception:  # a warm-up failure must not kill start-up; first use retries
            _log.warning("jieba warm-up failed", exc_info=True)

    thread = threading.Thread(target=run, name="shiyi-jieba-warmup", daemon=True)
    thread.start()
    return thread


def is_number(term: str) -> bool:
    """Numbers are never stop words and are kept even when one character long."""
    return _NUMBER.fullmatch(term) is not None


def _keep(term: str) -> bool:
    if not term:
        return False
    if is_number(term):
        return True
    if term in STOP_WORDS:
        return False
    # A lone ASCII letter carries no meaning to search for ("x", "e" from "e.g").
    return not (len(term) == 1 and term.isascii())


def _camel_parts(word: str) -> list[str]:
    return [p for p in _CAMEL_BOUNDARY.split(word) if p]


def _word_terms(word: str) -> Iterator[str]:
    """A word or identifier: itself, then its separator parts and their camelCase parts."""
    yield word
    parts = [p for p in _SEPARATORS.split(word) if p]
    if is_number(word) and len(parts) < 3:
        return  # "3.14" is one number; "1.2.3" versions fall through and are split
    for part in parts if len(parts) > 1 else []:
        yield part
    for part in parts:
        camel = _camel_parts(part)
        if len(camel) > 1:
            yield from camel


def _path_terms(path: str) -> Iterator[str]:
    """``src/app/main.py`` -> itself, each segment (``main.py``) and its parts (``main``)."""
    stripped = path.strip("/")
    if stripped:
        yield path.rstrip("/")
    for segment in stripped.split("/"):
        if segment not in ("", ".", "..", "~"):
            yield from _word_terms(segment)


def _url_terms(url: str) -> Iterator[str]:
    """The host (``github.com``) and its name without ``www.``; then the path's words."""
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    host = host.split("@")[-1].split(":")[0]
    yield host
    if host.startswith("www."):
        yield host[4:]
    labels = host.split(".")
    if len(labels) >= 2:
        yield labels[-2]  # "github" from "github.com"
    for match in re.finditer(r"\w+(?:[.\-]\w+)*", path.split("?")[0]):
        yield from _word_terms(match.group())


def _email_terms(email: str) -> Iterator[str]:
    local, _, domain = email.partition("@")
    yield email
    yield local
    yield domain


def _date_terms(date: str) -> Iterator[str]:
    yield date
    yield from (p for p in re.split(r"[-/.:]", date) if p)


_EXPANDERS: dict[str, Callable[[str], Iterator[str]]] = {
    "url": _url_terms,
    "email": _email_terms,
    "date": _date_terms,
    "path": _path_terms,
    "word": _word_terms,
}


def _stemmer() -> Callable[[str], str]:
    """PyStemmer's English Snowball stemmer (C, with its own cache), loaded once."""
    global _stem_words
    if _stem_words is None:
        with _stemmer_lock:
            if _stem_words is None:
                import Stemmer

                _stem_words = Stemmer.Stemmer("english").stemWord
    return _stem_words


_WORD_FORMS: dict[str, str] = WORD_FORMS


def _spelled_american(lower: str) -> str:
    """The American spelling of a British word ("colour" -> "color"); others as they are."""
    global _american
    if _american is None:
        from breame.data.spelling_constants import BRITISH_ENGLISH_SPELLINGS

        _american = BRITISH_ENGLISH_SPELLINGS
    return _american.get(lower, lower)


def is_british(lower: str) -> bool:
    """Whether ``lower`` is a British spelling of an American word ("colour", "organise")."""
    return _spelled_american(lower) != lower


def _root(lower: str) -> str:
    """The stem of a lower-case word of four letters or more (or of :data:`_WORD_FORMS`),
    spelled the American way."""
    return _stemmer()(_WORD_FORMS.get(lower) or _spelled_american(lower))


def _stemmable(lower: str) -> bool:
    return _STEMMABLE.fullmatch(lower) is not None or lower in _WORD_FORMS


def stem_word(word: str) -> str:
    """The Snowball stem of an English word, lower-cased (short words stay whole), British
    spellings stemmed as American ones ("favourite" and "favorite" both give "favorit"), an
    irregular plural as its singular ("children" gives "child"), a family word or a chat
    short form as the plain one ("kids" gives "child", "mom" "mother", "bday" "birthday")."""
    lower = word.lower()
    return _root(lower) if _stemmable(lower) else lower


def _latin_terms(chunk: str, stems: bool) -> Iterator[str]:
    """The kept terms of a chunk without Han characters, token by token."""
    for match in _TOKEN.finditer(chunk):
        kind = match.lastgroup or "word"
        word = match.group()
        if kind == "word":
            # what follows the word matters only to its stem ("won" in "won't" is none)
            negated = stems and _NEGATION.match(chunk, match.end()) is not None
            read = _word_token_terms if len(word) <= CACHED_WORD_CHARS else _expanded
            yield from read(word, stems, negated)
        else:
            yield from (term for term in map(str.lower, _EXPANDERS[kind](word)) if _keep(term))


CACHED_WORD_CHARS = 32
"""Words up to this long are expanded once and kept (at most 16,384 of them, a few MB);
longer tokens (a hash, a base64 blob in a tool result) are rarely seen twice, and keeping
them would let one pasted blob fill memory."""


def _expanded(word: str, stems: bool, negated: bool) -> tuple[str, ...]:
    """The kept terms of one word token: they depend on the word alone (and, for its stem,
    on whether a negation follows)."""
    lower = word.lower()
    # Case is needed to split camelCase, so lower-case only after expanding.
    terms = [term.lower() for term in _word_terms(word)]
    # Only plain words ("Painted", "studies", a shouted "PAINTED"): identifiers and their
    # parts stay exact ("getUser", "parse_config").
    # A stop word's stem is no term either ("does" -> "doe", "very" -> "veri" matched every
    # "does" and "very" as a content word would).
    if stems and not negated and _stemmable(lower) and _cased_as_a_word(word) and _keep(lower):
        root = _root(lower)
        if root != lower:
            terms.append(root)
    if "-" in word:
        terms += _joined(lower, stems)
    if is_stretched(lower):
        terms += _unstretched_terms(lower, stems)
    return tuple(term for term in terms if _keep(term))


_word_token_terms = lru_cache(maxsize=16384)(_expanded)
"""Each distinct word expanded once: expanding every occurrence cost ~7 us a word; the LoCoMo
and RealMem dev turns tokenize 2.5x as fast so, and ``keyword_bench.py`` indexes 1.1-1.2x as
fast (2026-12-06)."""


def _unstretched_terms(word: str, stems: bool) -> Iterator[str]:
    """The English words a stretched word can be ("loooove" -> "love"), each with its stem."""
    for reading in unstretched(word):
        yield reading
        if stems and _stemmable(reading):
            root = _root(reading)
            if root != reading:
                yield root


def _cased_as_a_word(word: str) -> bool:
    """Lower case after the first letter ("Painted", "studies"), or all capitals ("PAINTED":
    people shout in chats), not camelCase or mixed ("getUser", "iPhone")."""
    return word[1:].islower() or word.isupper()


def _joined(word: str, stems: bool) -> Iterator[str]:
    """A hyphenated word written as one ("de-stress" -> "destress", "co-workers" ->
    "coworkers" and its stem): people write both, and the parts alone ("de", "co") miss."""
    parts = word.split("-")
    if len(parts) < 2 or not all(part.isalpha() and part.isascii() for part in parts):
        return
    if len(set(parts)) == 1:
        return  # a reduplication ("so-so"; Indonesian "hal-hal", things) is never one word
    joined = "".join(parts)
    yield joined
    if stems and _stemmable(joined):
        root = _root(joined)
        if root != joined:
            yield root


def _han_terms(run: str) -> Iterator[str]:
    """jieba's words and, for a word it guessed (not in its dictionary: its HMM joins unknown
    characters), that word's dictionary pieces too.  The guess keeps names whole ("李小红")
    but also glues a character to its neighbour in one text and not in another ("这周画了"
    -> "周画", "9日画了" -> "日画", while "画" alone is the query's word): with the pieces,
    both still share "画", and a name still matches when segmented otherwise ("李小红二")."""
    for word in _segmenter()(run):
        yield word
        if len(word) > 1:
            yield from _guessed_pieces(word)


@lru_cache(maxsize=65536)
def _guessed_pieces(word: str) -> tuple[str, ...]:
    """The dictionary pieces of a word jieba guessed; nothing for a word in its dictionary."""
    import jieba

    if jieba.dt.FREQ.get(word):
        return ()
    return tuple(jieba.lcut(word, HMM=False))


MAX_HAN_RUN = 256
"""Characters of one unbroken Han run given to jieba at a time.  jieba's time grows with the
square of a run it cannot place in its dictionary: 20,000 characters without punctuation took
1.1-2.9 s, 100,000 took 40 s, in the reply path (a pasted text is searched as the query) and
in the worker.  Written Chinese breaks a run with punctuation every few dozen characters, so
a cut at 256 only ever splits text nobody wrote as sentences."""


def _chunks(text: str) -> Iterator[tuple[bool, str]]:
    """Split text into (is_han, chunk): Han runs go to jieba, at most :data:`MAX_HAN_RUN`
    characters at a time, the rest to the regexes."""
    position = 0
    for match in _HAN_RUN.finditer(text):
        if match.start() > position:
            yield False, text[position : match.start()]
        run = match.group()
        for start in range(0, len(run), MAX_HAN_RUN):
            yield True, run[start : start + MAX_HAN_RUN]
        position = match.end()
    if position < len(text):
        yield False, text[position:]


def tokenize(text: str, *, stems: bool = False) -> list[str]:
    """Lower-cased search terms of ``text`` in order, repeats kept (they feed BM25's tf);
    with ``stems``, each plain English word is followed by its stem when that differs (a
    British spelling's stem is its American spelling's)."""
    # NFKC folds full-width digits and letters ("２０２４", "ＡＰＩ") to ASCII.
    normal = unicodedata.normalize("NFKC", text)
    terms: list[str] = []
    for is_han, chunk in _chunks(normal):
        if is_han:
            terms.extend(term for term in _han_terms(chunk) if _keep(term))
        else:
            terms.extend(_latin_terms(chunk, stems))  # kept already
    return terms


def query_terms(text: str, *, stems: bool = False) -> list[str]:
    """The distinct terms of a query, in first-seen order."""
    return list(dict.fromkeys(tokenize(text, stems=stems)))
