"""skitter.loader: Scrapy's ItemLoader (itemloaders) fed from a response."""

from __future__ import annotations

from typing import Any

import pytest
from itemloaders.processors import Compose as LibraryCompose
from parsel import Selector

from skitter import Response
from skitter.item import Field, Item
from skitter.loader import ItemLoader
from skitter.loader.processors import Compose, Identity, Join, MapCompose, SelectJmes, TakeFirst
from skitter.spider import Spider

from ._site import Site, crawl_items

HTML = b"""<html><body><div class="quote"><span class="text"> Hello </span>
<small class="author">Ada</small><a class="tag">x</a><a class="tag">y</a></div>
<div class="quote"><span class="text">Bye</span><small class="author">Alan</small></div>
</body></html>"""


def response() -> Response:
    return Response("http://example.com/", headers={"Content-Type": "text/html"}, body=HTML)


class Quote(Item):
    text = Field(input_processor=MapCompose(str.strip), output_processor=TakeFirst())
    author = Field(output_processor=TakeFirst())
    tags = Field(output_processor=Join(","))


def test_response_gives_the_loader_its_selector() -> None:
    page = response()
    loader = ItemLoader(item=Quote(), response=page)
    assert loader.selector is page.selector  # the page is parsed once
    assert loader.context["response"] is page
    loader.add_css("text", ".text::text")
    loader.add_xpath("author", "//small/text()")
    loader.add_css("tags", "a.tag::text")
    item = loader.load_item()
    assert isinstance(item, Quote)
    assert dict(item) == {"text": "Hello", "author": "Ada", "tags": "x,y"}


def test_default_item_class_is_item_and_can_be_set() -> None:
    class QuoteLoader(ItemLoader):
        default_item_class = Quote
        default_output_processor = TakeFirst()

    loader = QuoteLoader(response=response())
    loader.add_value("author", ["Ada", "Alan"])
    assert loader.load_item() == Quote(author="Ada")
    assert ItemLoader.default_item_class is Item


def test_nested_loaders_and_selector_argument() -> None:
    for node in Selector(text=HTML.decode()).css(".quote"):
        loader = ItemLoader(item=Quote(), selector=node)
        loader.add_css("text", ".text::text")
        nested = loader.nested_css("small")
        nested.add_xpath("author", "text()")
        assert loader.load_item()["author"] in ("Ada", "Alan")


def test_without_a_selector_css_is_refused() -> None:
    loader = ItemLoader(item=Quote())
    loader.add_value("author", "Ada")
    assert loader.load_item()["author"] == "Ada"
    with pytest.raises(RuntimeError, match="selector"):
        loader.add_css("text", "p")


def test_processors_are_the_librarys() -> None:
    assert Compose is LibraryCompose
    assert Identity()(["a"]) == ["a"]
    assert SelectJmes("a.b")({"a": {"b": 1}}) == 1


async def test_a_spider_loads_items_end_to_end() -> None:
    site = Site({"/": ("text/html", HTML)})
    base = site.base

    class Quotes(Spider):
        name = "loader"
        start_urls = [base + "/"]

        def parse(self, response: Response) -> Any:
            for node in response.css(".quote"):
                loader = ItemLoader(item=Quote(), selector=node, response=response)
                loader.add_css("text", ".text::text")
                loader.add_css("author", ".author::text")
                loader.add_css("tags", ".tag::text")
                loader.add_value("tags", [])
                yield loader.load_item()

    items, _ = await crawl_items(Quotes, site.settings)
    assert [dict(i) for i in items] == [
        {"text": "Hello", "author": "Ada", "tags": "x,y"},
        {"text": "Bye", "author": "Alan"},
    ]
