"""RepoMap on the six-language fixture: ranking, budget, personalisation, cache, failures."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from shiyi.llm.tokens import TokenCounter
from shiyi.repomap import RepoMap, RepoMapError, RepoMapResult
from shiyi.repomap.repo_map import MAX_FILE_BYTES
from tests.support.repomap_repo import BINARY_FILE, DEFINERS, SOURCE_FILES, USERS_ONLY


def build(
    root: Path,
    counter: TokenCounter,
    cache: Path | None = None,
    *,
    focus_files: Sequence[str | Path] = (),
    mentioned: Sequence[str] = (),
    max_tokens: int | None = None,
) -> RepoMapResult:
    """One build by a fresh RepoMap, as a separate process would do it."""
    with RepoMap(root, count_tokens=counter.count, cache_path=cache) as mapper:
        return mapper.build(focus_files=focus_files, mentioned=mentioned, max_tokens=max_tokens)


def sections(result: RepoMapResult) -> dict[str, list[str]]:
    """The map as {file: [signature lines]} parsed back from its text."""
    shown: dict[str, list[str]] = {}
    current = ""
    for line in result.text.splitlines():
        if not line.startswith(" "):
            current = line.removesuffix(":")
            shown[current] = []
        else:
            shown[current].append(re.sub(r"^\s*\d+\| ", "", line))
    return shown


# --- ranking and output --------------------------------------------------------------------


def test_definers_rank_above_the_files_that_only_use_them(
    repo: Path, counter: TokenCounter
) -> None:
    result = build(repo, counter, max_tokens=4000)
    top = result.files_shown[: len(DEFINERS)]
    assert set(top) == DEFINERS
    assert result.files_shown[0] == "web/types.ts"  # used by store.ts, itself used by view.tsx
    # The users follow (web/app.js defines nothing, so it has no line in the map).
    users = [rel for rel in result.files_shown if rel in USERS_ONLY]
    assert set(users) == USERS_ONLY - {"web/app.js"}
    assert all(result.files_shown.index(user) >= len(DEFINERS) for user in users)


def test_the_map_lists_files_with_signatures_and_line_numbers(
    repo: Path, counter: TokenCounter
) -> None:
    result = build(repo, counter, max_tokens=4000)
    shown = sections(result)
    assert shown["app/models.py"] == [
        "class User:",
        "    def __init__(self, name: str) -> None:",
        "    def full_name(self) -> str:",
        "def make_user(name: str) -> User:",
    ]
    assert shown["server/server.go"] == [
        "type HttpServer struct",
        "func NewHttpServer(addr string) *HttpServer",
        "func (s *HttpServer) ListenAndServe() error",
    ]
    assert "   12| def make_user(name: str) -> User:" in result.text.splitlines()
    assert shown["engine/src/lib.rs"][-1] == "pub fn start_engine() -> Engine"
    assert shown["java/src/Repository.java"][1] == "    public String loadValue(String key)"


@pytest.mark.parametrize("budget", [40, 100, 250])
def test_the_budget_is_respected(repo: Path, counter: TokenCounter, budget: int) -> None:
    result = build(repo, counter, max_tokens=budget)
    assert 0 < result.tokens <= budget
    assert counter.count(result.text) == result.tokens
    # Binary search finds the largest map that fits: the whole map would not.
    full = build(repo, counter, max_tokens=4000)
    assert result.tokens < full.tokens
    assert len(result.files_shown) < len(full.files_shown)


def test_a_bigger_budget_shows_more(repo: Path, counter: TokenCounter) -> None:
    small = build(repo, counter, max_tokens=60)
    large = build(repo, counter, max_tokens=300)
    assert small.files_shown == large.files_shown[: len(small.files_shown)]
    assert len(large.text) > len(small.text)


def test_a_method_brings_its_class_header(repo: Path, counter: TokenCounter) -> None:
    result = build(repo, counter, mentioned=["full_name"], max_tokens=30)
    assert sections(result)["app/models.py"][:2] == [
        "class User:",
        "    def full_name(self) -> str:",
    ]


# --- personalisation ---------------------------------------------------------------------


def test_focus_files_pull_what_they_use_to_the_top(repo: Path, counter: TokenCounter) -> None:
    plain = build(repo, counter, max_tokens=4000)
    focused = build(repo, counter, focus_files=["engine/src/main.rs"], max_tokens=4000)
    assert plain.files_shown[0] != "engine/src/lib.rs"
    assert focused.files_shown[0] == "engine/src/lib.rs"
    assert focused.files_shown.index("engine/src/main.rs") < plain.files_shown.index(
        "engine/src/main.rs"
    )


def test_mentioned_identifiers_come_first(repo: Path, counter: TokenCounter) -> None:
    plain = build(repo, counter, max_tokens=40)
    mentioned = build(repo, counter, mentioned=["fetchUsers"], max_tokens=40)
    assert "fetchUsers" not in plain.text
    assert mentioned.files_shown[0] == "web/api.js"
    assert "export function fetchUsers(client)" in sections(mentioned)["web/api.js"]


def test_a_mentioned_file_stem_is_personalised(repo: Path, counter: TokenCounter) -> None:
    result = build(repo, counter, mentioned=["Repository"], max_tokens=4000)
    assert result.files_shown[0] == "java/src/Repository.java"


def test_focus_paths_may_be_absolute(repo: Path, counter: TokenCounter) -> None:
    relative = build(repo, counter, focus_files=["server/main.go"])
    absolute = build(repo, counter, focus_files=[repo / "server" / "main.go"])
    assert absolute.text == relative.text
    assert relative.files_shown[0] == "server/server.go"


# --- cache --------------------------------------------------------------------------------


def test_second_run_reads_tags_from_the_cache(
    repo: Path, counter: TokenCounter, cache_path: Path
) -> None:
    first = build(repo, counter, cache_path)
    assert first.stats.parsed == SOURCE_FILES - 1  # the binary file is skipped, not parsed
    assert first.stats.cache_hits == 0
    # A new RepoMap (a new process would do the same) with another request: no re-parse.
    second = build(repo, counter, cache_path, mentioned=["Engine"])
    assert second.stats.parsed == 0
    assert second.stats.cache_hits == SOURCE_FILES - 1
    assert not second.stats.map_cache_hit


def test_an_identical_request_reuses_the_finished_map(
    repo: Path, counter: TokenCounter, cache_path: Path
) -> None:
    first = build(repo, counter, cache_path, focus_files=["app/cli.py"], max_tokens=200)
    again = build(repo, counter, cache_path, focus_files=["app/cli.py"], max_tokens=200)
    assert again.stats.map_cache_hit and not first.stats.map_cache_hit
    assert (again.text, again.tokens, again.files_shown) == (
        first.text,
        first.tokens,
        first.files_shown,
    )
    assert again.stats.skipped == first.stats.skipped


def test_a_changed_file_is_parsed_again_alone(
    repo: Path, counter: TokenCounter, cache_path: Path
) -> None:
    build(repo, counter, cache_path)
    models = repo / "app" / "models.py"
    models.write_text(models.read_text() + "\n\ndef delete_user(user: User) -> None:\n    pass\n")
    os.utime(models, ns=(models.stat().st_atime_ns, models.stat().st_mtime_ns + 1_000_000))
    result = build(repo, counter, cache_path, max_tokens=4000)
    assert (result.stats.parsed, result.stats.cache_hits) == (1, SOURCE_FILES - 2)
    assert not result.stats.map_cache_hit  # the file set changed: the old map is stale
    assert "def delete_user(user: User) -> None:" in sections(result)["app/models.py"]


def test_a_deleted_file_leaves_the_map(repo: Path, counter: TokenCounter, cache_path: Path) -> None:
    build(repo, counter, cache_path)
    (repo / "java" / "src" / "Repository.java").unlink()
    result = build(repo, counter, cache_path, max_tokens=4000)
    assert "java/src/Repository.java" not in result.files_shown
    assert result.stats.files == SOURCE_FILES - 1


def test_excluded_files_stay_cached_for_a_later_full_map(
    repo: Path, counter: TokenCounter, cache_path: Path
) -> None:
    build(repo, counter, cache_path)
    with RepoMap(repo, count_tokens=counter.count, cache_path=cache_path, exclude=["web/"]) as m:
        assert m.build().stats.parsed == 0
    again = build(repo, counter, cache_path, mentioned=["UserStore"])
    assert (again.stats.parsed, again.stats.cache_hits) == (0, SOURCE_FILES - 1)


def test_an_unusable_cache_file_falls_back_to_memory(
    repo: Path, counter: TokenCounter, tmp_path: Path
) -> None:
    corrupt = tmp_path / "corrupt.sqlite3"
    corrupt.write_bytes(b"this is not a database" * 100)
    result = build(repo, counter, corrupt, max_tokens=4000)
    assert result.stats.parsed == SOURCE_FILES - 1
    assert set(result.files_shown[: len(DEFINERS)]) == DEFINERS


# --- files that cannot or must not be mapped -------------------------------------------------


def test_ignored_unknown_and_failing_files(repo: Path, counter: TokenCounter) -> None:
    result = build(repo, counter, max_tokens=4000)
    assert result.stats.files == SOURCE_FILES
    assert result.stats.unsupported == 4  # README.md, config.toml and two .gitignore files
    assert [(s.rel, s.reason) for s in result.stats.skipped] == [(BINARY_FILE, "binary content")]
    for absent in ("ignored_build_output", "ignored_generated", "dropped_by_nested_ignore"):
        assert absent not in result.text
    assert "not_code" not in result.text  # README.md is not parsed
    assert "def kept_by_negation():" in sections(result)["vendor/keep.py"]  # !keep.py
    assert "def still_found(x):" in sections(result)["broken/half.py"]


def test_a_huge_file_is_skipped_with_its_size(repo: Path, counter: TokenCounter) -> None:
    big = repo / "web" / "bundle.min.js"
    big.write_text("var a=1;" * (MAX_FILE_BYTES // 8 + 1))
    result = build(repo, counter)
    reasons = dict((s.rel, s.reason) for s in result.stats.skipped)
    assert reasons["web/bundle.min.js"].startswith("too large (")


def test_exclude_patterns_leave_files_out(repo: Path, counter: TokenCounter) -> None:
    with RepoMap(repo, count_tokens=counter.count, exclude=["web/", "*.java"]) as mapper:
        result = mapper.build(max_tokens=4000)
    assert not any(f.startswith("web/") or f.endswith(".java") for f in result.files_shown)
    assert "app/models.py" in result.files_shown


def test_a_repository_without_code_gives_an_empty_map(
    tmp_path: Path, counter: TokenCounter
) -> None:
    (tmp_path / "notes.txt").write_text("nothing to parse\n")
    result = build(tmp_path, counter)
    assert (result.text, result.tokens, result.files_shown) == ("", 0, ())
    assert result.stats.unsupported == 1


# --- errors ---------------------------------------------------------------------------------


def test_a_path_that_is_not_a_directory_is_an_error(repo: Path, counter: TokenCounter) -> None:
    with pytest.raises(RepoMapError, match=r"README\.md is not a directory"):
        RepoMap(repo / "README.md", count_tokens=counter.count)
    with pytest.raises(RepoMapError, match=r"missing does not exist"):
        RepoMap(repo / "missing", count_tokens=counter.count)


def test_focus_files_are_checked(repo: Path, counter: TokenCounter) -> None:
    with pytest.raises(RepoMapError, match=r"focus file 'app/nope\.py' does not exist"):
        build(repo, counter, focus_files=["app/nope.py"])
    with pytest.raises(RepoMapError, match=r"outside the repository"):
        build(repo, counter, focus_files=["../elsewhere.py"])
    result = build(repo, counter, focus_files=["README.md", "app/cli.py"])
    assert result.unmatched_focus == ("README.md",)


def test_a_budget_below_one_is_an_error(repo: Path, counter: TokenCounter) -> None:
    with pytest.raises(RepoMapError, match=r"token budget must be 1 or more \(got 0\)"):
        build(repo, counter, max_tokens=0)
