"""`shiyi kb ...` end to end as subprocesses on a real knowledge base."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.interfaces.cli.conftest import Cli
from tests.knowledge.conftest import write_corpus


def test_add_search_list_update_remove(cli: Cli) -> None:
    docs = write_corpus(cli.workspace / "docs")
    none_yet = cli.run("kb", "search", "anything")
    assert none_yet.returncode == 1
    assert "no knowledge base in" in none_yet.stderr and "shiyi kb add PATH" in none_yet.stderr
    assert "The knowledge base is empty" in cli.run("kb", "list").stdout
    assert not (Path(cli.env["SHIYI_HOME"]) / "knowledge").exists()  # asking created nothing
    added = cli.run("kb", "add", "docs")
    assert added.returncode == 0, added.stderr
    assert "summaries: extractive" in added.stderr  # no usable fast model: offline
    assert "added: 3 chunks" in added.stderr and "docs/falcon.md" in added.stderr
    progress = [line for line in added.stderr.splitlines() if line.startswith("[")]
    assert re.match(r"\[[█░]{10}\] 1/6 files · \d+ B/\d+ KB · \d+ chunks · ", progress[0])
    assert "ETA" not in progress[0]  # the first file also loads the embedder: no estimate
    assert re.match(r"\[██████████\] 6/6 files · .* embedded · ETA 0 s  ", progress[-1])
    assert added.stdout.startswith("6 added, 0 updated, 0 unchanged, 0 failed")

    found = cli.run("kb", "search", "Which region does Project Osprey run in?", "--limit", "2")
    assert found.returncode == 0, found.stderr
    assert "rewrite:" not in found.stdout
    assert "[2] docs/osprey.md › Project Osprey › Infrastructure" in found.stdout
    assert "ap-south-1" in found.stdout
    as_json = cli.run("kb", "search", "AUTH-401", "--json", "--no-expand")
    first = json.loads(as_json.stdout.splitlines()[0])
    assert "AUTH-401" in first["text"] and first["expansion"] == "none"
    assert "keyword" in first["paths"]

    again = cli.run("kb", "add", "docs")
    assert again.stdout.startswith("0 added, 0 updated, 6 unchanged")

    docs["Falcon"].write_text("# Project Falcon\n\nFalcon now runs in zephyr-9.\n")
    updated = cli.run("kb", "add", "docs/falcon.md")
    assert updated.stdout.startswith("0 added, 1 updated")
    assert "zephyr-9" in cli.run("kb", "search", "zephyr-9", "--limit", "1").stdout
    assert "eu-west-2" not in cli.run("kb", "search", "eu-west-2 region").stdout

    docs["Heron"].unlink()
    listed = cli.run("kb", "list").stdout.splitlines()
    assert len(listed) == 6
    heron = next(line for line in listed if "heron.md" in line)
    assert "[file missing: shiyi kb remove it]" in heron
    removed = cli.run("kb", "remove", "docs/heron.md")
    assert removed.returncode == 0
    assert removed.stdout.startswith("removed d") and "docs/heron.md" in removed.stdout
    assert "heron.md" not in cli.run("kb", "list").stdout
    nothing = cli.run("kb", "remove", "docs/heron.md")
    assert nothing.returncode == 1
    assert "no document in the knowledge base matches docs/heron.md" in nothing.stderr
    cli.run("kb", "remove", "docs")
    assert "The knowledge base is empty" in cli.run("kb", "list").stdout


def test_bad_input_is_reported_and_loses_nothing(cli: Cli) -> None:
    docs = cli.workspace / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nThe launch code word is marigold.\n")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.5\nnot really a pdf")
    (docs / "data.bin").write_bytes(b"\x00\x01")
    result = cli.run("kb", "add", "docs", "missing.md", "docs/data.bin")
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("shiyi: error:")]
    assert len(errors) == 3
    assert any("broken.pdf: cannot read this PDF" in line for line in errors)
    assert any("missing.md: no such file or directory" in line for line in errors)
    assert any("data.bin: unsupported file type .bin" in line for line in errors)
    assert result.stdout.startswith("1 added, 0 updated, 0 unchanged, 3 failed, 1 skipped")
    assert "marigold" in cli.run("kb", "search", "launch code word").stdout

    (docs / "good.md").write_bytes(b"\x00\x00 overwritten by a binary")
    broken = cli.run("kb", "add", "docs/good.md")
    assert broken.returncode == 1 and "looks binary" in broken.stderr
    assert "marigold" in cli.run("kb", "search", "launch code word").stdout  # kept


def test_rewriting_with_a_scripted_fast_model(cli: Cli) -> None:
    write_corpus(cli.workspace / "docs")
    script = cli.workspace / "fast.json"
    queries = ["login authentication error fix", "AUTH-401 sign-in failure"]
    script.write_text(
        json.dumps(
            [{"tool_calls": [{"name": "search_queries", "arguments": {"queries": queries}}]}]
        )
    )
    cli.config(f"models:\n  fast:\n    provider: scripted\n    model_path: {script}\n")
    added = cli.run("kb", "add", "docs")
    assert added.returncode == 0, added.stderr
    assert "summaries: scripted" in added.stderr  # short documents: summaries stay extractive
    found = cli.run("kb", "search", "怎么修那个登录的 bug", "--limit", "1")
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[:2] == [f"rewrite: {q}" for q in queries]
    assert "[1] docs/auth.txt › auth" in found.stdout
    assert "AUTH-401" in found.stdout


def test_config_and_secrets_are_never_read_into_the_knowledge_base(cli: Cli) -> None:
    """``search_knowledge`` hands passages to the model: a ``shiyi.yaml`` ingested with the
    rest of a folder had given it the server token that ``read_file`` refuses."""
    project = cli.workspace / "project"
    (project / "sub").mkdir(parents=True)
    (project / "README.md").write_text("# Readme\n\nThe kettle is in the cupboard.\n")
    (project / "shiyi.yaml").write_text("server:\n  token: tok-SUPERSECRET-42\n")
    (project / "sub" / ".env").write_text("API_KEY=sk-hidden-77\n")
    walked = cli.run("kb", "add", "project")
    assert walked.returncode == 0, walked.stderr
    assert "not read (protected: config or secrets): project/shiyi.yaml" in walked.stderr
    assert walked.stdout.startswith("1 added, 0 updated, 0 unchanged, 0 failed")
    named = cli.run("kb", "add", "project/shiyi.yaml")
    assert named.returncode == 1 and "is not read: it is protected" in named.stderr
    for query in ("server token", "SUPERSECRET", "API_KEY"):
        found = cli.run("kb", "search", query, "--json", "--no-expand").stdout
        assert "SUPERSECRET" not in found and "sk-hidden" not in found
    assert "kettle" in cli.run("kb", "search", "kettle cupboard").stdout


def test_ctrl_c_during_a_large_file_stops_soon_and_says_what_was_kept(cli: Cli) -> None:
    import signal
    import time

    (cli.workspace / "small.md").write_text("# Small\n\nThe kettle is in the cupboard.\n")
    big = cli.workspace / "big.md"
    big.write_text(
        "# Almanac\n\n"
        + "".join(
            f"## Entry {i}\n\n"
            + f"The tide table for harbour {i} is posted at dawn. " * 12
            + "\n\n"
            for i in range(600)
        )
    )
    proc = cli.popen("kb", "add", "small.md", "big.md")
    assert proc.stderr is not None
    for line in proc.stderr:
        if "embedding " in line and "big.md" in line:
            break
    proc.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    _, rest = proc.communicate(timeout=60)
    assert time.monotonic() - interrupted < 20  # one group of texts, not the whole file
    assert proc.returncode == 130 and "interrupted: the files finished before stay added" in rest
    listed = cli.run("kb", "list").stdout
    assert "small.md" in listed and "big.md" not in listed


def test_a_folder_with_nothing_to_read_is_said_so(cli: Cli) -> None:
    (cli.workspace / "empty").mkdir()
    (cli.workspace / "pics").mkdir()
    (cli.workspace / "pics" / "cat.jpeg").write_bytes(b"\xff\xd8\xff")
    for folder in ("empty", "pics"):
        done = cli.run("kb", "add", folder)
        assert done.returncode == 0 and "nothing there the knowledge base reads" in done.stderr
