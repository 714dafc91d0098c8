"""`shiyi repomap`: the map on stdout, a summary on stderr, the cache in the data dir."""

from __future__ import annotations

from tests.interfaces.cli.conftest import Cli
from tests.support.repomap_repo import write_repo


def test_repomap_prints_the_map_and_caches_tags(cli: Cli) -> None:
    write_repo(cli.workspace / "repo")
    first = cli.run("repomap", "repo", "--tokens", "120", "--focus", "repo/server/main.go")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0] == "server/server.go:"
    assert "func NewHttpServer(addr string) *HttpServer" in first.stdout
    summary = first.stderr.splitlines()[0]
    assert summary.startswith("shiyi repomap: 17 source files (16 parsed, 0 from cache), 1 skipped")
    assert "/120 tokens" in summary
    assert "skipped broken/blob.py: binary content" in first.stderr

    again = cli.run("repomap", "repo", "-t", "120", "-m", "Engine", "-x", "java/")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == "engine/src/lib.rs:"
    assert "15 source files (0 parsed, 14 from cache), 1 skipped" in again.stderr
    assert "Repository" not in again.stdout


def test_repomap_errors_are_one_line(cli: Cli) -> None:
    (cli.workspace / "file.py").write_text("x = 1\n")
    result = cli.run("repomap", "file.py")
    assert result.returncode == 2
    assert result.stderr.strip().endswith(
        "file.py is not a directory; the repo map needs a repository folder."
    )
    missing = cli.run("repomap", ".", "--focus", "nope.py")
    assert missing.returncode == 2
    assert "focus file 'nope.py' does not exist" in missing.stderr
