"""Looking at a response in a browser while writing a spider; its base URL."""

from __future__ import annotations

import html
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any

import w3lib.html

from skitter.http import HtmlResponse, Response, TextResponse, response_class

__all__ = ["get_base_url", "get_meta_refresh", "open_in_browser", "response_status_message"]

_DOCTYPE = re.compile(rb"\s*<!doctype[^<>]*>", re.IGNORECASE)


def get_base_url(response: Response) -> str:
    """The URL the page's relative links are relative to (its ``<base href>``, if any)."""
    return response.base_url


def get_meta_refresh(
    response: TextResponse, ignore_tags: Iterable[str] = ("script", "noscript")
) -> tuple[float | None, str | None]:
    """The page's ``<meta http-equiv="refresh">`` as (seconds, absolute URL), read from
    its first 4 KB, as Scrapy does; ``(None, None)`` when it has none."""
    delay, url = w3lib.html.get_meta_refresh(
        response.text[:4096], response.base_url, response.encoding, ignore_tags=ignore_tags
    )
    return delay, url


def response_status_message(status: int | str) -> str:
    """``"404 Not Found"``: the status and its reason phrase (``Unknown Status`` for a
    code HTTP does not name)."""
    code = int(status)
    try:
        phrase = HTTPStatus(code).phrase
    except ValueError:
        phrase = "Unknown Status"
    return f"{code} {phrase}"


def open_in_browser(response: Response, _openfunc: Callable[[str], Any] | None = None) -> Any:
    """Open ``response`` in a local web browser (``_openfunc``, by default
    ``webbrowser.open``), from a temporary file.

    An HTML page gets a ``<base>`` tag first (after the doctype, to keep the browser
    out of quirks mode), so that its images, styles and links load from the site;
    other text is opened as ``.txt``; anything else is a TypeError. Returns what
    ``_openfunc`` returns."""
    kind = type(response)
    if not issubclass(kind, TextResponse):
        kind = response_class(dict(response.header_items()), response.url, response.body)
    body = response.body
    if issubclass(kind, HtmlResponse):
        doctype = _DOCTYPE.match(body)
        at = doctype.end() if doctype else 0
        base = f'<base href="{html.escape(response.base_url)}">'.encode()
        body = body[:at] + base + body[at:]
        suffix = ".html"
    elif issubclass(kind, TextResponse):
        suffix = ".txt"
    else:
        raise TypeError(f"cannot open a {kind.__name__} in a browser: its body is not text")
    fd, name = tempfile.mkstemp(suffix=suffix, prefix="skitter-")
    with os.fdopen(fd, "wb") as file:
        file.write(body)
    if _openfunc is None:
        import webbrowser  # only here: a crawl never opens a browser

        _openfunc = webbrowser.open
    return _openfunc(Path(name).as_uri())
