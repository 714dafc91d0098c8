"""README stays a short front door whose links and commands hold; the manual lives in docs/.

`mkdocs build --strict` (run by .ci/run) checks the links between docs pages; this checks what
mkdocs does not see: README itself, and that every page is in the site's navigation.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _nav_pages(entries: list[object]) -> set[str]:
    pages: set[str] = set()
    for entry in entries:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            pages |= _nav_pages(value) if isinstance(value, list) else {str(value)}
    return pages


def test_readme_is_a_front_door_of_at_most_15_kb() -> None:
    size = len(README.read_bytes())
    assert size <= 15 * 1024, f"README.md is {size} bytes: move detail into docs/"


def test_readme_links_point_at_files_that_exist() -> None:
    targets = [m.group(1) for m in LINK.finditer(README.read_text(encoding="utf-8"))]
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert local, "README links into docs/"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_readme_names_the_test_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == ".venv/bin/python -m pytest"
    assert ".venv/bin/python -m pytest" in README.read_text(encoding="utf-8")


def test_every_docs_page_is_in_the_navigation() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    in_nav = _nav_pages(config["nav"])
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk == in_nav, (on_disk - in_nav, in_nav - on_disk)


SEED_CITATION = re.compile(r"seed (\d{3})(?:,? (?:section |§)?(\d+(?:\.\d+)*))?")


def test_every_seed_a_docstring_cites_is_a_design_document_with_that_section() -> None:
    """ "seed 001 2.2.1" in the source means docs/design/seed-001.md, numbered section 2.2.1."""
    unresolved = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        for match in SEED_CITATION.finditer(path.read_text(encoding="utf-8")):
            seed, section = match.groups()
            document = ROOT / "docs" / "design" / f"seed-{seed}.md"
            if not document.exists():
                unresolved.append(f"{path.name}: seed {seed} (no {document.name})")
            elif section and not re.search(
                rf"(^|\s|§){re.escape(section)}(\s|\.|$)",
                document.read_text(encoding="utf-8"),
                re.M,
            ):
                unresolved.append(f"{path.name}: seed {seed} section {section}")
    assert not unresolved, unresolved
