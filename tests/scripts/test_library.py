"""The script library's files: names, limits, metadata, search and what a broken file does."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from shiyi.errors import NotFound, ScriptError
from shiyi.scripts.library import (
    MAX_BODY_BYTES,
    Script,
    ScriptLibrary,
    ScriptParameter,
    memory_text,
)


def deploy(**changes: object) -> Script:
    fields: dict[str, object] = {
        "name": "deploy",
        "description": "Deploy the site",
        "language": "bash",
        "body": "echo deploy $1\n",
        "parameters": [ScriptParameter("env", "where to"), ScriptParameter("tag", "", False)],
    }
    fields.update(changes)
    return Script(**fields)  # type: ignore[arg-type]


@pytest.fixture
def library(tmp_path: Path) -> ScriptLibrary:
    return ScriptLibrary(tmp_path / "scripts")


def test_save_writes_body_and_metadata_and_find_reads_them_back(library: ScriptLibrary) -> None:
    saved, replaced = library.save(deploy())
    assert replaced is None and saved.created_at > 0
    assert sorted(p.name for p in library.root.iterdir()) == ["deploy.json", "deploy.sh"]
    again = library.get("deploy")
    assert again.body == "echo deploy $1\n" and again.parameters == saved.parameters
    assert again.usage() == "deploy ENV [TAG]"
    assert memory_text(again) == "Deploy the site — run script deploy (env, tag?)"


def test_changing_the_language_replaces_the_old_body_file(library: ScriptLibrary) -> None:
    first, _ = library.save(deploy())
    second, replaced = library.save(deploy(language="python", body="print(1)\n"))
    assert replaced is not None and replaced.language == "bash"
    assert second.created_at == first.created_at
    assert sorted(p.name for p in library.root.iterdir()) == ["deploy.json", "deploy.py"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "../up"}, "not a valid script name"),
        ({"name": "Deploy"}, "not a valid script name"),
        ({"name": "a" * 65}, "not a valid script name"),
        ({"language": "ruby"}, "language 'ruby' is not supported"),
        ({"body": "  \n"}, "body is empty"),
        ({"body": "x" * (MAX_BODY_BYTES + 1)}, f"at most {MAX_BODY_BYTES}"),
        ({"description": ""}, "needs a description"),
        ({"parameters": [ScriptParameter("a b")]}, "parameter name 'a b' is invalid"),
        (
            {"parameters": [ScriptParameter("a", "", False), ScriptParameter("b")]},
            "required parameter 'b' follows an optional one",
        ),
    ],
)
def test_invalid_scripts_are_refused_with_the_fix(
    library: ScriptLibrary, changes: dict[str, object], message: str
) -> None:
    with pytest.raises(ScriptError, match=message):
        library.save(deploy(**changes))
    assert library.names() == []


def test_a_broken_metadata_file_is_skipped_not_fatal(library: ScriptLibrary) -> None:
    library.save(deploy())
    library.save(deploy(name="other"))
    (library.root / "other.json").write_text("{not json")
    (library.root / "stray.json").write_text(json.dumps({"name": "deploy", "language": "sh"}))
    assert [s.name for s in library.list_all()] == ["deploy"]
    with pytest.raises(NotFound, match="no saved script is called 'other'"):
        library.get("other")


def test_search_matches_stems_and_ranks_the_summary_above_the_body(
    library: ScriptLibrary,
) -> None:
    library.save(deploy())
    library.save(deploy(name="notes", description="Print notes", body="echo deployed\n"))
    assert [s.name for s in library.search("deploying")] == ["deploy", "notes"]
    assert library.search("zebra") == []


def test_delete_removes_both_files(library: ScriptLibrary) -> None:
    library.save(deploy())
    library.delete("deploy")
    assert list(library.root.iterdir()) == []
    with pytest.raises(NotFound):
        library.delete("deploy")


def test_a_broken_script_can_be_deleted(library: ScriptLibrary) -> None:
    """One that cannot be read is skipped by every listing; deleting it had said no script
    had its name, leaving its files to be removed by hand."""
    library.save(deploy())
    kept = library.save(replace(deploy(), name="notes"))[0]
    (library.root / "deploy.json").write_text("{ not json", encoding="utf-8")
    assert library.find("deploy") is None and library.exists("deploy")
    library.delete("deploy")
    assert sorted(p.name for p in library.root.iterdir()) == sorted(["notes.json", kept.file_name])
