"""Sessions and proxy pools against real servers on 127.0.0.1.

The site hands every visitor without a ``sid`` cookie a new one and blocks a visitor
(403 with a ban text) from its sixth request on, as an anti-bot service would. The
proxies are small aiohttp forwarding proxies started by the test; a "dead" proxy is a
port nobody listens on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from skitter import Crawler, Request, Response, Spider
from skitter.dashboard._views import project_detail
from skitter.downloader import ProxyPoolMiddleware, SessionMiddleware
from skitter.exceptions import Blocked, ConfigError, CrawlFailed
from skitter.testing import refused_port

from ..conftest import MakeDownloader

PAGES = 40
LIMIT = 5  # requests per session before the site blocks it

HITS = web.AppKey("hits", dict[str, int])
SEEN = web.AppKey("seen", list[str])
#: The site's visitor ids (the ``sid`` cookie) each proxy carried.
SIDS = web.AppKey("sids", set[str])


def blocking_site(pages: int = PAGES, limit: int = LIMIT) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        hits = request.app[HITS]
        sid = request.cookies.get("sid")
        headers = {}
        if sid is None:
            sid = str(len(hits) + 1)
            headers["Set-Cookie"] = f"sid={sid}; Path=/"
        hits[sid] = hits.get(sid, 0) + 1
        if hits[sid] > limit:
            return web.Response(status=403, text="<h1>Access denied: you are banned</h1>")
        n = int(request.match_info.get("n", "0"))
        links = ""
        if n == 0:
            links = "".join(f'<a href="/page/{i}">{i}</a>' for i in range(1, pages))
        return web.Response(
            text=f"<title>page {n}</title>{links}", content_type="text/html", headers=headers
        )

    app = web.Application()
    app[HITS] = {}
    app.router.add_get("/", page)
    app.router.add_get("/page/{n}", page)
    return app


def forwarding_proxy() -> web.Application:
    """An HTTP proxy for absolute-form requests to 127.0.0.1 (cookies both ways)."""

    async def forward(request: web.Request) -> web.Response:
        request.app[SEEN].append(request.raw_path)
        if "sid" in request.cookies:
            request.app[SIDS].add(request.cookies["sid"])
        assert request.url.host == "127.0.0.1", "the test proxy only forwards to loopback"
        headers = {k: v for k, v in request.headers.items() if k.lower() == "cookie"}
        async with (
            aiohttp.ClientSession() as session,
            session.get(str(request.url), headers=headers, allow_redirects=False) as upstream,
        ):
            body = await upstream.read()
            out = [("Set-Cookie", v) for v in upstream.headers.getall("Set-Cookie", ())]
            response = web.Response(status=upstream.status, body=body, headers={"Via": "test"})
            for name, value in out:
                response.headers.add(name, value)
            response.content_type = upstream.content_type
            return response

    app = web.Application()
    app[SEEN] = []
    app[SIDS] = set()
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


def dead_proxy() -> str:
    return f"http://127.0.0.1:{refused_port()}"


class Pages(Spider):
    name = "pages"
    custom_settings: dict[str, Any] = {}

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/")

    def parse(self, response: Response) -> Any:
        yield {"url": response.url, "session": response.meta.get("session_id")}
        yield from response.follow_all(css="a")


FAST = {"RETRY_DELAYS": [0.0], "CONCURRENT_REQUESTS": 4, "LOG_LEVEL": "WARNING"}


class Collect:
    items: list[dict[str, Any]] = []

    def process_item(self, item: dict[str, Any], spider: Spider) -> dict[str, Any]:
        Collect.items.append(item)
        return item


def crawler_for(settings: dict[str, Any], job_dir: Path | None = None) -> Crawler:
    Collect.items = []
    return Crawler(Pages, {**FAST, "ITEM_PIPELINES": {Collect: 100}, **settings}, job_dir=job_dir)


async def crawl(settings: dict[str, Any], job_dir: Path | None = None) -> dict[str, Any]:
    return await crawler_for(settings, job_dir).run()


async def test_a_blocking_site_is_crawled_completely_with_four_sessions(serve: Any) -> None:
    app = blocking_site()
    base = await serve(app)
    stats = await crawl({"BASE": base, "SESSION_POOL_SIZE": 4})
    assert stats["finish_reason"] == "finished"
    assert len({item["url"] for item in Collect.items}) == PAGES
    # Every session made 5 good requests and then one blocked one (bar the last few).
    retired = stats["sessions/retired/blocked"]
    assert retired >= (PAGES - 4 * LIMIT) // LIMIT
    assert stats["sessions/created"] == retired + 4  # the 4 live at the end
    # Each block sent its request again (two requests of one session may be blocked
    # at once: the session is retired once, both go again).
    assert stats["sessions/block_retries"] == stats["downloader/response_status_count/403"]
    assert stats["sessions/block_retries"] >= retired
    # A block is no failed attempt of the task: nothing was retried nor failed.
    assert "retry/count" not in stats
    assert "engine/failed_requests/Blocked" not in stats
    assert all(item["session"] for item in Collect.items)


async def test_without_sessions_the_same_site_is_not_crawled_completely(serve: Any) -> None:
    base = await serve(blocking_site())
    await crawl({"BASE": base})
    assert len(Collect.items) == LIMIT  # the regression the session pool fixes


async def test_max_uses_retires_sessions_before_the_site_does(serve: Any) -> None:
    app = blocking_site()
    base = await serve(app)
    stats = await crawl({"BASE": base, "SESSION_POOL_SIZE": 2, "SESSION_MAX_USES": LIMIT})
    assert len(Collect.items) == PAGES
    # 40 uses, 5 a session: 8 sessions, less the (at most 2) live ones not used up.
    assert PAGES // LIMIT - 2 <= stats["sessions/retired/max_uses"] <= PAGES // LIMIT
    assert "sessions/retired/blocked" not in stats
    assert max(app[HITS].values()) == LIMIT


async def test_a_site_that_blocks_everything_fails_the_task_with_a_reason(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    base = await serve(blocking_site(limit=0))
    downloader = await make_downloader({"SESSION_POOL_SIZE": 2, "SESSION_MAX_BLOCK_RETRIES": 3})
    with pytest.raises(Blocked, match=r"blocked on 4 sessions in a row .*access denied"):
        await downloader.fetch(Request(f"{base}/"))
    stats = downloader.crawler.stats.values
    assert stats["sessions/retired/blocked"] == 4
    assert stats["sessions/gave_up"] == 1


async def test_a_request_is_stamped_with_its_session(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    base = await serve(blocking_site())
    downloader = await make_downloader(
        {"SESSION_POOL_SIZE": 1, "SESSION_FINGERPRINTS": ["chrome124"]}
    )
    first = Request(f"{base}/")
    await downloader.fetch(first)
    assert first.meta["session_id"] == "s1"
    assert first.meta["cookiejar"] == "session:s1"
    assert first.meta["impersonate"] == "chrome124"
    own = Request(f"{base}/page/1", meta={"cookiejar": "mine", "impersonate": "safari"})
    await downloader.fetch(own)
    assert own.meta["cookiejar"] == "mine" and own.meta["impersonate"] == "safari"


@pytest.mark.parametrize(("scope", "ids"), [("slot", ["s1", "s2", "s1"]), ("project", ["s1"] * 3)])
async def test_sessions_are_per_slot_or_per_project(
    serve: Any, make_downloader: MakeDownloader, scope: str, ids: list[str]
) -> None:
    base = await serve(blocking_site())
    downloader = await make_downloader({"SESSION_POOL_SIZE": 1, "SESSION_POOL_SCOPE": scope})
    requests = [
        Request(f"{base}/page/1"),
        Request(f"{base}/page/2", meta={"download_slot": "elsewhere"}),
        Request(f"{base}/page/3"),
    ]
    for request in requests:
        await downloader.fetch(request)
    assert [r.meta["session_id"] for r in requests] == ids


async def test_fingerprints_without_an_impersonating_transport_are_warned_of(
    make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    await make_downloader({"SESSION_POOL_SIZE": 1, "SESSION_FINGERPRINTS": ["chrome"]})
    assert "honoured by the curl transport only" in caplog.text


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SESSION_POOL_SIZE": 0, "SESSION_FINGERPRINTS": ["chrome"]}, "SESSION_POOL_SIZE is 0"),
        (
            {"SESSION_POOL_SIZE": 2, "SESSION_FINGERPRINTS": ["chrome", "netscape4"]},
            "no browser profile netscape4",
        ),
    ],
    ids=["no-sessions", "unknown-profile"],
)
async def test_fingerprints_that_would_do_nothing_are_refused_at_start(
    make_downloader: MakeDownloader, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await make_downloader({**settings, "DOWNLOAD_TRANSPORT": "curl"})


async def test_a_spiders_is_blocked_hook_retires_sessions(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    base = await serve(blocking_site())
    seen: list[str] = []

    class Picky:
        def is_blocked(self, response: Response) -> bool:
            seen.append(response.meta["session_id"])
            return len(seen) == 1  # the first answer is a soft block

    downloader = await make_downloader({"SESSION_POOL_SIZE": 1}, spider=Picky())
    request = Request(f"{base}/")
    response = await downloader.fetch(request)
    assert isinstance(response, Response) and response.status == 200
    assert seen == ["s1", "s2"]
    assert request.meta["session_id"] == "s2"


async def test_retired_sessions_leave_no_cookie_jar_behind(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    base = await serve(blocking_site())
    downloader = await make_downloader({"SESSION_POOL_SIZE": 1})
    for i in range(3 * LIMIT):
        await downloader.fetch(Request(f"{base}/page/{i}"))
    sessions = downloader.middleware(SessionMiddleware)
    # s1 blocked at request 6, s2 at request 11 (each retried on the next session).
    assert [s.id for s in sessions.pool.live()] == ["s3"]
    assert set(sessions.cookies.jars) == {"session:s3"}


# -- proxies ----------------------------------------------------------------------------


async def test_proxies_rotate_and_a_dead_one_is_skipped(serve: Any) -> None:
    site = blocking_site(limit=10_000)
    base = await serve(site)
    first, second = forwarding_proxy(), forwarding_proxy()
    dead = dead_proxy()
    proxies = [await serve(first), dead, await serve(second)]
    proxies[2] = proxies[2].replace("http://", "http://user:hunter2@")
    crawler = crawler_for({"BASE": base, "PROXY_LIST": proxies})
    stats = await crawler.run()
    assert stats["finish_reason"] == "finished"
    assert len(Collect.items) == PAGES
    assert len(first[SEEN]) + len(second[SEEN]) == PAGES
    assert abs(len(first[SEEN]) - len(second[SEEN])) <= 2  # turns, not one proxy
    label = dead.removeprefix("http://")
    # Down after its first failure, then skipped (only requests already on their way
    # to it when it failed, at most CONCURRENT_REQUESTS, tried it too).
    tried = stats[f"proxy/{label}/requests"]
    assert stats[f"proxy/{label}/failures"] == tried <= FAST["CONCURRENT_REQUESTS"]
    # The dashboard's rows: one per proxy, by label, never with its password.
    rows = (await project_detail(crawler.control))["proxies"]
    assert [(row["proxy"], row["state"]) for row in rows] == [
        (proxies[0].removeprefix("http://"), "up"),
        (label, "down"),
        (proxies[2].removeprefix("http://user:hunter2@"), "up"),
    ]
    assert sum(row["requests"] for row in rows) == PAGES + tried
    assert "hunter2" not in repr(rows) + repr(stats)
    assert "retry/count" not in stats  # the request went on to the next proxy at once


async def test_sessions_keep_their_proxy_and_blocks_are_survived_through_proxies(
    serve: Any,
) -> None:
    base = await serve(blocking_site())
    first, second = forwarding_proxy(), forwarding_proxy()
    proxies = [await serve(first), dead_proxy(), await serve(second)]
    settings = {"BASE": base, "SESSION_POOL_SIZE": 4, "PROXY_LIST": proxies}
    # One at a time: a new session learns its proxy from its first response.
    stats = await crawl({**settings, "CONCURRENT_REQUESTS": 1})
    assert len(Collect.items) == PAGES
    assert stats["sessions/retired/blocked"] >= 1
    assert first[SEEN] and second[SEEN]
    # Each visitor the site knows came through one proxy only.
    assert first[SIDS] and second[SIDS] and not first[SIDS] & second[SIDS]


async def test_robots_txt_goes_through_a_session_and_the_pools_proxy(serve: Any) -> None:
    base = await serve(blocking_site(pages=3, limit=100))
    proxy = forwarding_proxy()
    settings = {"BASE": base, "SESSION_POOL_SIZE": 1, "ROBOTSTXT_OBEY": True}
    stats = await crawl({**settings, "PROXY_LIST": [await serve(proxy)]})
    assert len(Collect.items) == 3
    assert proxy[SEEN][0] == f"{base}/robots.txt"
    assert stats["robotstxt/response_status_count/404"] == 1


async def test_a_task_blocked_on_every_session_fails_with_blocked(serve: Any) -> None:
    base = await serve(blocking_site(limit=0))
    errors: list[BaseException] = []

    class Errback(Pages):
        name = "errback"

        def start_requests(self) -> Any:
            yield Request(self.settings["BASE"] + "/", errback=self.failed)

        def failed(self, failure: Any) -> None:
            errors.append(failure.value)

    settings = {**FAST, "BASE": base, "SESSION_POOL_SIZE": 2, "SESSION_MAX_BLOCK_RETRIES": 2}
    stats = await Crawler(Errback, settings).run()
    assert [type(e) for e in errors] == [Blocked]
    assert stats["sessions/retired/blocked"] == 3
    assert "retry/count" not in stats  # failed at once: retrying would block again
    with pytest.raises(CrawlFailed) as failed:  # its one start request got nowhere
        await crawl({"BASE": base, "SESSION_POOL_SIZE": 2, "SESSION_MAX_BLOCK_RETRIES": 2})
    stats = failed.value.stats
    assert stats["engine/failed_requests/Blocked"] == 1  # without an errback: counted


async def test_tiered_proxies_escalate_a_host_that_blocks_the_cheap_tier(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    base = await serve(blocking_site(limit=10_000))
    cheap, good = forwarding_proxy(), forwarding_proxy()

    class BlocksCheap:
        def is_blocked(self, response: Response) -> bool:
            return response.meta["_proxy_pool"] == 0

    downloader = await make_downloader(
        {"PROXY_LIST": [[await serve(cheap)], [await serve(good)]], "PROXY_ROTATION": "tiered"},
        spider=BlocksCheap(),
    )
    for i in range(3):
        response = await downloader.fetch(Request(f"{base}/page/{i}"))
        assert isinstance(response, Response) and response.status == 200
    assert len(cheap[SEEN]) == 1 and len(good[SEEN]) == 3
    assert downloader.crawler.stats.values["proxy/tier_escalations"] == 1


async def test_a_request_with_its_own_proxy_keeps_it(
    serve: Any, make_downloader: MakeDownloader
) -> None:
    base = await serve(blocking_site())
    pooled, own = forwarding_proxy(), forwarding_proxy()

    class Local:
        allowed_schemes = ["data"]

    downloader = await make_downloader({"PROXY_LIST": [await serve(pooled)]}, spider=Local())
    own_url = await serve(own)
    await downloader.fetch(Request(f"{base}/", meta={"proxy": own_url}))
    await downloader.fetch(Request(f"{base}/", meta={"proxy": None}))
    data = Request("data:text/plain,local")
    await downloader.fetch(data)
    assert len(own[SEEN]) == 1 and pooled[SEEN] == []
    assert "proxy" not in data.meta


async def test_a_bad_proxy_url_is_refused_at_start(make_downloader: MakeDownloader) -> None:
    with pytest.raises(ConfigError, match=r"PROXY_LIST: 'ftp://u:\*\*\*@x.test'"):
        await make_downloader({"PROXY_LIST": ["ftp://u:pw@x.test"]})


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"SESSION_POOL_SCOPE": "host"}, "SESSION_POOL_SCOPE must be one of slot, project"),
        ({"PROXY_ROTATION": "random"}, "PROXY_ROTATION must be one of round_robin, tiered"),
        ({"SESSION_POOL_SIZE": -1}, "SESSION_POOL_SIZE must be >= 0"),
        ({"SESSION_POOL_SIZE": 1, "SESSION_MAX_BLOCK_RETRIES": -1}, "SESSION_MAX_BLOCK_RETRIES"),
    ],
)
async def test_a_bad_setting_is_refused_even_when_unused(
    make_downloader: MakeDownloader, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await make_downloader(settings)


async def test_no_pool_no_middleware(make_downloader: MakeDownloader) -> None:
    downloader = await make_downloader()
    assert downloader.middleware(SessionMiddleware) is None
    assert downloader.middleware(ProxyPoolMiddleware) is None


# -- persistence ------------------------------------------------------------------------


async def test_sessions_survive_a_resumed_job(serve: Any, tmp_path: Path) -> None:
    app = blocking_site(pages=3, limit=100)
    base = await serve(app)
    job = tmp_path / "job"
    settings = {"BASE": base, "SESSION_POOL_SIZE": 1, "CONCURRENT_REQUESTS": 1}
    await crawl(settings, job)
    assert app[HITS] == {"1": 3}
    crawler = Crawler(Pages, {**FAST, **settings}, job_dir=job, job_mode="recrawl")
    stats = await crawler.run()
    assert stats["finish_reason"] == "finished"
    assert app[HITS] == {"1": 6}  # the same session, with its cookie, after the restart
    assert stats["sessions/created"] == 1


async def test_a_retired_sessions_cookies_leave_the_job_directory(
    serve: Any, tmp_path: Path
) -> None:
    base = await serve(blocking_site(pages=12))
    job = tmp_path / "job"
    stats = await crawl({"BASE": base, "SESSION_POOL_SIZE": 1, "CONCURRENT_REQUESTS": 1}, job)
    assert len(Collect.items) == 12
    assert stats["sessions/retired/blocked"] == 2  # at requests 6 and 11
    jars = sorted(bytes.fromhex(p.name.removesuffix(".json")) for p in (job / "cookies").iterdir())
    assert jars == [b'"session:s3"']


async def test_a_proxy_password_is_never_stored(serve: Any, tmp_path: Path) -> None:
    base = await serve(blocking_site(pages=3))
    proxy = (await serve(forwarding_proxy())).replace("http://", "http://user:hunter2@")
    job = tmp_path / "job"
    await crawl({"BASE": base, "SESSION_POOL_SIZE": 2, "PROXY_LIST": [proxy]}, job)
    for path in job.rglob("*"):
        if path.is_file():
            assert b"hunter2" not in path.read_bytes(), path
