"""The ranking on hand-made tags: PageRank properties and the weighting rules."""

from __future__ import annotations

import pytest

from shiyi.repomap.graph import MAX_DEFINERS, identifier_weight, rank
from shiyi.repomap.model import Definition, FileTags


def tags(defines: list[str], uses: dict[str, int] | None = None) -> FileTags:
    definitions = tuple(
        Definition(name, "function", line, line, 0, f"def {name}():")
        for line, name in enumerate(defines, start=1)
    )
    return FileTags(definitions, uses or {})


def test_ranks_are_a_distribution_and_follow_uses() -> None:
    ranking = rank(
        {
            "core.py": tags(["parse_config"]),
            "a.py": tags(["a_main"], {"parse_config": 3}),
            "b.py": tags(["b_main"], {"parse_config": 1}),
        }
    )
    assert sum(ranking.files.values()) == pytest.approx(1.0)
    assert max(ranking.files, key=ranking.files.__getitem__) == "core.py"
    assert ranking.definitions[0].definition.name == "parse_config"


def test_focus_moves_rank_to_what_the_focus_uses() -> None:
    repo = {
        "x.py": tags(["x_helper"]),
        "y.py": tags(["y_helper"]),
        "uses_x.py": tags(["ux"], {"x_helper": 1}),
        "uses_y.py": tags(["uy"], {"y_helper": 1}),
        "also_x.py": tags(["ax"], {"x_helper": 1}),
    }
    plain = rank(repo)
    focused = rank(repo, focus=["uses_y.py"])
    assert plain.files["x.py"] > plain.files["y.py"]
    assert focused.files["y.py"] > focused.files["x.py"]
    assert focused.definitions[0].rel == "y.py"


def test_identifiers_defined_everywhere_make_no_edges() -> None:
    repo = {f"impl{i}.py": tags(["run"]) for i in range(MAX_DEFINERS + 1)}
    repo["caller.py"] = tags(["main_entry"], {"run": 5})
    ranking = rank(repo)
    ranks = {ranking.files[f"impl{i}.py"] for i in range(MAX_DEFINERS + 1)}
    assert len(ranks) == 1  # nobody got rank from caller.py's uses of "run"


def test_limit_returns_the_best_definitions_only() -> None:
    repo = {"m.py": tags([f"f{i}" for i in range(10)]), "u.py": tags(["u"], {"f7": 2})}
    best = rank(repo, limit=3).definitions
    assert len(best) == 3
    assert best[0].definition.name == "f7"


@pytest.mark.parametrize(
    ("ident", "definers", "mentioned", "expected"),
    [
        ("x", 1, (), 1.0),
        ("parse_config", 1, (), 10.0),  # long snake_case: distinctive
        ("UserRepository", 1, (), 10.0),  # long CamelCase
        ("parse_config", 1, ("parse_config",), 100.0),
        ("_private_helper", 1, (), 1.0),  # distinctive x10, private x0.1
        ("handle", 6, (), 0.1),  # defined in many files: ambiguous
    ],
)
def test_identifier_weights(
    ident: str, definers: int, mentioned: tuple[str, ...], expected: float
) -> None:
    assert identifier_weight(ident, definers, mentioned) == pytest.approx(expected)


def test_an_empty_repository_ranks_nothing() -> None:
    ranking = rank({})
    assert ranking.files == {} and ranking.definitions == []
