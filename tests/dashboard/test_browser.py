"""The dashboard in a real browser: headless Chromium from the system packages.

Each test opens the page during a crawl of a local site and works it as a person
would, checking the effect on the crawl through the site's own record of arrivals.
Screenshots of the main views go to ``test-artifacts/``. Without Chromium (Debian's
``chromium`` package) or Playwright these tests are skipped with a reason saying what
to install; under CI (``CI=true``) they fail instead.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from skitter import Request

from .conftest import TreeSite, eventually, open_page, running_crawl, screenshot, tree_spider


async def test_watch_and_steer_a_running_crawl(serve: Any, browser: Any) -> None:
    from playwright.async_api import expect

    site = TreeSite(delay=0.01)
    spider = tree_spider("steer", ["/flaky/one", "/broken/two"])
    settings = {"RATE": 100, "MAX_RATE": 100}
    async with running_crawl(serve, [spider], site=site, settings=settings) as run:
        page, errors = await open_page(browser, run)
        row = page.locator('#projects tr[data-project="steer"]')
        await expect(row.locator(".status")).to_have_text("running")
        await expect(row.locator("button.rate")).to_have_text("100/s · burst 1000")
        await expect(page.locator("#connection")).to_have_text("live")
        await expect(page.locator("#recent tbody tr").first).to_contain_text(run.base)
        failed = page.locator("#failed tbody tr")
        await expect(failed).to_have_count(2)
        await screenshot(page, "overview")

        # Retry one failed task from its row: the site sees it again, and it succeeds.
        flaky = failed.filter(has_text="/flaky/one")
        await expect(flaky.locator(".reason")).to_have_text("HTTP 500")
        await flaky.locator("button.retry").click()
        await expect(page.locator("#retry-message")).to_have_text("requeued 1 task")
        await eventually(lambda: site.hits["/flaky/one"] == 2)
        await expect(failed).to_have_count(1)
        await expect(failed).to_contain_text("/broken/two")

        # Pause: nothing more arrives once the running requests are done; then resume.
        await row.locator("button.toggle", has_text="Pause").click()
        await expect(row.locator(".status")).to_have_text("paused")
        await eventually(lambda: run.crawler.engine.in_flight == 0)
        seen = len(site.arrivals)
        await screenshot(page, "paused")
        # a window of real time on a real server: a paused crawl sends nothing in it
        await asyncio.sleep(0.3)
        assert len(site.arrivals) == seen
        await row.locator("button.toggle", has_text="Resume").click()
        await expect(row.locator(".status")).to_have_text("running")
        await eventually(lambda: len(site.arrivals) > seen)

        # Change the rate: above MAX_RATE is refused inline, and nothing changes.
        await row.locator("button.rate").click()
        editor = row.locator("form.rate-editor")
        await editor.locator('input[name="rate"]').fill("5000")
        await editor.locator('button[type="submit"]').click()
        await expect(editor.locator(".error")).to_contain_text("above MAX_RATE (100/s)")
        assert run.crawler.control.rate == (100, 1000)
        await screenshot(page, "rate-refused")
        await editor.locator('input[name="rate"]').fill("2")
        await editor.locator('input[name="burst"]').fill("1")
        await editor.locator('input[name="burst"]').press("Enter")
        await expect(row.locator("button.rate")).to_have_text("2/s · burst 1")
        assert run.crawler.control.rate == (2, 1)

        # The site sees the crawl slow down: requests dispatched before the change may
        # still land; after that, at most the bucket's one token plus 2 per second.
        loop = asyncio.get_running_loop()
        await eventually(lambda: run.crawler.engine.in_flight <= 1)
        start = loop.time()
        await asyncio.sleep(1.0)  # a window of real time: the rate's bound is checked over it
        assert site.arrivals_between(start, loop.time()) <= 1 + 2 * (loop.time() - start) + 1

        await expect(page.locator("#active tbody tr").first).to_be_visible()
        await screenshot(page, "slowed")
        assert errors == []


async def test_crawled_markup_is_shown_as_text_and_never_runs(serve: Any, browser: Any) -> None:
    from playwright.async_api import expect

    payloads = [
        "/x/<img src=x onerror=\"window.__pwned='url-img'\">",
        "/x/<script>window.__pwned='url-script'</script>",
    ]

    def hanging_slot(base: str) -> Request:
        slot = "<img src=x onerror=\"window.__pwned='slot'\">"
        return Request(base + "/hang", meta={"download_slot": slot}, priority=100)

    def javascript_url(base: str) -> Request:
        return Request("javascript:window.__pwned='link'//", priority=100)

    name = "xss<img src=x onerror=window.__pwned=1>"
    spider = tree_spider(name, [*payloads, hanging_slot, javascript_url])
    async with running_crawl(serve, [spider], settings={"RATE": 20}) as run:
        await eventually(lambda: run.crawler.control.monitor.counts()[1] >= 3)
        page, errors = await open_page(browser, run)
        for payload in payloads:
            await expect(page.locator("#failed")).to_contain_text(Request(run.base + payload).url)
        await expect(page.locator("#failures")).to_contain_text("javascript:window.__pwned")
        await expect(page.locator("#active")).to_contain_text("window.__pwned='slot'")
        await expect(page.locator("#slots")).to_contain_text("window.__pwned='slot'")
        await expect(page.locator("#projects")).to_contain_text(name)
        await screenshot(page, "escaped-markup")

        assert await page.evaluate("window.__pwned") is None
        assert await page.locator("main img, main script, main svg[onload]").count() == 0
        assert await page.locator("script").count() == 1  # only /static/dashboard.js
        # A javascript: URL is shown as text, never as a link to click.
        assert await page.locator('a[href^="javascript:"]').count() == 0
        # Clicking each link navigates nowhere dangerous either: to a crawled page, or to
        # one of the dashboard's own pages (a project's report).
        hrefs = await page.locator("main a").evaluate_all("links => links.map(a => a.href)")
        assert hrefs and all(href.startswith((run.base, run.url)) for href in hrefs)
        assert any(href.startswith(run.base) for href in hrefs)
        assert errors == []


async def test_log_in_with_the_form_and_stay_in_for_a_session(serve: Any, browser: Any) -> None:
    from playwright.async_api import expect

    token = "correct-horse-battery-staple"
    async with running_crawl(serve, [tree_spider("locked")], token=token) as run:
        context = await browser.new_context()
        page = await context.new_page()
        page.set_default_timeout(8000)
        # A link with the token in it logs nobody in: the token only goes in the form.
        await page.goto(run.url + f"login?token={token}")
        await expect(page.locator(".error")).to_contain_text("not in the URL")
        assert await context.cookies() == []
        await page.goto(run.url)  # sent on to the login form
        assert page.url.endswith("/login")
        await page.fill('input[name="token"]', "wrong-token-wrong-token")
        await page.click('button[type="submit"]')
        await expect(page.locator(".error")).to_have_text("Wrong token.")
        await page.fill('input[name="token"]', token)
        before = time.time()
        await page.click('button[type="submit"]')
        await expect(page.locator('#projects tr[data-project="locked"]')).to_be_visible()
        after = time.time()
        assert "token" not in page.url
        (cookie,) = await context.cookies()
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
        # A session of its own, not for ever: 12 h from the login (in whole seconds).
        session = 12 * 3600
        assert math.floor(before) + session <= cookie["expires"] <= after + session
        await context.close()
