"""Cookie jars: meta["cookiejar"] keeps sessions apart, dont_merge_cookies, cookies set by
redirects, COOKIES_DEBUG with masked values, and jars kept in the job directory (0600)
so that a resumed job is still logged in. A real local server sets and checks the cookies."""

from __future__ import annotations

import logging
import stat
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from skitter import CloseSpider, ConfigError, Crawler, Request, Response, Spider
from skitter.downloader import CookiesMiddleware, Downloader
from skitter.downloader.middlewares._cookiejar_files import CookieJarFiles
from skitter.exceptions import StorageError

from ..conftest import MakeDownloader

SECRET = "s3ss10n-t0ken"


class Site:
    """``/login?user=U`` sets ``session=<U>-SECRET`` and redirects to ``/home``;
    ``/whoami`` answers with the session it was sent."""

    def __init__(self) -> None:
        self.sessions: dict[str, str | None] = {}
        self.app = web.Application()
        self.app.router.add_get("/login", self.login)
        self.app.router.add_get("/home", self.home)
        self.app.router.add_get("/whoami", self.whoami)
        self.app.router.add_get("/account", self.account)

    async def login(self, request: web.Request) -> web.Response:
        response = web.Response(status=302, headers={"Location": "/home"})
        response.set_cookie("session", f"{request.query.get('user', 'me')}-{SECRET}")
        return response

    async def home(self, request: web.Request) -> web.Response:
        self.sessions["/home"] = request.cookies.get("session")
        return web.Response(text="<html>home</html>", content_type="text/html")

    async def whoami(self, request: web.Request) -> web.Response:
        return web.Response(text=request.cookies.get("session", "nobody"))

    async def account(self, request: web.Request) -> web.Response:
        self.sessions["/account"] = request.cookies.get("session")
        return web.Response(text="<html>account</html>", content_type="text/html")


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    site = Site()
    return site, await serve(site.app)


async def fetch_all(downloader: Downloader, request: Request) -> Response:
    result = await downloader.fetch(request)
    while isinstance(result, Request):
        result = await downloader.fetch(result)
    return result


async def test_jars_keep_sessions_apart(
    site: tuple[Site, str], make_downloader: MakeDownloader
) -> None:
    _, base = site
    downloader = await make_downloader()
    for user in ("ann", "bob"):
        await fetch_all(downloader, Request(f"{base}/login?user={user}", meta={"cookiejar": user}))
    for user in ("ann", "bob"):
        answer = await fetch_all(downloader, Request(f"{base}/whoami", meta={"cookiejar": user}))
        assert answer.text == f"{user}-{SECRET}"
    assert (await fetch_all(downloader, Request(f"{base}/whoami"))).text == "nobody"


async def test_a_cookie_set_by_a_redirect_is_kept(
    site: tuple[Site, str], make_downloader: MakeDownloader
) -> None:
    shop, base = site
    downloader = await make_downloader()
    await fetch_all(downloader, Request(f"{base}/login?user=ann"))
    assert shop.sessions["/home"] == f"ann-{SECRET}"


async def test_dont_merge_cookies(site: tuple[Site, str], make_downloader: MakeDownloader) -> None:
    _, base = site
    downloader = await make_downloader()
    alone = {"dont_merge_cookies": True}
    await fetch_all(downloader, Request(f"{base}/login?user=ann", meta=alone))
    assert (await fetch_all(downloader, Request(f"{base}/whoami"))).text == "nobody"
    await fetch_all(downloader, Request(f"{base}/login?user=ann"))
    own = Request(f"{base}/whoami", headers={"Cookie": "session=mine"}, meta=alone)
    assert (await fetch_all(downloader, own)).text == "mine"


async def test_cookies_debug_logs_names_never_values(
    site: tuple[Site, str], make_downloader: MakeDownloader, caplog: pytest.LogCaptureFixture
) -> None:
    _, base = site
    downloader = await make_downloader({"COOKIES_DEBUG": True})
    with caplog.at_level(logging.DEBUG, logger="skitter.downloader.cookies"):
        await fetch_all(downloader, Request(f"{base}/login?user=ann"))
    assert "Received cookies from: <302 " in caplog.text
    assert "Set-Cookie: session=***; Path=/" in caplog.text
    assert "Sending cookies to: <GET " in caplog.text
    assert "Cookie: session=***" in caplog.text
    assert SECRET not in caplog.text
    caplog.clear()
    quiet = await make_downloader()
    with caplog.at_level(logging.DEBUG, logger="skitter.downloader.cookies"):
        await fetch_all(quiet, Request(f"{base}/login?user=ann"))
    assert "cookies" not in caplog.text


class Session(Spider):
    """Run 1 logs in and stops with /account queued; run 2 (resumed) fetches it."""

    name = "session"
    custom_settings = {"ROBOTSTXT_OBEY": False, "LOG_LEVEL": "DEBUG", "COOKIES_DEBUG": True}

    def start_requests(self) -> Any:
        yield Request(self.settings["BASE"] + "/login?user=ann", callback=self.logged_in)

    def logged_in(self, response: Response) -> Any:
        yield Request(self.settings["BASE"] + "/account", meta={"dont_redirect": True})
        raise CloseSpider("paused")

    def parse(self, response: Response) -> Any:
        yield {"url": response.url}


async def test_a_resumed_job_keeps_its_session(
    site: tuple[Site, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shop, base = site
    job = tmp_path / "job"
    with caplog.at_level(logging.DEBUG):
        first = await Crawler(Session, {"BASE": base}, job_dir=job).run()
        assert first["finish_reason"] == "paused"
        assert "/account" not in shop.sessions
        jars = list((job / "cookies").iterdir())
        assert len(jars) == 1
        assert stat.S_IMODE((job / "cookies").stat().st_mode) == 0o700
        assert stat.S_IMODE(jars[0].stat().st_mode) == 0o600
        second = await Crawler(Session, {"BASE": base}, job_dir=job).run()
    assert second["item_scraped_count"] == 1
    assert shop.sessions["/account"] == f"ann-{SECRET}"  # still logged in
    assert SECRET not in caplog.text  # COOKIES_DEBUG and all: never logged
    assert "1 cookie jars restored" in caplog.text


async def test_fresh_forgets_and_persist_off_keeps_nothing(
    site: tuple[Site, str], tmp_path: Path
) -> None:
    shop, base = site
    job = tmp_path / "job"
    await Crawler(Session, {"BASE": base}, job_dir=job).run()
    assert list((job / "cookies").iterdir())
    await Crawler(Session, {"BASE": base}, job_dir=job, job_mode="fresh").run()
    # Fresh: the old jar is gone before the run; this run's login made a new one.
    assert shop.sessions.get("/account") is None
    other = tmp_path / "other"
    await Crawler(Session, {"BASE": base, "COOKIES_PERSIST": False}, job_dir=other).run()
    assert not (other / "cookies").exists()


async def test_jar_keys_round_trip_and_bad_files_are_refused(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    _, base = site
    downloader = await make_downloader()
    for key in ("ann", 7, None):
        await fetch_all(downloader, Request(f"{base}/login?user={key}", meta={"cookiejar": key}))
    cookies = downloader.middleware(CookiesMiddleware)
    files = CookieJarFiles(tmp_path / "cookies")
    files.save(cookies)
    assert not cookies.dirty
    assert len(list(files.directory.glob("*.json"))) == 3
    restored = CookiesMiddleware()
    assert files.load(restored) == 3
    for key in ("ann", 7, None):
        [morsel] = list(restored.jars[key])
        assert morsel.value == f"{key}-{SECRET}"
    (files.directory / "7a.json").write_text("{}")  # not a key in hex
    with pytest.raises(ConfigError, match="the name is not a jar's"):
        files.load(CookiesMiddleware())
    (files.directory / "7a.json").unlink()
    next(files.directory.glob("*.json")).write_bytes(b"\x80\x04 a pickle")
    with pytest.raises(ConfigError, match="cannot be read"):
        files.load(CookiesMiddleware())


async def test_a_jar_that_cannot_be_written_stops_the_checkpoint(
    site: tuple[Site, str], make_downloader: MakeDownloader, tmp_path: Path
) -> None:
    _, base = site
    downloader = await make_downloader()
    await fetch_all(downloader, Request(f"{base}/login?user=ann"))
    cookies = downloader.middleware(CookiesMiddleware)
    (tmp_path / "cookies").write_text("a file where the directory should be")
    with pytest.raises(StorageError, match="cannot write"):
        CookieJarFiles(tmp_path / "cookies").save(cookies)
    assert cookies.dirty == {None}  # still to be written, once it can be
