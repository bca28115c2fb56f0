"""Scrapy's ``scrapy.selector``: parsel's selectors, built from a response too.

``Selector(response=response)`` reads the response's decoded text, takes its URL as the
base for relative links and picks ``xml`` for an ``XmlResponse`` (else ``html``), as
Scrapy's does; ``text=``, ``root=`` and every other parsel argument pass through.
``response.css``/``xpath`` need none of this: a response keeps its own selector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import parsel

from skitter.http import XmlResponse as _XmlResponse

if TYPE_CHECKING:
    from skitter.http import Response

__all__ = ["Selector", "SelectorList"]

SelectorList = parsel.SelectorList


class Selector(parsel.Selector):
    """A parsel ``Selector`` that also takes ``response=``."""

    __slots__ = ("response",)

    def __init__(
        self,
        text: str | None = None,
        type: str | None = None,
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
                type = "xml" if isinstance(response, _XmlResponse) else "html"
        self.response = response
        if root is not None:
            super().__init__(text=text, type=type, root=root, **kwargs)
        else:
            super().__init__(text=text, type=type, **kwargs)
