"""``link_request``: the Request of a followed link, built at a third of the cost."""

from __future__ import annotations

from skitter.http._request import Callback, Request

__all__ = ["link_request"]

_new = object.__new__


def link_request(url: str, callback: Callback | None) -> Request:
    """``Request(url, callback)``, for the links a page yields (``Response.follow``).

    When the URL is one the constructor would keep exactly as it is (a scheme, ASCII,
    nothing it escapes or strips) and the callback is callable, the request is
    built without binding the constructor's 21 arguments and checking them: two thirds
    of its cost, for what every link of every page pays. Any other URL or callback goes
    through the constructor, for its escaping and its errors. The slots set here are
    the constructor's defaults; a test holds the two to the same request.
    """
    if (
        url[:1].isalpha()
        and ":" in url[:12]
        and url.isascii()
        and url[-1] > " "  # then nothing to strip: the first is a letter
        and " " not in url
        and '"' not in url
        and "<" not in url
        and ">" not in url
        and (callback is None or callable(callback))
    ):
        self: Request = _new(Request)
        self._url = url
        self.callback = callback
        self.method = "GET"
        self._headers = None
        self._referer = None
        self._body = b""
        self.encoding = "utf-8"
        self.cookies = None
        self.meta = {}
        self.priority = 0
        self.dont_filter = False
        self.errback = None
        self._cb_kwargs = None
        self._flags = None
        self.exetime = 0.0
        self.retries = None
        self.age = -1
        self.auto_recrawl = False
        self.itag = None
        self.render = False
        self._taskid = None
        self._fp = None
        self._parsed = None
        return self
    return Request(url, callback)
