"""Scrapy's ``scrapy.selector``: parsel's selectors, built from a response too.

``Selector(response=response)`` reads the response's decoded text, takes its URL as the
base for relative links and picks ``xml`` for an ``XmlResponse`` (else ``html``), as
Scrapy's does; ``text=``, ``root=`` and every other parsel argument pass through.
``response.css``/``xpath`` need none of this: a response keeps its own selector.
"""

from __future__ import annotations

from typing import Any

import parsel

from skitter.http import Response, XmlResponse

__all__ = ["Selector", "SelectorList"]

SelectorList = parsel.SelectorList


class Selector(parsel.Selector):
    """A parsel ``Selector`` that also takes ``response=``."""

    __slots__ = ("response",)

    def __init__(
        self,
        text: str | None = None,
        type: str | None = None,  # noqa: A002 - Scrapy's and parsel's name
        root: Any | None = None,
        *,
        response: Response | None = None,
        **kwargs: Any,
    ) -> None:
        if response is not None:
            if text is not None:
                raise ValueError("Selector takes response= or text=, not both")
            text = response.text
            kwargs.setdefault("base_url", response.url)
            if type is None:
                type = "xml" if isinstance(response, XmlResponse) else "html"  # noqa: A001
        self.response = response
        if root is not None:
            super().__init__(text=text, type=type, root=root, **kwargs)
        else:
            super().__init__(text=text, type=type, **kwargs)
