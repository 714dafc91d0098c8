"""`shiyi memory forget` options and `shiyi memory health` as subprocesses on a real store."""

from __future__ import annotations

import json

from tests.interfaces.cli.conftest import Cli

SECRET = "zebra-7731"


def test_forget_by_query_lists_asks_then_deletes(cli: Cli) -> None:
    added = cli.run(
        "memory", "add", f"The {SECRET} password opens the vault", "--kind", "convention"
    )
    assert added.returncode == 0, added.stderr
    fact_id = added.stdout.split()[1]
    assert cli.run("memory", "add", "Deploys go out with make release").returncode == 0

    declined = cli.run("memory", "forget", "--query", SECRET, "--limit", "1", input="n\n")
    assert declined.returncode == 1
    assert fact_id in declined.stdout and "Forget 0 events, 1 fact for good?" in declined.stdout
    assert fact_id in cli.run("memory", "search", SECRET, "--mode", "keyword").stdout

    done = cli.run("memory", "forget", "--query", SECRET, "--limit", "1", "--yes")
    assert done.returncode == 0, done.stderr
    assert f"forgot query '{SECRET}'" in done.stdout
    assert "0 events, 1 facts, 0 entities" in done.stdout
    assert "No memories matched." in cli.run("memory", "search", SECRET, "--mode", "keyword").stdout
    health = json.loads(cli.run("memory", "health", "--json").stdout)
    assert (health["facts"], health["by_kind"]) == (1, {"semantic": 1})


def test_forget_needs_exactly_one_known_target(cli: Cli) -> None:
    nothing = cli.run("memory", "forget", "--yes")
    assert nothing.returncode == 2
    assert "give exactly one of: IDs, --entity NAME, --query TEXT or --user ID" in nothing.stderr
    both = cli.run("memory", "forget", "fact_x", "--user", "ann", "--yes")
    assert "(got IDs and --user)" in both.stderr
    unknown = cli.run("memory", "forget", "--entity", "Nobody", "--yes")
    assert unknown.returncode == 2
    assert "nothing of yours matches entity 'Nobody'" in unknown.stderr
    assert "no memories of user 'ghost'" in cli.run("memory", "forget", "--user", "ghost").stderr


def test_health_table(cli: Cli) -> None:
    assert cli.run("memory", "add", "I prefer tabs", "--kind", "preference").returncode == 0
    table = [line.split() for line in cli.run("memory", "health").stdout.splitlines()]
    assert ["facts", "1"] in table
    assert ["by", "kind", "preference", "1"] in table
    assert ["by", "status", "active", "1"] in table
    assert ["jobs", "failed", "0"] in table


def test_forget_by_query_takes_only_memories_holding_its_words(cli: Cli) -> None:
    marker = "quokka-5150"
    unrelated = ["Deploys go out with make release", "The standup moved to ten",
                 "Alice prefers green tea", "Lunch with Bob is on Friday"]  # fmt: skip
    for text in [f"The {marker} token opens the staging vault", *unrelated]:
        assert cli.run("memory", "add", text).returncode == 0
    listed = cli.run("memory", "forget", "--query", marker, "--limit", "10", input="n\n")
    assert "Forget 0 events, 1 fact for good?" in listed.stdout, listed.stdout
    assert not any(text in listed.stdout for text in unrelated)
    done = cli.run("memory", "forget", "--query", marker, "--limit", "10", "--yes")
    assert done.returncode == 0, done.stderr
    assert "0 events, 1 facts" in done.stdout
    for text in unrelated:
        assert text in cli.run("memory", "search", text, "--mode", "keyword").stdout
    none = cli.run("memory", "forget", "--query", "nothing like it", "--yes")
    assert none.returncode == 2
    assert "no memory contains every word of 'nothing like it'" in none.stderr
