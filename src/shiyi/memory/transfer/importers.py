"""Import conversations from outside shiyi: a simple JSONL transcript, the LoCoMo format, or
a ChatGPT or Claude data export (:mod:`shiyi.memory.transfer.import_formats`).

Imported turns become :class:`EventRecord` s with ``segment_type="imported"``:

* ``role`` is the speaker's name, lower-cased (``EventRecord.role`` is a free string), and
  ``content`` is the turn's text unchanged;
* ``ts`` keeps the original time as epoch seconds (timezone-less times are taken as UTC);
* ids are deterministic, so importing the same file twice yields the same ids.

LoCoMo event ids are ``"<sample_id>:<dia_id>"`` (see :func:`locomo_event_id`) so a benchmark
can map a question's evidence dia_ids to events.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shiyi.errors import ImportFormatError
from shiyi.memory.models import EventRecord
from shiyi.memory.transfer.import_formats import chatgpt, claude
from shiyi.memory.transfer.import_formats.records import (
    ImportedConversation as ImportedConversation,
)
from shiyi.memory.transfer.import_formats.records import QAItem as QAItem
from shiyi.memory.transfer.import_formats.records import make_event

_LOCOMO_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %B %Y", "%I:%M %p on %d %b, %Y")
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def _fail(path: Path, where: str, expected: str) -> ImportFormatError:
    return ImportFormatError(f"{path}: {where}: expected {expected}")


# ---------------------------------------------------------------------------------------- JSONL


def _parse_timestamp(value: object, path: Path, where: str) -> float:
    if isinstance(value, bool):
        raise _fail(path, where, "'timestamp' as ISO-8601 text or epoch seconds")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise _fail(path, where, f"ISO-8601 'timestamp', got {value!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    raise _fail(path, where, "'timestamp' as ISO-8601 text or epoch seconds")


def _read_jsonl_line(path: Path, line_no: int, line: str) -> dict[str, Any]:
    where = f"line {line_no}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise _fail(path, where, f"one JSON object per line ({exc.msg})") from None
    if not isinstance(record, dict):
        raise _fail(path, where, "a JSON object with 'speaker', 'text' and 'timestamp'")
    if record.get("node") in ("event", "fact"):
        raise ImportFormatError(
            f"{path}: {where}: this is a `shiyi memory export` file (turns and facts as "
            "stored), which `shiyi memory import` does not read back: it imports "
            "conversations. To move or back up a memory, copy the whole data dir while no "
            "shiyi process runs (or `shiyi memory migrate` it to PostgreSQL)"
        )
    for key in ("speaker", "text"):
        if not isinstance(record.get(key), str):
            raise _fail(path, where, f"a string {key!r}")
    if "timestamp" not in record:
        raise _fail(path, where, "a 'timestamp'")
    return record


def _jsonl_event_id(session: str, line_no: int) -> str:
    digest = hashlib.sha1(f"{session}\n{line_no}".encode()).hexdigest()
    return "imp_" + digest[:20]


def load_jsonl(path: Path, *, session_id: str | None = None) -> list[ImportedConversation]:
    """Load ``{"speaker", "text", "timestamp", "session"?, "dia_id"?}`` lines.

    Lines are grouped into conversations by ``"session"`` (default: ``session_id`` or the
    file's stem).  A run is one calendar day (UTC) of a conversation: ``run_id`` is
    ``"<session>:<YYYY-MM-DD>"`` and ``iteration`` the turn's index within that run.  Ids are
    ``"<session>:<dia_id>"`` when a line has a ``dia_id``, else ``"imp_" + sha1(session, line)``.
    """
    path = Path(path)
    default_session = session_id or path.stem
    conversations: dict[str, ImportedConversation] = {}
    run_turns: dict[str, int] = {}
    for line_no, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        record = _read_jsonl_line(path, line_no, line)
        session = str(record.get("session") or default_session)
        ts = _parse_timestamp(record["timestamp"], path, f"line {line_no}")
        run_id = f"{session}:{datetime.fromtimestamp(ts, UTC).date().isoformat()}"
        dia_id = record.get("dia_id")
        event_id = f"{session}:{dia_id}" if dia_id else _jsonl_event_id(session, line_no)
        iteration = run_turns.get(run_id, 0)
        run_turns[run_id] = iteration + 1
        conversation = conversations.setdefault(
            session, ImportedConversation(session_id=session, title=session, events=[])
        )
        conversation.events.append(
            make_event(event_id, session, run_id, ts, record["speaker"], record["text"], iteration)
        )
    return list(conversations.values())


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise _fail(path, "file", "UTF-8 text") from None


# --------------------------------------------------------------------------------------- LoCoMo


def locomo_event_id(sample_id: str, dia_id: str) -> str:
    """The event id of LoCoMo turn ``dia_id`` (e.g. ``"D1:3"``) in sample ``sample_id``."""
    return f"{sample_id}:{dia_id}"


def parse_locomo_date(text: str) -> float:
    """``"1:56 pm on 8 May, 2023"`` -> epoch seconds (UTC). Raises ``ValueError``."""
    cleaned = " ".join(text.split())
    for fmt in _LOCOMO_DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC).timestamp()
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date {text!r}")


def _session_numbers(conversation: dict[str, Any]) -> list[int]:
    numbers = []
    for key in conversation:
        match = _SESSION_KEY.match(key)
        if match:
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def _session_start(conversation: dict[str, Any], number: int, path: Path, where: str) -> float:
    key = f"session_{number}_date_time"
    value = conversation.get(key)
    if not isinstance(value, str):
        raise _fail(path, f"{where}.{key}", "a date like '1:56 pm on 8 May, 2023'")
    try:
        return parse_locomo_date(value)
    except ValueError:
        expected = f"a date like '1:56 pm on 8 May, 2023', got {value!r}"
        raise _fail(path, f"{where}.{key}", expected) from None


def _turn_text(turn: dict[str, Any]) -> str:
    text = str(turn["text"])
    caption = turn.get("blip_caption")
    return f"{text} [shared an image: {caption}]" if isinstance(caption, str) and caption else text


def _locomo_session(
    conversation: dict[str, Any], number: int, sample_id: str, path: Path, where: str
) -> list[EventRecord]:
    key = f"session_{number}"
    turns = conversation[key]
    if not isinstance(turns, list):
        raise _fail(path, f"{where}.{key}", "a list of turns")
    start = _session_start(conversation, number, path, where)
    run_id = f"{sample_id}:{key}"
    events = []
    for index, turn in enumerate(turns):
        turn_where = f"{where}.{key}[{index}]"
        if not isinstance(turn, dict):
            raise _fail(path, turn_where, "an object with 'speaker', 'dia_id' and 'text'")
        for field_name in ("speaker", "dia_id", "text"):
            if not isinstance(turn.get(field_name), str):
                raise _fail(path, turn_where, f"a string {field_name!r}")
        event_id = locomo_event_id(sample_id, turn["dia_id"])
        events.append(
            make_event(
                event_id, sample_id, run_id, start + index, turn["speaker"], _turn_text(turn), index
            )
        )
    return events


def _split_evidence(raw: object, path: Path, where: str) -> list[str]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise _fail(path, f"{where}.evidence", "a list of dia_id strings like 'D1:3'")
    parts = (piece.strip() for item in raw for piece in re.split(r"[;,]", item))
    return [piece for piece in parts if piece]


def _qa_item(item: object, path: Path, where: str) -> QAItem:
    if not isinstance(item, dict) or not isinstance(item.get("question"), str):
        raise _fail(path, where, "an object with a string 'question'")
    answer = item.get("answer", item.get("adversarial_answer"))
    if answer is None:
        raise _fail(path, where, "an 'answer' or 'adversarial_answer'")
    category = item.get("category", 0)
    if not isinstance(category, int | str) or isinstance(category, bool):
        raise _fail(path, f"{where}.category", "an integer or string category")
    evidence = _split_evidence(item.get("evidence"), path, where)
    return QAItem(item["question"], str(answer), evidence, category)


def _locomo_sample(sample: object, index: int, path: Path) -> ImportedConversation:
    where = f"sample {index}"
    if not isinstance(sample, dict):
        raise _fail(path, where, "an object with 'conversation' and 'qa'")
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        raise _fail(path, f"{where}.conversation", "an object with speaker_a/b and session_N")
    sample_id = str(sample.get("sample_id") or f"sample_{index}")
    numbers = _session_numbers(conversation)
    if not numbers:
        raise _fail(path, f"{where}.conversation", "at least one 'session_N' list of turns")
    events: list[EventRecord] = []
    for number in numbers:
        events.extend(_locomo_session(conversation, number, sample_id, path, where))
    qa_raw = sample.get("qa", [])
    if not isinstance(qa_raw, list):
        raise _fail(path, f"{where}.qa", "a list of question objects")
    qa = [_qa_item(item, path, f"{where}.qa[{i}]") for i, item in enumerate(qa_raw)]
    speakers = [str(conversation.get(k, "")) for k in ("speaker_a", "speaker_b")]
    title = " & ".join(name for name in speakers if name) or sample_id
    return ImportedConversation(session_id=sample_id, title=title, events=events, qa=qa)


def load_locomo(path: Path) -> list[ImportedConversation]:
    """Load a LoCoMo file: a JSON list of samples (a single sample object is accepted too)."""
    path = Path(path)
    return _locomo_from(_read_json(path), path)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise _fail(path, f"line {exc.lineno}", f"valid JSON ({exc.msg})") from None


def _locomo_from(data: Any, path: Path) -> list[ImportedConversation]:
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise _fail(path, "top level", "a JSON list of LoCoMo samples")
    return [_locomo_sample(sample, index, path) for index, sample in enumerate(data)]


FORMATS = (
    "JSONL lines ({speaker, text, timestamp})",
    "a LoCoMo JSON list (samples with a 'conversation')",
    "a ChatGPT export's conversations.json (conversations with a 'mapping')",
    "a Claude export's conversations.json (conversations with 'chat_messages')",
)


def detect_and_load(path: Path | str) -> list[ImportedConversation]:
    """Load ``path`` in whichever format it is: JSONL (``.jsonl``/``.ndjson`` or one object
    per line), LoCoMo, or a ChatGPT or Claude export (told apart by their first conversation)."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return load_jsonl(path)
    head = _read_text(path).lstrip()
    if head.startswith("{"):
        first_line = head.split("\n", 1)[0]
        try:
            first = json.loads(first_line)
        except json.JSONDecodeError:
            first = None
        if isinstance(first, dict) and "speaker" in first:
            return load_jsonl(path)
    if not head.startswith(("[", "{")):
        raise _fail(path, "start of file", _understood())
    data = _read_json(path)
    items = data.get("conversations", data) if isinstance(data, dict) else data
    sample = items[0] if isinstance(items, list) and items else items
    if isinstance(items, list) and chatgpt.looks_like(sample):
        return chatgpt.load(items, path)
    if isinstance(items, list) and claude.looks_like(sample):
        return claude.load(items, path)
    if isinstance(sample, dict) and ({"conversation", "qa", "sample_id"} & sample.keys()):
        return _locomo_from(data, path)
    if isinstance(items, list) and not items:
        return []
    raise _fail(path, "first conversation", _understood())


def _understood() -> str:
    return "one of the formats shiyi imports: " + "; ".join(FORMATS)
