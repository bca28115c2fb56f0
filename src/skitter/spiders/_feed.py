"""Scrapy's feed spiders: ``XMLFeedSpider`` (a callback per node) and
``CSVFeedSpider`` (a callback per row).

With the default ``iterator = "iternodes"`` and for CSV, the body is streamed (see
``_iterators``); ``"xml"`` and ``"html"`` parse the whole document into one selector
(the response's own when it is of that type), for feeds XPath must see whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from parsel import Selector

from skitter.http import Response
from skitter.spider import Spider
from skitter.spiders._iterators import csv_rows, xml_nodes
from skitter.spiders._output import (
    default_callback,
    is_async,
    iter_output,
    overridden,
    through_results,
)

__all__ = ["CSVFeedSpider", "XMLFeedSpider"]

_ITERATORS = ("iternodes", "xml", "html")


class _FeedSpider(Spider):
    """What both feed spiders share: requests without a callback come back to the
    feed parser, as Scrapy's ``_parse``."""

    async def start(self) -> AsyncIterator[Any]:
        async for obj in default_callback(super().start(), self._parse):
            yield obj

    def parse(self, response: Response, **kwargs: Any) -> Any:
        return self._parse(response, **kwargs)

    def _parse(self, response: Response, **kwargs: Any) -> Any:
        raise NotImplementedError

    def adapt_response(self, response: Response) -> Response:
        """The response to read the feed from (override to fix a broken body)."""
        return response

    def process_results(self, response: Response, results: Iterable[Any]) -> Iterable[Any]:
        """What one node's or row's callback produced, to change before it is used."""
        return results

    def _each(self, response: Response, outputs: Iterable[Any], asynchronous: bool) -> Any:
        """Each node's or row's output through ``process_results``: a plain generator
        when the callback is plain (as Scrapy's), an async one when it is async."""
        if asynchronous:
            return self._each_async(response, outputs)
        return self._each_sync(response, outputs)

    def _each_sync(self, response: Response, outputs: Iterable[Any]) -> Iterator[Any]:
        process = overridden(self, "process_results", _FeedSpider)
        for output in outputs:
            results: Any = iter_output(output, self._parse)
            if process is not None:
                results = iter_output(process(response, results), self._parse)
            yield from results

    async def _each_async(self, response: Response, outputs: Iterable[Any]) -> AsyncIterator[Any]:
        process = overridden(self, "process_results", _FeedSpider)
        for output in outputs:
            async for obj in default_callback(
                through_results(output, response, process), self._parse
            ):
                yield obj


class XMLFeedSpider(_FeedSpider):
    """``parse_node(response, selector)`` is called for each ``itertag`` node
    (``parse_item`` too, for spiders that name it so); ``namespaces`` is a sequence of
    ``(prefix, uri)`` registered on every node's selector."""

    iterator: str = "iternodes"
    itertag: str = "item"
    namespaces: Iterable[tuple[str, str]] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.iterator not in _ITERATORS:
            raise ValueError(
                f"{type(self).__name__}.iterator = {self.iterator!r}: use one of {_ITERATORS}"
            )

    def parse_node(self, response: Response, selector: Selector) -> Any:
        parse_item = getattr(self, "parse_item", None)
        if parse_item is not None:
            return parse_item(response, selector)
        raise NotImplementedError(f"{type(self).__name__}.parse_node is not defined")

    def parse_nodes(self, response: Response, nodes: Iterable[Selector]) -> Any:
        asynchronous = is_async(self.parse_node) or is_async(getattr(self, "parse_item", None))
        outputs = (self.parse_node(response, node) for node in nodes)
        return self._each(response, outputs, asynchronous)

    def _parse(self, response: Response, **kwargs: Any) -> Any:
        response = self.adapt_response(response)
        return self.parse_nodes(response, self._nodes(response))

    def _nodes(self, response: Response) -> Iterable[Selector]:
        if self.iterator == "iternodes":
            for node in xml_nodes(response, self.itertag):
                self._register_namespaces(node)
                yield node
            return
        selector = response.selector
        if selector.type != self.iterator:
            selector = Selector(text=response.text, type=self.iterator, base_url=response.url)
        self._register_namespaces(selector)
        yield from selector.xpath(f"//{self.itertag}")

    def _register_namespaces(self, selector: Selector) -> None:
        for prefix, uri in self.namespaces:
            selector.register_namespace(prefix, uri)


class CSVFeedSpider(_FeedSpider):
    """``parse_row(response, row)`` is called for each row, a dict keyed by
    ``headers`` (default: the first row); ``delimiter`` and ``quotechar`` default to
    the csv module's."""

    delimiter: str | None = None
    quotechar: str | None = None
    headers: list[str] | None = None

    def parse_row(self, response: Response, row: dict[str, str]) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.parse_row is not defined")

    def parse_rows(self, response: Response) -> Any:
        rows = csv_rows(response, self.delimiter, self.headers, self.quotechar)
        outputs = (self.parse_row(response, row) for row in rows)
        return self._each(response, outputs, is_async(self.parse_row))

    def _parse(self, response: Response, **kwargs: Any) -> Any:
        return self.parse_rows(self.adapt_response(response))
