"""Scrapy's robots.txt parser interface (``scrapy.robotstxt``), for code written against it.

A parser is built from the raw body of a robots.txt (``from_crawler(crawler, body)``)
and answers two questions: may ``user_agent`` fetch ``url`` (``allowed``), and what
Crawl-delay does the file ask of it (``crawl_delay``, None when it names none or the
parser cannot tell). Three back-ends, as in Scrapy:

- ``ProtegoRobotParser``: Protego, what skitter's ``RobotsTxtMiddleware`` obeys
  (wildcards, longest-match precedence, Crawl-delay);
- ``PythonRobotParser``: the standard library's ``urllib.robotparser``;
- ``RerpRobotParser``: the ``robotexclusionrulesparser`` package, when it is installed.

A body that is not valid UTF-8 is decoded leniently (the bytes that do not decode are
dropped, with a warning): a server sending garbage must not turn into a crawl that
obeys nothing or refuses everything. A body that cannot be parsed at all allows all.
"""

from __future__ import annotations

import abc
import logging
from typing import Any
from urllib import robotparser

import protego

__all__ = [
    "ProtegoRobotParser",
    "PythonRobotParser",
    "RerpRobotParser",
    "RobotParser",
    "decode_robotstxt",
]

_logger = logging.getLogger(__name__)

_BOM = "\ufeff"


def decode_robotstxt(
    robotstxt_body: bytes, spider: Any = None, to_native_str_type: bool = False
) -> str:
    """The text of a robots.txt body: UTF-8 without its byte-order mark; bytes that are
    not UTF-8 are dropped (logged), since a partly readable file still says something.

    ``spider`` is only named in the warning; ``to_native_str_type`` is Scrapy's legacy
    flag and changes nothing (the result is always ``str``)."""
    try:
        text = robotstxt_body.decode("utf-8")
    except UnicodeDecodeError:
        _logger.warning(
            "robots.txt is not valid UTF-8; ignoring the bytes that are not",
            extra={"spider": spider},
        )
        text = robotstxt_body.decode("utf-8", errors="ignore")
    return text.removeprefix(_BOM)


class RobotParser(metaclass=abc.ABCMeta):
    """What every robots.txt parser offers (Scrapy's interface)."""

    @classmethod
    @abc.abstractmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> RobotParser:
        """A parser for ``robotstxt_body``, the raw robots.txt the site sent."""

    @abc.abstractmethod
    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` may fetch ``url``."""

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The Crawl-delay asked of ``user_agent``; None: none, or unknown to this parser."""
        return None


def _str(value: str | bytes) -> str:
    """A URL or user agent as str (Scrapy's parsers take bytes too, read as UTF-8)."""
    return value if isinstance(value, str) else value.decode("utf-8")


def _spider_of(crawler: Any) -> Any:
    """The crawler's spider, for log lines; parsers may be built without a crawler."""
    return getattr(crawler, "spider", None)


class ProtegoRobotParser(RobotParser):
    """robots.txt read by Protego (the parser skitter's middleware obeys)."""

    def __init__(self, robotstxt_body: bytes, spider: Any = None) -> None:
        self.spider = spider
        self.rp = protego.Protego.parse(decode_robotstxt(robotstxt_body, spider))

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> ProtegoRobotParser:
        return cls(robotstxt_body, _spider_of(crawler))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return bool(self.rp.can_fetch(_str(url), _str(user_agent)))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        delay = self.rp.crawl_delay(_str(user_agent))
        return None if delay is None else float(delay)


class PythonRobotParser(RobotParser):
    """robots.txt read by the standard library's ``urllib.robotparser``."""

    def __init__(self, robotstxt_body: bytes, spider: Any = None) -> None:
        self.spider = spider
        self.rp = robotparser.RobotFileParser()
        self.rp.parse(decode_robotstxt(robotstxt_body, spider).splitlines())

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> PythonRobotParser:
        return cls(robotstxt_body, _spider_of(crawler))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return self.rp.can_fetch(_str(user_agent), _str(url))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        delay = self.rp.crawl_delay(_str(user_agent))
        return None if delay is None else float(delay)


class RerpRobotParser(RobotParser):
    """robots.txt read by ``robotexclusionrulesparser`` (an optional dependency: building
    one without it installed raises ImportError naming the package)."""

    def __init__(self, robotstxt_body: bytes, spider: Any = None) -> None:
        try:
            from robotexclusionrulesparser import (  # type: ignore[import-not-found]
                RobotExclusionRulesParser,
            )
        except ImportError as exc:
            raise ImportError(
                "RerpRobotParser needs the robotexclusionrulesparser package "
                "(pip install robotexclusionrulesparser)"
            ) from exc
        self.spider = spider
        self.rp = RobotExclusionRulesParser()
        self.rp.parse(decode_robotstxt(robotstxt_body, spider))

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> RerpRobotParser:
        return cls(robotstxt_body, _spider_of(crawler))

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        return bool(self.rp.is_allowed(_str(user_agent), _str(url)))

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        delay = self.rp.get_crawl_delay(_str(user_agent))
        return None if delay is None else float(delay)
