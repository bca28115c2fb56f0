"""Scope at download time: OffsiteMiddleware and the Downloader's own guard, against a
real site reachable as 127.0.0.1 and as localhost that counts hits per host, so every
"refused" is also "never reached the server"."""

from __future__ import annotations

import logging
import socket
from typing import Any

import pytest
from aiohttp import web

from skitter.downloader import DownloadHandler, OffsiteMiddleware
from skitter.downloader.middlewares._offsite import OffsiteGuard
from skitter.exceptions import IgnoreRequest, InvalidURL, RequestError, RetryLater
from skitter.http import Request, Response
from skitter.http._scope import Scope

from ..conftest import MakeDownloader, MemoryStats

DISALLOW_ALL = "User-agent: *\nDisallow: /\n"


class Spider:
    """Just what the downloader reads of a spider."""

    def __init__(self, *allowed: Any) -> None:
        self.allowed_domains = list(allowed)


def robots(text: str) -> Any:
    return lambda request: web.Response(text=text)


def stats_of(downloader: Any) -> dict[str, Any]:
    values: MemoryStats = downloader.crawler.stats
    return values.values


async def test_an_offsite_request_is_refused_before_anything_is_sent(
    host_site: Any, make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    site, port = await host_site({"/": "home", "/robots.txt": robots(DISALLOW_ALL)})
    downloader = await make_downloader({"ROBOTSTXT_OBEY": True}, Spider("127.0.0.1"))
    request = Request(f"http://localhost:{port}/")
    with (
        caplog.at_level(logging.INFO, logger="skitter.downloader.offsite"),
        pytest.raises(IgnoreRequest, match=rf"offsite: localhost:{port} is outside") as info,
    ):
        await downloader.fetch(request)
    assert info.value.request is request
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"http://localhost:{port}/other"))
    assert site.on("localhost") == 0  # neither the page nor its robots.txt
    stats = stats_of(downloader)
    assert (stats["offsite/filtered"], stats["offsite/domains"]) == (2, 1)
    assert [r.getMessage() for r in caplog.records] == [
        f"Refused offsite request to 'localhost:{port}' (outside allowed_domains): {request}"
    ]


async def test_robots_txt_redirecting_offsite_is_not_followed(
    host_site: Any, make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    """The old robots.txt fetch followed the hop to localhost and obeyed its rules."""
    site, port = await host_site({"/page": "page", "/robots.txt": robots(DISALLOW_ALL)})
    site.pages["/robots.txt"] = lambda request: (
        web.Response(text=DISALLOW_ALL)
        if request.url.host == "localhost"
        else web.Response(status=302, headers={"Location": f"http://localhost:{port}/robots.txt"})
    )
    downloader = await make_downloader({"ROBOTSTXT_OBEY": True}, Spider("127.0.0.1"))
    with caplog.at_level(logging.WARNING, logger="skitter.downloader.robotstxt"):
        response = await downloader.fetch(Request(f"http://127.0.0.1:{port}/page"))
    assert isinstance(response, Response)
    assert response.status == 200  # no robots.txt: everything allowed, as for a 404
    assert site.on("localhost") == 0
    assert site.hits[("127.0.0.1", "/robots.txt")] == 1
    assert [r.getMessage() for r in caplog.records] == [
        f"robots.txt of http://127.0.0.1:{port} redirects to http://localhost:{port}/robots.txt,"
        " outside allowed_domains; treating as no robots.txt"
    ]
    assert stats_of(downloader)["robotstxt/offsite_redirect"] == 1


async def test_robots_txt_of_an_exempted_request_is_read(
    host_site: Any, make_downloader: MakeDownloader
) -> None:
    site, port = await host_site({"/page": "page", "/robots.txt": robots(DISALLOW_ALL)})
    downloader = await make_downloader({"ROBOTSTXT_OBEY": True}, Spider("127.0.0.1"))
    request = Request(f"http://localhost:{port}/page", meta={"allow_offsite": True})
    with pytest.raises(IgnoreRequest, match=r"robots\.txt"):
        await downloader.fetch(request)
    assert site.hits[("localhost", "/robots.txt")] == 1  # same origin: exempt too


class Sender:
    """A middleware that downloads requests of its own through the layers inside it."""

    fetch: DownloadHandler

    def bind_transport(self, fetch: DownloadHandler) -> None:
        self.fetch = fetch


@pytest.mark.parametrize("offsite_middleware", [True, False])
async def test_requests_made_inside_the_onion_meet_the_guard(
    offsite_middleware: bool, host_site: Any, make_downloader: MakeDownloader
) -> None:
    """No setting removes the centre's guard: switching OffsiteMiddleware off leaves it."""
    site, port = await host_site({"/": "home"})
    middlewares: dict[Any, Any] = {Sender: 300}
    if not offsite_middleware:
        middlewares["skitter.downloader.OffsiteMiddleware"] = None
    downloader = await make_downloader({"DOWNLOADER_MIDDLEWARES": middlewares}, Spider("127.0.0.1"))
    assert (downloader.middleware(OffsiteMiddleware) is not None) is offsite_middleware
    sender = downloader.middleware(Sender)
    with pytest.raises(IgnoreRequest, match="offsite"):
        await sender.fetch(Request(f"http://localhost:{port}/"))
    with pytest.raises(IgnoreRequest, match="offsite"):
        await downloader.fetch(Request(f"http://localhost:{port}/"))
    ok = await sender.fetch(Request(f"http://127.0.0.1:{port}/"))
    assert isinstance(ok, Response)
    assert site.on("localhost") == 0
    assert stats_of(downloader)["offsite/domains"] == 1  # one guard, one count per host


async def test_only_allow_offsite_exempts_a_request(
    host_site: Any, make_downloader: MakeDownloader
) -> None:
    site, port = await host_site({"/": "home"})
    downloader = await make_downloader(spider=Spider("127.0.0.1"))
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"http://localhost:{port}/", dont_filter=True))
    assert site.on("localhost") == 0
    response = await downloader.fetch(
        Request(f"http://localhost:{port}/", meta={"allow_offsite": True})
    )
    assert isinstance(response, Response)
    assert site.on("localhost") == 1


async def test_a_bare_host_allows_every_port_and_host_port_only_that_port(
    host_site: Any, make_downloader: MakeDownloader
) -> None:
    one, port1 = await host_site({"/": "one"})
    two, port2 = await host_site({"/": "two"})
    every = await make_downloader(spider=Spider("127.0.0.1"))
    for port in (port1, port2):
        assert isinstance(await every.fetch(Request(f"http://127.0.0.1:{port}/")), Response)
    only = await make_downloader(spider=Spider(f"127.0.0.1:{port1}"))
    assert isinstance(await only.fetch(Request(f"http://127.0.0.1:{port1}/")), Response)
    with pytest.raises(IgnoreRequest, match=f"127.0.0.1:{port2}"):
        await only.fetch(Request(f"http://127.0.0.1:{port2}/"))
    assert (one.on("127.0.0.1"), two.on("127.0.0.1")) == (2, 1)


async def test_localhost_and_127_0_0_1_are_different_hosts(
    host_site: Any, make_downloader: MakeDownloader
) -> None:
    site, port = await host_site({"/": "home"})
    downloader = await make_downloader(spider=Spider("localhost"))
    assert isinstance(await downloader.fetch(Request(f"http://localhost:{port}/")), Response)
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"http://127.0.0.1:{port}/"))
    assert (site.on("localhost"), site.on("127.0.0.1")) == (1, 0)


@pytest.mark.parametrize("entries", [["127.1"], [""], ["127.0.0.1:0"], ["::zz", "ex ample"]])
async def test_unusable_entries_fail_closed_and_are_reported(
    entries: list[str],
    host_site: Any,
    make_downloader: MakeDownloader,
    caplog: pytest.LogCaptureFixture,
) -> None:
    site, port = await host_site({"/": "home"})
    with caplog.at_level(logging.WARNING, logger="skitter.scope"):
        downloader = await make_downloader(spider=Spider(*entries))  # reported at start
    messages = [r.getMessage() for r in caplog.records]
    for entry in entries:
        assert any(repr(entry) in m and "unusable" in m for m in messages), messages
    assert "every request is offsite" in messages[-1]
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"http://127.0.0.1:{port}/"))
    assert site.on("127.0.0.1") == 0


def ipv6_loopback() -> None:
    """Skip (loudly, with the reason) when this machine cannot listen on ::1."""
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError as exc:
        pytest.skip(f"cannot listen on ::1 here ({exc}): IPv6 entries untested end to end")


@pytest.mark.parametrize("entry", ["::1", "[::1]", "[::1]:{port}", "0:0:0:0:0:0:0:1"])
async def test_ipv6_literal_entries(
    entry: str, host_site: Any, make_downloader: MakeDownloader
) -> None:
    """The old filter reduced "::1" to "" and allowed every host."""
    ipv6_loopback()
    v6, port = await host_site({"/": "six"}, host="::1")
    v4, port4 = await host_site({"/": "four"})
    downloader = await make_downloader(spider=Spider(entry.format(port=port)))
    response = await downloader.fetch(Request(f"http://[::1]:{port}/"))
    assert isinstance(response, Response)
    assert response.text.endswith("six</body></html>")
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"http://127.0.0.1:{port4}/"))
    if "{port}" in entry:
        with pytest.raises(IgnoreRequest):
            await downloader.fetch(Request(f"http://[::1]:{port + 1}/"))
    assert (v6.on("::1"), v4.on("127.0.0.1")) == (1, 0)


async def test_urls_the_check_and_the_transport_could_read_differently(
    host_site: Any, make_downloader: MakeDownloader
) -> None:
    """Only 127.0.0.1:A is allowed; each URL mixes in B. Whatever the URL, the request is
    refused, fails, or reaches A: B never sees one."""
    a, port_a = await host_site({"/": "a"})
    b, port_b = await host_site({"/": "b", "/@127.0.0.1": "b"})
    A, B = f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"
    urls = [
        f"http://{A}@{B}/",
        f"http://{B}#@{A}/",
        f"http://{B}?@{A}/",
        f"http://{B}/@{A}",
        f"http://{B}\\@{A}/",
        f"http://{A}\\@{B}/",
        f"http://{B}%40{A}/",
        f"http://{A}%2F@{B}/",
        f"http://user:pw@{B}/",
        f"http://{A}:{port_b}/",
        f"http://[::ffff:127.0.0.1]:{port_b}/",
        f"http://127.1:{port_b}/",
        f"http://0x7f.0.0.1:{port_b}/",
        f"http://2130706433:{port_b}/",
        f"http://127.0.0.1.:{port_b}/",
        f"http://127.0.0.1\t:{port_b}/",
        f"http://[{A}]/",
        f"http://{B.replace('.', '。')}/",
        f"HTTP://{B}/",
        f"http://{A}/",  # the control: this one gets through
        f"http://user:pw@{A}/",
        "http://127\t.0.0.1:" + f"{port_a}/",  # yarl drops the tab, as WHATWG says
    ]
    downloader = await make_downloader(spider=Spider(A))
    got_through = []
    for url in urls:
        try:
            result = await downloader.fetch(Request(url))
        except (IgnoreRequest, InvalidURL, RequestError, RetryLater):  # refused, or failed
            continue
        assert isinstance(result, Response)
        got_through.append(url)
    assert b.on("127.0.0.1") == 0, b.hits
    assert a.on("127.0.0.1") == len(got_through) == 3


def test_spider_opened_reads_the_domains_a_spider_set_after_the_middleware_was_built() -> None:
    middleware = OffsiteMiddleware(OffsiteGuard(Scope.of(Spider("a.example")), MemoryStats()))
    request = Request("http://b.example/")
    with pytest.raises(IgnoreRequest):
        middleware.process_request(request)
    with pytest.raises(IgnoreRequest):
        middleware.request_scheduled(request, None)
    middleware.spider_opened(Spider("b.example"))  # as Scrapy calls it, spider_opened
    assert middleware.process_request(request) is None
    assert middleware.request_scheduled(request, None) is None


def test_scrapys_should_follow_hook_and_domains_seen() -> None:
    class RootOnly(OffsiteMiddleware):
        def should_follow(self, request: Request, spider: Any) -> bool:
            return request.parsed_url.host in spider.allowed_domains

    spider = Spider("a.example")
    middleware = RootOnly(OffsiteGuard(Scope.of(spider), MemoryStats()))
    middleware.spider_opened(spider)
    assert middleware.process_request(Request("http://a.example/")) is None
    with pytest.raises(IgnoreRequest):
        middleware.process_request(Request("http://www.a.example/"))  # in scope, refused
    assert middleware.domains_seen == {"www.a.example"}
