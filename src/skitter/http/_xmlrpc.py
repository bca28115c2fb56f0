"""Scrapy's ``XmlRpcRequest``: an XML-RPC call as a POST request."""

from __future__ import annotations

from typing import Any

from skitter.http._request import Request

__all__ = ["XmlRpcRequest"]

_DUMPS_ARGUMENTS = ("params", "methodname", "methodresponse", "allow_none")


class XmlRpcRequest(Request):
    """``XmlRpcRequest(url, params=(...), methodname="m")``: the body is the call
    (``xmlrpc.client.dumps``, in ``encoding``), POSTed as ``text/xml``. Not filtered as
    a duplicate by default: an XML-RPC endpoint is one URL asked many times."""

    __slots__ = ()

    def __init__(self, *args: Any, encoding: str | None = None, **kwargs: Any) -> None:
        if "body" not in kwargs and "params" in kwargs:
            import xmlrpc.client  # only for the spiders that make such calls

            call = {name: kwargs.pop(name) for name in _DUMPS_ARGUMENTS if name in kwargs}
            kwargs["body"] = xmlrpc.client.dumps(**call, encoding=encoding)
        kwargs.setdefault("method", "POST")
        kwargs.setdefault("dont_filter", True)
        if encoding is not None:
            kwargs["encoding"] = encoding
        super().__init__(*args, **kwargs)
        self.headers.setdefault("Content-Type", "text/xml")
