"""Scrapy's ``CrawlSpider``: follow the links that rules pick, parse what they point at.

Every page goes through the rules in order; a link goes to the first rule whose
extractor finds it (later rules do not see it again on that page), and becomes a
request whose callback is the spider's ``_callback`` method with the rule's *index* in
``meta["rule"]``, as in Scrapy. So what a durable frontier stores is a method name and
an int: a request queued by one run is dispatched to the same rule by the next (as
long as the rules keep their order), and a rule's callback, ``cb_kwargs`` and
processors never need to be storable themselves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from skitter.http import Link, Request, Response
from skitter.linkextractors import LinkExtractor
from skitter.spider import Spider
from skitter.spiders._output import default_callback, overridden, through_results

__all__ = ["CrawlSpider", "Rule"]

_HTML_MARKS = (b"<html", b"<!doctype html", b"<head", b"<body")


class Rule:
    """How to treat the links one extractor finds.

    ``callback``, ``errback``, ``process_links`` and ``process_request`` may be
    callables or names of spider methods. ``follow`` (apply the rules again to the
    pages reached) defaults to True when there is no callback. ``process_links(links)``
    returns the links to keep; ``process_request(request, response)`` returns the
    request to send, or None to drop it.
    """

    def __init__(
        self,
        link_extractor: LinkExtractor | None = None,
        callback: Callable[..., Any] | str | None = None,
        cb_kwargs: dict[str, Any] | None = None,
        follow: bool | None = None,
        process_links: Callable[[list[Link]], Iterable[Link]] | str | None = None,
        process_request: Callable[[Request, Response], Request | None] | str | None = None,
        errback: Callable[..., Any] | str | None = None,
    ) -> None:
        self.link_extractor = link_extractor or LinkExtractor()
        self.callback = callback
        self.errback = errback
        self.cb_kwargs = cb_kwargs or {}
        self.process_links = process_links
        self.process_request = process_request
        self.follow = follow if follow is not None else not callback

    def _bound(self, spider: Spider) -> _BoundRule:
        """The rule with method names replaced by the spider's methods."""
        return _BoundRule(
            self.link_extractor,
            _method(spider, self.callback, "callback"),
            _method(spider, self.errback, "errback"),
            self.cb_kwargs,
            self.follow,
            _method(spider, self.process_links, "process_links"),
            _method(spider, self.process_request, "process_request"),
        )

    def __repr__(self) -> str:
        return f"Rule({self.link_extractor!r}, callback={self.callback!r}, follow={self.follow})"


@dataclass(frozen=True, slots=True)
class _BoundRule:
    """A Rule as one spider applies it: every hook a callable or None."""

    link_extractor: LinkExtractor
    callback: Callable[..., Any] | None
    errback: Callable[..., Any] | None
    cb_kwargs: dict[str, Any]
    follow: bool
    process_links: Callable[[list[Link]], Iterable[Link]] | None
    process_request: Callable[[Request, Response], Request | None] | None


def _method(spider: Spider, value: Any, role: str) -> Any:
    if value is None or callable(value):
        return value
    if isinstance(value, str):
        method = getattr(spider, value, None)
        if not callable(method):
            raise AttributeError(
                f"Rule {role}={value!r}: {type(spider).__name__} has no method {value!r}"
            )
        return method
    raise TypeError(f"Rule {role} must be a callable or a method name, got {value!r}")


def _is_html(response: Response) -> bool:
    """Whether links should be looked for in ``response`` (Scrapy: an HtmlResponse)."""
    content_type = response.header("Content-Type")
    if content_type is not None:
        return "html" in content_type.lower()
    head = response.body[:1024].lstrip().lower()
    return head.startswith(_HTML_MARKS) or b"<html" in head


class CrawlSpider(Spider):
    """A spider driven by ``rules``, a sequence of ``Rule``.

    Start responses go to ``parse_start_url`` (nothing by default) and then through
    the rules. Override ``process_results(response, results)`` to change what the
    callbacks produce. ``parse`` is free for your own use, also as a rule's callback.
    """

    rules: Sequence[Rule] = ()
    #: False: no rule is followed, whatever the rules say (Scrapy's switch, kept for
    #: spiders that set it; the CRAWLSPIDER_FOLLOW_LINKS setting is refused instead).
    _follow_links: bool = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._compile_rules()

    def _compile_rules(self) -> None:
        self._rules = [rule._bound(self) for rule in self.rules]

    async def start(self) -> AsyncIterator[Any]:
        async for obj in default_callback(super().start(), self._parse):
            yield obj

    def parse(self, response: Response, **kwargs: Any) -> Any:
        return self._parse(response, **kwargs)

    def _parse(self, response: Response, **kwargs: Any) -> AsyncIterator[Any]:
        return self.parse_with_rules(response, self.parse_start_url, kwargs, True)

    def parse_start_url(self, response: Response, **kwargs: Any) -> Any:
        """What to make of a start URL's page, besides following its links."""
        return ()

    def process_results(self, response: Response, results: Iterable[Any]) -> Iterable[Any]:
        return results

    def _callback(self, response: Response, **cb_kwargs: Any) -> AsyncIterator[Any]:
        rule = self._rule_of(response.meta)
        return self.parse_with_rules(
            response, rule.callback, {**rule.cb_kwargs, **cb_kwargs}, rule.follow
        )

    def _errback(self, failure: Any) -> AsyncIterator[Any]:
        request = getattr(failure, "request", None)
        rule = self._rule_of(request.meta if request is not None else {})
        return default_callback(rule.errback(failure) if rule.errback else None, self._parse)

    def _rule_of(self, meta: dict[str, Any]) -> _BoundRule:
        index = meta.get("rule")
        if not isinstance(index, int) or not 0 <= index < len(self._rules):
            raise LookupError(
                f"{type(self).__name__} has no rule {index!r} (it has {len(self._rules)}): "
                "were the rules changed since this request was queued?"
            )
        return self._rules[index]

    async def parse_with_rules(
        self,
        response: Response,
        callback: Callable[..., Any] | None,
        cb_kwargs: dict[str, Any],
        follow: bool = True,
    ) -> AsyncIterator[Any]:
        """The callback's output (through ``process_results``), then, if ``follow``,
        the requests for the links the rules pick on this page."""
        if callback is not None:
            process = overridden(self, "process_results", CrawlSpider)
            output = through_results(callback(response, **cb_kwargs), response, process)
            async for obj in default_callback(output, self._parse):
                yield obj
        if follow and self._follow_links:
            for request in self._requests_to_follow(response):
                yield request

    def _requests_to_follow(self, response: Response) -> Iterator[Request]:
        if not _is_html(response):
            return
        seen: set[Link] = set()
        for index, rule in enumerate(self._rules):
            links = [
                link for link in rule.link_extractor.extract_links(response) if link not in seen
            ]
            if rule.process_links is not None:
                links = list(rule.process_links(links))
            for link in links:
                seen.add(link)
                request = self._build_request(index, link)
                if rule.process_request is not None:
                    processed = rule.process_request(request, response)
                    if processed is None:
                        continue  # dropped
                    request = processed
                yield request

    def _build_request(self, rule_index: int, link: Link) -> Request:
        errback = self._errback if self._rules[rule_index].errback is not None else None
        return Request(
            link.url,
            callback=self._callback,
            errback=errback,
            meta={"rule": rule_index, "link_text": link.text},
        )
