"""The selector of a plain ASCII page is parsed from its bytes, to the same tree."""

from __future__ import annotations

import pytest
from lxml import etree
from parsel import Selector

from skitter.http import HtmlResponse, Response, XmlResponse

PAGE = b"<html><head><title>t</title></head><body><p class='a'>x &amp; y</p></body></html>"


def _tree(response: Response) -> bytes:
    return etree.tostring(response.selector.root)


def _from_text(response: Response) -> bytes:
    """The tree parsel builds from the decoded text, as before."""
    kind = response.selector_type or "html"
    return etree.tostring(Selector(text=response.text, type=kind, base_url=response.url).root)


@pytest.mark.parametrize(
    ("body", "headers", "cls"),
    [
        (PAGE, {"Content-Type": "text/html; charset=utf-8"}, HtmlResponse),
        (PAGE, {"Content-Type": "text/html; charset=latin-1"}, HtmlResponse),
        (PAGE, {}, HtmlResponse),  # detected: valid UTF-8
        (b"  \n" + PAGE + b"\n\t ", {}, HtmlResponse),  # blanks bytes.strip strips too
        (b"<?xml version='1.0'?><r><i>1</i></r>", {}, XmlResponse),
        (b"<meta charset='windows-1252'><p>x</p>", {}, HtmlResponse),
    ],
)
def test_an_ascii_page_is_parsed_from_its_bytes_to_the_tree_its_text_gives(
    body: bytes, headers: dict[str, str], cls: type[Response]
) -> None:
    response = cls("http://example.com/", headers=headers, body=body)
    tree = _tree(response)
    assert response._text is None  # the page was not decoded to be parsed
    assert tree == _from_text(cls("http://example.com/", headers=headers, body=body))
    assert response.text == body.decode("ascii")  # decoded on demand, as before


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        ("<p>café</p>".encode(), {}),  # not ASCII
        (b"<p>a\x00b</p>", {}),  # NUL: stripped before, not after, the blanks
        (b"\x1c<p>a</p>\x1f", {}),  # str.strip strips these, bytes.strip does not
        (b"<p>a</p>", {"Content-Type": "text/html; charset=utf-16"}),
        (b"<p>a</p>", {"Content-Type": "text/html; charset=shift_jis"}),  # not known alike
        (b"", {}),
    ],
)
def test_other_pages_are_parsed_from_their_text(body: bytes, headers: dict[str, str]) -> None:
    response = HtmlResponse("http://example.com/", headers=headers, body=body)
    tree = _tree(response)
    assert response._text is not None
    assert tree == _from_text(HtmlResponse("http://example.com/", headers=headers, body=body))


def test_an_explicit_encoding_is_kept() -> None:
    response = HtmlResponse("http://example.com/", body=PAGE, encoding="latin-1")
    response.css("p")
    assert response.encoding == "latin-1"
    assert response.text == PAGE.decode("latin-1")


def test_the_detected_encoding_is_the_one_decoding_finds() -> None:
    body = b"<meta charset='windows-1252'><p>x</p>"
    parsed = HtmlResponse("http://example.com/", body=body)
    parsed.css("p")
    assert parsed.encoding == HtmlResponse("http://example.com/", body=body).encoding
