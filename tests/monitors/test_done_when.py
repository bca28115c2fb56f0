"""Issue 35's "done when", end to end as a user runs it: ``skitter crawl`` of a local
shop whose markup changes halfway fails its coverage monitor naming the field, sends
one webhook and one e-mail (received by real servers on 127.0.0.1), writes its report
beside the feed and exits 3; the same crawl of an unchanged shop passes, sends nothing
and exits 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aiohttp import web

from .conftest import Cli, Mailbox, Receiver, Serve

SPIDER = """
from skitter import Request, Spider

class Shop(Spider):
    name = "shop"
    custom_settings = {{
        "MONITOR_FIELD_COVERAGE": {{"price": 0.9, "name": 1.0}},
        "MONITOR_MIN_ITEMS": 10,
        "ALERT_WEBHOOKS": [{hook!r}],
        "ALERT_EMAIL_TO": ["ops@example.com"],
        "MAIL_HOST": "127.0.0.1",
        "MAIL_PORT": {port},
        "MAIL_FROM": "crawler@example.com",
    }}

    async def start(self):
        yield Request({base!r} + "/")

    def parse(self, response):
        yield from response.follow_all(css="a", callback=self.parse_item)

    def parse_item(self, response):
        yield {{
            "name": response.css("h1::text").get(),
            "price": response.css(".price::text").get(),
        }}
"""


def shop(changed_after: int | None) -> web.Application:
    """20 product pages; from ``changed_after`` on, the price moved to another class."""

    async def listing(request: web.Request) -> web.Response:
        links = "".join(f'<a href="/p/{n}">product {n}</a>' for n in range(1, 21))
        return web.Response(text=f"<html><body>{links}</body></html>", content_type="text/html")

    async def product(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        css = "cost" if changed_after is not None and n > changed_after else "price"
        body = f'<html><h1>product {n}</h1><span class="{css}">{n}.50</span></html>'
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", listing)
    app.router.add_get("/p/{n}", product)
    return app


async def crawl(
    cli: Cli, tmp_path: Path, base: str, receiver: Receiver, mailbox: Mailbox, **edit: str
) -> tuple[int, str, Any]:
    """Run the shop spider against ``base``; ``edit`` replaces parts of its settings."""
    source = SPIDER.format(hook=receiver.url("slack"), port=mailbox.port, base=base)
    for old, new in edit.items():
        source = source.replace(old, new)
    spider = tmp_path / "shop.py"
    spider.write_text(source)
    run = await cli("crawl", str(spider), "-O", "items.jsonl", "--no-progress")
    report = json.loads((tmp_path / "shop.report.json").read_text())
    return run.code, run.err, report


async def test_a_crawl_whose_markup_changed_fails_alerts_and_reports(
    cli: Cli, tmp_path: Path, serve: Serve, receiver: Receiver, mailbox: Mailbox
) -> None:
    code, err, report = await crawl(cli, tmp_path, await serve(shop(10)), receiver, mailbox)
    assert code == 3, err
    assert "field_coverage: price filled in 50.0 % of 20 items (min 90.0 %)" in err
    lines = (tmp_path / "items.jsonl").read_text().splitlines()
    assert len(lines) == 20  # the items are all written: the monitors judge, not drop

    [post] = receiver.posts["slack"]
    assert "monitors failed" in post["text"] and "price filled in 50.0 %" in post["text"]
    [mail] = mailbox.messages
    assert mail["Subject"] == "[skitter] shop: monitors failed"
    assert mail["To"] == "ops@example.com" and mail["From"] == "crawler@example.com"
    text = mail.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "FAIL field_coverage: price filled in 50.0 %" in text
    page = mail.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert "<h2>Field coverage</h2>" in page  # the report itself, for the mail reader

    assert report["status"] == "failed" and report["final"] is True
    by_name = {m["name"]: m for m in report["monitors"]}
    assert by_name["field_coverage"]["status"] == "failed"
    assert by_name["min_items"]["status"] == "passed"
    assert report["coverage"] == {"dict": {"name": 1.0, "price": 0.5}}
    assert [a["delivered"] for a in report["alerts"]] == [True, True, True]
    page = (tmp_path / "shop.report.html").read_text()
    assert "field_coverage" in page and "price filled in 50.0 %" in page


async def test_a_crawl_within_bounds_passes_and_sends_nothing(
    cli: Cli, tmp_path: Path, serve: Serve, receiver: Receiver, mailbox: Mailbox
) -> None:
    code, err, report = await crawl(cli, tmp_path, await serve(shop(None)), receiver, mailbox)
    assert code == 0, err
    assert receiver.posts == {} and mailbox.messages == []
    assert report["status"] == "passed"
    assert report["coverage"] == {"dict": {"name": 1.0, "price": 1.0}}
    assert report["alerts"] == []


async def test_a_monitor_that_only_warns_alerts_but_exits_0(
    cli: Cli, tmp_path: Path, serve: Serve, receiver: Receiver, mailbox: Mailbox
) -> None:
    warn_only = {'"MONITOR_MIN_ITEMS": 10,': '"MONITOR_LEVELS": {"field_coverage": "warn"},'}
    code, err, report = await crawl(
        cli, tmp_path, await serve(shop(10)), receiver, mailbox, **warn_only
    )
    assert code == 0, err
    assert report["status"] == "warned"
    [post] = receiver.posts["slack"]
    assert "monitors warned" in post["text"] and "WARN field_coverage" in post["text"]
    assert len(mailbox.messages) == 1
