"""skitter.utils.response: open_in_browser writes the page with a <base> tag and hands
its file URL to the browser function (a fake one here, as Scrapy's signature allows)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

import pytest

from skitter.http import HtmlResponse, Response, TextResponse
from skitter.utils.response import get_base_url, open_in_browser


class Browser:
    """Stands in for webbrowser.open: reads the file it is given, then removes it."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, bytes]] = []

    def __call__(self, url: str) -> bool:
        assert url.startswith("file://")
        path = Path(url2pathname(urlsplit(url).path))
        self.opened.append((path.suffix, path.read_bytes()))
        path.unlink()
        return True


def test_html_gets_a_base_tag_so_the_sites_resources_load() -> None:
    browser = Browser()
    url = "http://www.example.com/some/page.html"
    body = b"<html> <head> <title>t</title> </head> <body>b</body> </html>"
    assert open_in_browser(HtmlResponse(url, body=body), _openfunc=browser) is True
    [(suffix, written)] = browser.opened
    assert suffix == ".html"
    assert written == b'<base href="http://www.example.com/some/page.html">' + body


def test_the_base_tag_goes_after_the_doctype_and_uses_the_pages_base_href() -> None:
    browser = Browser()
    body = b'<!DOCTYPE html>\n<html><head><base href="/cdn/"></head></html>'
    open_in_browser(HtmlResponse("http://e.com/a/b", body=body), _openfunc=browser)
    written = browser.opened[0][1]
    assert written.startswith(b'<!DOCTYPE html><base href="http://e.com/cdn/">\n<html>')


def test_a_base_url_with_quotes_is_escaped() -> None:
    browser = Browser()
    open_in_browser(HtmlResponse('http://e.com/a"b', body=b"<p>x</p>"), _openfunc=browser)
    assert browser.opened[0][1].startswith(b'<base href="http://e.com/a&quot;b">')


def test_text_is_opened_as_it_is() -> None:
    browser = Browser()
    open_in_browser(TextResponse("http://e.com/n.txt", body=b"notes"), _openfunc=browser)
    assert browser.opened == [(".txt", b"notes")]


def test_a_plain_response_is_judged_by_what_it_holds() -> None:
    browser = Browser()
    page = Response("http://e.com/", headers={"Content-Type": "text/html"}, body=b"<p>x</p>")
    open_in_browser(page, _openfunc=browser)
    assert browser.opened[0][0] == ".html"
    image = Response("http://e.com/i", headers={"Content-Type": "image/png"}, body=b"\x89PNG\x1a")
    with pytest.raises(TypeError, match="not text"):
        open_in_browser(image, _openfunc=browser)


def test_get_base_url() -> None:
    page = HtmlResponse("http://e.com/x", body=b'<head><base href="http://cdn.e.com/i/"></head>')
    assert get_base_url(page) == "http://cdn.e.com/i/"
    assert get_base_url(HtmlResponse("http://e.com/x", body=b"<p>")) == "http://e.com/x"
