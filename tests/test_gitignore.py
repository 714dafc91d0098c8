"""The shared git-like walk: nested .gitignore files, re-inclusion, pruning, symlinks."""

from __future__ import annotations

from pathlib import Path

from shiyi.gitignore import IgnoreRules, rules_down_to, walk_files


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _walked(root: Path, rel_dir: str = "", **kwargs: object) -> list[str]:
    return [rel for rel, _ in walk_files(root, rel_dir, **kwargs)]  # type: ignore[arg-type]


def test_the_deepest_gitignore_decides(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            ".gitignore": "*.log\nbuild/\n",
            "a.py": "",
            "debug.log": "",
            "build/out.py": "",
            "sub/.gitignore": "!keep.log\n",
            "sub/keep.log": "",
            "sub/other.log": "",
        },
    )
    assert _walked(tmp_path) == [".gitignore", "a.py", "sub/.gitignore", "sub/keep.log"]


def test_pruned_folders_and_symlinks_are_not_entered(tmp_path: Path) -> None:
    _tree(tmp_path, {"src/a.py": "", ".git/config": "", "node_modules/x.js": ""})
    (tmp_path / "link").symlink_to(tmp_path / "src")
    assert _walked(tmp_path) == ["node_modules/x.js", "src/a.py"]
    assert _walked(tmp_path, prune=lambda name: name in {".git", "node_modules"}) == ["src/a.py"]


def test_walking_inside_an_ignored_folder_on_purpose_finds_its_files(tmp_path: Path) -> None:
    _tree(tmp_path, {".gitignore": "vendor/\n*.tmp\n", "vendor/lib.py": "", "x.tmp": ""})
    assert _walked(tmp_path) == [".gitignore"]
    assert _walked(tmp_path, "vendor", rules=rules_down_to(tmp_path, "vendor")) == ["vendor/lib.py"]


def test_rules_above_a_subfolder_still_apply_inside_it(tmp_path: Path) -> None:
    _tree(tmp_path, {".gitignore": "*.tmp\n", "sub/a.py": "", "sub/b.tmp": ""})
    assert _walked(tmp_path, "sub", rules=rules_down_to(tmp_path, "sub")) == ["sub/a.py"]


def test_extra_patterns_apply_from_the_root(tmp_path: Path) -> None:
    _tree(tmp_path, {"a.py": "", "tests/t.py": ""})
    assert _walked(tmp_path, rules=IgnoreRules.of_patterns(["tests/"])) == ["a.py"]
