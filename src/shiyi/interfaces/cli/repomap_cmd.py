"""``shiyi repomap [PATH]``: print the ranked outline of a repository's code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shiyi.repomap import RepoMapResult

ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="Config file (default: ./shiyi.yaml).")
]


def repomap(
    path: Annotated[
        Path, typer.Argument(help="Repository folder (default: the current directory).")
    ] = Path("."),
    tokens: Annotated[
        int | None,
        typer.Option("--tokens", "-t", help="Map size in tokens (default: tools.repo_map)."),
    ] = None,
    focus: Annotated[
        list[str] | None,
        typer.Option("--focus", "-f", help="A file you work on; favours what it uses. Repeat."),
    ] = None,
    mention: Annotated[
        list[str] | None,
        typer.Option("--mention", "-m", help="An identifier to favour. Repeat."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", "-x", help="A .gitignore-style pattern to leave out. Repeat."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Print a ranked map of the code: files and their key signatures, within a budget.

    A summary line (files parsed or cached, tokens, time) goes to standard error.
    """
    from shiyi.errors import ShiyiError
    from shiyi.interfaces.cli.common import fail, load
    from shiyi.llm.tokens import TokenCounter
    from shiyi.repomap import RepoMap

    settings = load(config)
    budget = tokens if tokens is not None else settings.tools.repo_map.max_tokens
    try:
        with RepoMap(
            path,
            count_tokens=TokenCounter().count,
            cache_path=settings.tools.repo_map.cache,
            exclude=exclude or (),
        ) as mapper:
            focus_files = [_from_cwd(item) for item in focus or []]
            result = mapper.build(
                focus_files=focus_files, mentioned=mention or [], max_tokens=budget
            )
    except ShiyiError as exc:
        fail(str(exc))
    typer.echo(result.text, nl=False)
    typer.echo(_summary(result), err=True)


def _from_cwd(item: str) -> str:
    """A focus path as typed: relative to the current directory when it exists there,
    else taken as relative to the repository root."""
    candidate = Path(item).expanduser()
    return str(candidate.resolve()) if candidate.exists() else item


def _summary(result: RepoMapResult) -> str:
    stats = result.stats
    source = (
        "map from cache"
        if stats.map_cache_hit
        else f"{stats.parsed} parsed, {stats.cache_hits} from cache"
    )
    parts = [
        f"{stats.files} source files ({source})",
        f"{len(result.files_shown)} shown",
        f"{result.tokens}/{result.max_tokens} tokens",
        f"{stats.seconds:.2f} s",
    ]
    if stats.skipped:
        parts.insert(1, f"{len(stats.skipped)} skipped")
    notes = [f"shiyi repomap: {', '.join(parts)}"]
    for skipped in stats.skipped[:5]:
        notes.append(f"  skipped {skipped.rel}: {skipped.reason}")
    for rel in result.unmatched_focus:
        notes.append(f"  focus {rel} holds no parsable code (or is ignored); not ranked")
    return "\n".join(notes)
