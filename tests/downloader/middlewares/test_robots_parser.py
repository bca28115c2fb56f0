"""ROBOTSTXT_PARSER: the robots.txt middleware obeys the parser class a project names
(Scrapy's interface), and refuses at start one that cannot work; against a local site."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from skitter.downloader import RobotsTxtMiddleware
from skitter.exceptions import ConfigError, IgnoreRequest
from skitter.http import Request, Response

from ..conftest import MakeDownloader
from .test_robots import Serve, site

BUILT: list[tuple[Any, bytes]] = []


class EverythingButHome:
    """A parser of a project's own: allows all but ``/home``, whatever the file says."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> EverythingButHome:
        BUILT.append((crawler, robotstxt_body))
        return cls(robotstxt_body)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return not str(url).endswith("/home")


class NoAllowed:
    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> NoAllowed:
        return cls()


@pytest.mark.parametrize(
    "path", ["scrapy.robotstxt.PythonRobotParser", "skitter.robotstxt.PythonRobotParser"]
)
async def test_the_standard_librarys_parser_is_obeyed(
    serve: Serve, make_downloader: MakeDownloader, path: str
) -> None:
    base = await serve(site())
    downloader = await make_downloader({"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": path})
    response = await downloader.fetch(Request(f"{base}/public"))
    assert isinstance(response, Response)
    with pytest.raises(IgnoreRequest, match=r"forbidden by robots\.txt"):
        await downloader.fetch(Request(f"{base}/private/x"))
    assert downloader.middleware(RobotsTxtMiddleware).crawl_delay("127.0.0.1") == 2.0


async def test_a_projects_own_parser_decides(serve: Serve, make_downloader: MakeDownloader) -> None:
    BUILT.clear()
    base = await serve(site())
    downloader = await make_downloader(
        {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": EverythingButHome}
    )
    response = await downloader.fetch(Request(f"{base}/private/x"))  # its rules, not the file's
    assert isinstance(response, Response)
    with pytest.raises(IgnoreRequest):
        await downloader.fetch(Request(f"{base}/home"))
    ((crawler, body),) = BUILT
    assert crawler is downloader.crawler
    assert b"Disallow: /private" in body
    # no crawl_delay method: no Crawl-delay, not an error
    assert downloader.middleware(RobotsTxtMiddleware).crawl_delay("127.0.0.1") is None


@pytest.mark.parametrize(
    ("parser", "message"),
    [
        (NoAllowed, r"has no allowed\(\)"),
        ("skitter.robotstxt.NoSuchParser", "has no 'NoSuchParser'"),
    ],
)
async def test_a_parser_that_cannot_work_is_refused(
    make_downloader: MakeDownloader, parser: Any, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        await make_downloader({"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": parser})


async def test_rerp_without_its_package_is_refused(make_downloader: MakeDownloader) -> None:
    if importlib.util.find_spec("robotexclusionrulesparser") is not None:
        pytest.skip("robotexclusionrulesparser is installed here")
    settings = {"ROBOTSTXT_OBEY": True, "ROBOTSTXT_PARSER": "scrapy.robotstxt.RerpRobotParser"}
    with pytest.raises(ConfigError, match="pip install robotexclusionrulesparser"):
        await make_downloader(settings)
