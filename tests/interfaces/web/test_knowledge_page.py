"""The memory page's Knowledge tab and cache hit rates in a real headless Chromium against
a real server (the local embedder): add a workspace document and an upload, search them
(the matched chunk marked inside its section), re-index, remove; refused paths say why."""

from __future__ import annotations

from pathlib import Path

from tests.interfaces.web import test_page as shared
from tests.interfaces.web.test_page import Page, Site, expect, open_page, shot

# The page module's fixtures: Chromium, a page, and a server with the local embedder.
browser, page, site = shared.browser, shared.page, shared.site

GUIDE = """# Guide

Intro to the platform.

## Deploying

Ship with the blue-green pipeline.

### Rollback

To roll back a kubernetes release run helm rollback with the previous revision.
"""


def workspace(site: Site) -> Path:
    return site.service.settings.workspace


def knowledge_tab(page: Page, site: Site) -> None:
    open_page(page, site)
    page.get_by_role("tab", name="Knowledge 知识库").click()
    expect(page.locator("#kb-q")).to_be_visible()


def test_knowledge_tab_adds_searches_reindexes_and_removes(page: Page, site: Site) -> None:
    guide = workspace(site) / "docs" / "guide.md"
    guide.parent.mkdir(parents=True, exist_ok=True)
    guide.write_text(GUIDE, encoding="utf-8")
    knowledge_tab(page, site)

    page.get_by_label("Add a file or folder of the workspace").fill("docs")
    page.get_by_role("button", name="Add", exact=True).click()
    row = page.locator("#kb-docs tbody tr", has_text="docs/guide.md")
    expect(row).to_be_visible()
    cells = row.locator("td")
    expect(cells.nth(0)).to_contain_text("Guide")
    expect(cells.nth(1)).to_have_text("3")  # sections
    expect(cells.nth(4)).to_have_text(f"{len(GUIDE.encode())} B")
    expect(page.locator("#kb-status")).to_contain_text("Added docs: 1 added")

    page.get_by_label("Upload files").set_input_files(
        files=[{"name": "notes.md", "mimeType": "text/markdown",
                "buffer": b"# Notes\n\nThe espresso machine needs descaling every month.\n"}]
    )  # fmt: skip
    expect(page.locator("#kb-docs tbody tr", has_text="uploads/notes.md")).to_be_visible()

    page.locator("#kb-q").fill("how do I roll back a helm release")
    page.get_by_role("button", name="Search", exact=True).click()
    first = page.locator("#kb-passages .passage").first
    expect(first.locator(".section-path")).to_have_text("Guide › Deploying › Rollback")
    expect(first.locator("mark")).to_contain_text("helm rollback")
    shot(page, "knowledge")

    guide.write_text(GUIDE.replace("previous revision", "last good revision"), encoding="utf-8")
    page.get_by_role("button", name="Re-index Guide").click()
    expect(page.locator("#kb-status")).to_contain_text("Re-indexed Guide: 1 updated")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#kb-passages mark").first).to_contain_text("last good revision")

    page.get_by_role("button", name="Remove Notes").click()
    expect(page.locator("#kb-docs tbody tr", has_text="notes.md")).to_have_count(0)
    expect(page.locator("#kb-docs tbody tr")).to_have_count(1)


def test_a_path_outside_the_workspace_is_refused_with_the_reason(page: Page, site: Site) -> None:
    knowledge_tab(page, site)
    page.get_by_label("Add a file or folder of the workspace").fill("../../etc/passwd")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator("#kb-error")).to_contain_text("outside the workspace")


def test_the_health_panel_shows_each_caches_hit_rate(page: Page, site: Site) -> None:
    site.memory.remember("The wiki lives at wiki.example.org", kind="semantic")
    for _ in range(2):
        assert site.api.get("/v1/memory/search", params={"q": "where is the wiki"}).is_success
    open_page(page, site)
    rates = page.locator("#cache-rates")
    for name in ("retrieval results", "embeddings", "summaries", "system prompt"):
        expect(rates.locator("dt", has_text=name)).to_be_visible()
    expect(rates.locator('dd[data-cache="retrieval results"]')).to_contain_text("%")
    expect(rates.locator('dd[data-cache="embeddings"]')).to_contain_text("%")
