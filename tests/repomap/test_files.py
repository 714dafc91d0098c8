"""Which files the repo map looks at: .gitignore like git, no symlinks, no caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiyi.repomap import RepoMapError
from shiyi.repomap.files import walk_sources


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def rels(root: Path, exclude: tuple[str, ...] = ()) -> list[str]:
    return [f.rel for f in walk_sources(root, exclude).files]


def test_gitignore_rules_nest_and_negate(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".gitignore": "dist/\n*.gen.ts\n",
            "src/a.ts": "",
            "src/a.gen.ts": "",
            "dist/out.js": "",
            "src/lib/.gitignore": "*.js\n!keep.js\n",
            "src/lib/drop.js": "",
            "src/lib/keep.js": "",
        },
    )
    assert rels(tmp_path) == ["src/a.ts", "src/lib/keep.js"]


def test_hidden_cache_and_vendored_directories_are_skipped(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "main.go": "",
            ".git/hooks/x.py": "",
            ".venv/lib/y.py": "",
            "node_modules/pkg/index.js": "",
            "pkg/__pycache__/z.py": "",
        },
    )
    assert rels(tmp_path) == ["main.go"]


def test_symlinks_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"secret.py": "def secret(): pass\n"})
    root = tmp_path / "repo"
    write(root, {"lib.rs": ""})
    (root / "link_dir").symlink_to(outside)
    (root / "link.py").symlink_to(outside / "secret.py")
    assert rels(root) == ["lib.rs"]


def test_files_carry_language_and_stat(tmp_path: Path) -> None:
    write(tmp_path, {"A.java": "class A {}\n", "b.tsx": "", "c.mjs": "", "d.txt": ""})
    walk = walk_sources(tmp_path)
    assert [(f.rel, f.language) for f in walk.files] == [
        ("A.java", "java"),
        ("b.tsx", "tsx"),
        ("c.mjs", "javascript"),
    ]
    assert walk.files[0].size == 11 and walk.files[0].mtime_ns > 0
    assert walk.unsupported == 1


def test_exclude_patterns(tmp_path: Path) -> None:
    write(tmp_path, {"src/a.py": "", "tests/test_a.py": "", "docs/conf.py": ""})
    assert rels(tmp_path, ("tests/", "conf.py")) == ["src/a.py"]


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(RepoMapError, match="is not a directory"):
        walk_sources(tmp_path / "missing")
