"""The memory page's Scripts section in a real headless Chromium against a real server:
the saved scripts are listed, one is shown, one is deleted with its procedural memory."""

from __future__ import annotations

from shiyi.scripts.library import Script, ScriptLibrary, ScriptParameter, remember_script, saver
from tests.interfaces.web import test_page as shared
from tests.interfaces.web.test_page import Page, Site, expect, open_page, shot

# That module's server, browser and page fixtures (it skips when Chromium is missing).
site, browser, page = shared.site, shared.browser, shared.page


def save(site: Site, name: str, description: str, body: str) -> Script:
    script = Script(
        name, description, "bash", body, [ScriptParameter("env", "staging or production")]
    )
    script.saved_by = saver(site.memory.viewer)
    ScriptLibrary.for_data_dir(site.service.settings.data_dir).save(script)
    remember_script(site.memory, script)
    return script


def row(page: Page, name: str) -> object:
    return page.locator(f'#scripts-list li[data-name="{name}"]')


def test_scripts_are_listed_shown_and_deleted(page: Page, site: Site) -> None:
    save(site, "deploy", "Deploy the site <b>now</b>", 'echo "deploying $1"\n')
    save(site, "report", "Count the log lines", "wc -l *.log\n")
    open_page(page, site)
    expect(page.locator("#scripts-list li")).to_have_count(2)
    expect(row(page, "deploy")).to_contain_text("deploy ENV")
    expect(row(page, "deploy")).to_contain_text("Deploy the site <b>now</b>")  # text, not HTML
    expect(page.locator("#scripts-status")).to_have_text("2 scripts")

    show = page.get_by_role("button", name="Show script deploy")
    show.click()
    dialog = page.get_by_role("dialog", name="Script deploy")
    expect(dialog.locator(".script-code")).to_have_text('echo "deploying $1"\n')
    expect(dialog).to_contain_text("staging or production")
    shot(page, "script-show")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(show).to_be_focused()

    page.get_by_role("button", name="Delete script deploy").click()
    confirm = page.get_by_role("dialog", name="Delete script? 删除脚本？")
    expect(confirm).to_contain_text("Delete the script deploy")
    expect(page.locator("#script-confirm-ok")).to_be_focused()
    page.keyboard.press("Enter")
    expect(confirm).to_be_hidden()
    expect(row(page, "deploy")).to_have_count(0)
    expect(page.locator("#scripts-status")).to_contain_text(
        "Deleted deploy (1 procedural memory forgotten)."
    )
    expect(page.locator("#scripts-title")).to_be_focused()
    assert site.api.get("/v1/scripts/deploy").status_code == 404
    hits = site.api.get("/v1/memory/search", params={"q": "deploy site", "mode": "keyword"})
    assert not [h for h in hits.json()["hits"] if "run script deploy" in h["text"]]
    assert not (site.service.settings.data_dir / "scripts" / "deploy.sh").exists()


def test_the_section_fits_a_small_screen(page: Page, site: Site) -> None:
    save(site, "a-very-long-script-name-that-goes-on-and-on-and-on-for-a-while", "Long", "true\n")
    page.set_viewport_size({"width": 375, "height": 800})
    open_page(page, site)
    expect(page.locator("#scripts-list li").first).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, f"the page scrolls sideways at 375px ({width}px wide)"
    shot(page, "scripts-375")
