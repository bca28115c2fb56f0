"""``skitter.robotstxt``: Scrapy's robots.txt parser interface and its back-ends."""

from __future__ import annotations

import logging

import pytest

from skitter.robotstxt import (
    ProtegoRobotParser,
    PythonRobotParser,
    RerpRobotParser,
    RobotParser,
    decode_robotstxt,
)

BODY = b"User-agent: *\nDisallow: /private\nCrawl-delay: 4\n\nUser-agent: bot\nDisallow: /\n"


@pytest.mark.parametrize("parser", [ProtegoRobotParser, PythonRobotParser])
def test_a_parser_answers_allowed_and_crawl_delay(parser: type[RobotParser]) -> None:
    rp = parser.from_crawler(None, BODY)
    assert rp.allowed("https://127.0.0.1/public", "*")
    assert not rp.allowed("https://127.0.0.1/private", "*")
    assert not rp.allowed(b"https://127.0.0.1/public", b"bot")
    assert rp.crawl_delay("*") == 4.0
    assert rp.crawl_delay("bot") is None


def test_a_parser_without_crawl_delay_says_none() -> None:
    class AllowAll(RobotParser):
        @classmethod
        def from_crawler(cls, crawler: object, robotstxt_body: bytes) -> AllowAll:
            return cls()

        def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
            return True

    assert AllowAll.from_crawler(None, BODY).crawl_delay("*") is None


def test_garbage_allows_everything() -> None:
    rp = ProtegoRobotParser.from_crawler(None, b"GIF89a\xd3\x00\xfe\x00\xa2")
    assert rp.allowed("https://127.0.0.1/anything", "*")


def test_decode_drops_the_bom_and_what_is_not_utf8(caplog: pytest.LogCaptureFixture) -> None:
    assert decode_robotstxt(b"\xef\xbb\xbfUser-agent: *\n") == "User-agent: *\n"
    with caplog.at_level(logging.WARNING, logger="skitter.robotstxt"):
        assert decode_robotstxt(b"User-agent: *\n\xffDisallow: /\n") == (
            "User-agent: *\nDisallow: /\n"
        )
    assert "not valid UTF-8" in caplog.text


def test_rerp_names_its_package_when_missing() -> None:
    try:
        import robotexclusionrulesparser  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="robotexclusionrulesparser"):
            RerpRobotParser.from_crawler(None, BODY)
    else:
        assert not RerpRobotParser.from_crawler(None, BODY).allowed("https://h/private", "*")
