"""``skitter.utils.iterators`` (Scrapy's ``scrapy.utils.iterators``): the feed readers
on a response or a bare body."""

from __future__ import annotations

import pytest

from skitter.http import TextResponse, XmlResponse
from skitter.utils.iterators import _body_or_str, csviter, xmliter_lxml

FEED = (
    '<?xml version="1.0" encoding="ISO-8859-9"?>'
    '<rss xmlns="urn:g" xmlns:h="urn:h"><item>\u015e</item><h:item>b</h:item></rss>'
)


def test_xml_nodes_of_a_str_a_body_and_a_response() -> None:
    assert [n.xpath("text()").get() for n in xmliter_lxml(FEED, "item", "urn:g")] == ["\u015e"]
    body = FEED.encode("iso-8859-9")
    assert [n.xpath("text()").get() for n in xmliter_lxml(body, "item", "urn:g")] == ["\u015e"]
    response = XmlResponse("http://a.example/feed", body=body)
    nodes = list(xmliter_lxml(response, "item", "urn:h", "h"))
    assert [n.xpath("text()").get() for n in nodes] == ["b"]
    assert nodes[0].xpath("name()").get() == "h:item"
    assert list(xmliter_lxml(response, "item")) == []  # no such element outside a namespace
    with pytest.raises(TypeError, match="not int"):
        next(xmliter_lxml(42, "item"))  # type: ignore[arg-type]


def test_csv_rows_in_the_response_encoding() -> None:
    response = TextResponse("http://a.example/f.csv", body=b"a,b\n1,\xf1\n", encoding="latin1")
    assert list(csviter(response)) == [{"a": "1", "b": "\xf1"}]
    assert list(csviter(b"a;b\n1;\xc3\xb1\n", delimiter=";")) == [{"a": "1", "b": "\xf1"}]
    assert list(csviter("")) == []


def test_body_or_str() -> None:
    assert _body_or_str(b"x") == "x"
    assert _body_or_str("x", unicode=False) == b"x"
    with pytest.raises(TypeError, match="must be Response or str or bytes"):
        _body_or_str(1)  # type: ignore[arg-type]
