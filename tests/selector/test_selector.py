"""``skitter.selector``: Scrapy's ``Selector(response=...)`` and ``SelectorList``."""

from __future__ import annotations

import pytest

from skitter.http import HtmlResponse, JsonResponse, XmlResponse
from skitter.selector import Selector, SelectorList


def test_a_selector_of_a_response_reads_its_text_and_base() -> None:
    response = HtmlResponse(
        "http://127.0.0.1/a/", body=b'<p class="q">caf\xc3\xa9</p><a href="b">b</a>'
    )
    selector = Selector(response=response)
    assert selector.css("p.q::text").get() == "café"
    assert selector.response is response
    assert selector.type == "html"
    found = selector.css("a")
    assert isinstance(found, SelectorList) and isinstance(found[0], Selector)
    assert found[0].attrib["href"] == "b"


def test_an_xml_response_gives_an_xml_selector() -> None:
    response = XmlResponse("http://127.0.0.1/f.xml", body=b"<feed><Item>1</Item></feed>")
    selector = Selector(response=response)
    assert selector.type == "xml"
    assert selector.xpath("//Item/text()").get() == "1"  # case kept: not parsed as HTML


def test_text_still_works_and_not_both() -> None:
    assert Selector(text="<b>x</b>").css("b::text").get() == "x"
    response = HtmlResponse("http://127.0.0.1/", body=b"<b>x</b>")
    with pytest.raises(ValueError, match="both response and text"):
        Selector(text="<b>y</b>", response=response)


def test_the_first_argument_is_a_response_or_the_text() -> None:
    response = HtmlResponse("http://127.0.0.1/", body=b"<b>x</b>")
    assert Selector(response).response is response
    assert Selector("<b>y</b>").css("b::text").get() == "y"
    with pytest.raises(ValueError, match="both"):
        Selector("<b>y</b>", "<b>z</b>")


def test_a_json_response_gives_a_json_selector_and_jmespath() -> None:
    response = JsonResponse("http://127.0.0.1/a.json", body=b'{"a": {"b": [1, 2]}}')
    assert Selector(response).type == "json"
    assert response.jmespath("a.b[1]").get() == 2
