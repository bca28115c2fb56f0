"""The service's pages in a real browser (Debian's Chromium): the run history, a run,
its results (filtered, exported), its tasks and one URL's task page, the schedules.
A screenshot of each page goes to ``test-artifacts/server-*.png``."""

from __future__ import annotations

import csv
import io
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from skitter.server import Server

from .conftest import (
    _unavailable,
    deploy_directory,
    make_project,
    schedule,
    shop_site,
    wait_for_job,
)

# As the dashboard's browser tests run it: Debian's Chromium, headless.
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


@pytest.fixture
async def chromium() -> AsyncIterator[Any]:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        _unavailable("Playwright is missing: pip install playwright (no `playwright install`)")
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            await browser.close()


async def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    await page.screenshot(path=str(ARTIFACTS / f"server-{name}.png"), full_page=True)


async def test_history_run_results_tasks_schedules(
    tmp_path: Path, server: Server, serve: Any, chromium: Any
) -> None:
    from playwright.async_api import expect

    site = await serve(shop_site(broken=True))
    await deploy_directory(server.url, make_project(tmp_path / "proj", server.url))
    job = await schedule(server.url, site, jobid="browse-1", setting="RETRY_TIMES=0")
    await wait_for_job(server.url, job)

    page = await chromium.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(8000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def on_console(msg: Any) -> None:
        # Chromium logs every 4xx as an error; the refused schedule is one on purpose.
        if msg.type == "error" and "status of 400" not in msg.text:
            errors.append(msg.text)

    page.on("console", on_console)

    # The history: the run is listed, and the filters find it or not.
    await page.goto(server.url)
    row = page.locator("#runs tbody tr", has_text=job)
    await expect(row.locator(".state")).to_have_text("finished")
    await page.select_option('#run-filters select[name="outcome"]', "failed")
    await page.click('#run-filters button[type="submit"]')
    await expect(page.locator("#runs tbody tr.empty")).to_have_count(1)
    await page.select_option('#run-filters select[name="outcome"]', "finished")
    await page.click('#run-filters button[type="submit"]')
    await expect(row).to_have_count(1)
    await _shot(page, "runs")

    # One run: how it ended, its stats, its log.
    await row.locator("a", has_text=job).click()
    facts = page.locator("#facts")
    await expect(facts).to_contain_text("finished")
    await expect(page.locator("#stats")).to_contain_text("item_scraped_count")
    await expect(page.locator("#log")).to_contain_text("cache at redis://shop:***@")
    assert "hunter2" not in await page.content()
    await _shot(page, "run")

    # Its results: three items, two of them kettles; the export has the same two.
    await page.locator("#files a", has_text="results page").click()
    await expect(page.locator("#items tbody tr")).to_have_count(3)
    await page.fill('input[name="field"]', "name")
    await page.fill('input[name="value"]', "kettle")
    await page.click('form.filters button[type="submit"]')
    await expect(page.locator("#items tbody tr")).to_have_count(2)
    await expect(page.locator("#count")).to_contain_text("2 items match")
    href = await page.locator("#count a", has_text="CSV").get_attribute("href")
    response = await page.request.get(server.url.rstrip("/") + href)
    exported = list(csv.DictReader(io.StringIO(await response.text())))
    assert sorted(r["name"] for r in exported) == ["Blue kettle", "Red kettle"]
    await _shot(page, "results")

    # A URL of the results opens its task page: attempts, state, its item.
    await page.locator("#items a", has_text="/p/2").click()
    await expect(page.locator("#task")).to_contain_text("succeeded")
    await expect(page.locator("#task-items tbody tr")).to_have_count(1)
    await expect(page.locator("#task-items")).to_contain_text("Blue kettle")
    await _shot(page, "task")

    # The run's tasks: the index, three products, and the page that failed.
    await page.locator("a", has_text="all its tasks").click()
    await expect(page.locator("#tasks tbody tr")).to_have_count(5)
    await page.locator("#task-states a", has_text="failed").click()
    failed = page.locator("#tasks tbody tr")
    await expect(failed).to_have_count(1)
    await expect(failed).to_contain_text("/p/9")
    await expect(failed).to_contain_text("503")
    await _shot(page, "tasks")

    # Schedules: a bad cron is refused with the reason; a good one is listed.
    await page.goto(server.url + "schedules")
    form = page.locator("#new-schedule")
    for name, value in {"name": "nightly", "project": "shopbot", "spider": "products"}.items():
        await form.locator(f'input[name="{name}"]').fill(value)
    await form.locator('input[name="cron"]').fill("0 25 * * *")
    await form.locator('button[type="submit"]').click()
    await expect(page.locator("#schedule-error")).to_contain_text("cron hour")
    for name, value in {"name": "nightly", "project": "shopbot", "spider": "products"}.items():
        await form.locator(f'input[name="{name}"]').fill(value)
    await form.locator('input[name="cron"]').fill("0 3 * * *")
    await form.locator('textarea[name="args"]').fill(f"shop={site}")
    await form.locator('button[type="submit"]').click()
    listed = page.locator("#schedules tbody tr", has_text="nightly")
    await expect(listed).to_contain_text("cron 0 3 * * *")
    await expect(listed).to_contain_text("03:00:00 UTC")
    await _shot(page, "schedules")
    await listed.locator("button.delete").click()
    await expect(page.locator("#schedules tbody tr.empty")).to_have_count(1)

    assert errors == []
