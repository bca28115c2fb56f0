"""Scrapy's ``scrapy.selector``: parsel's selectors, built from a response too.

``Selector(response)`` (or ``response=``) reads the response's decoded text, takes its
URL as the base for relative links and picks ``xml`` for an ``XmlResponse``, ``json``
for a ``JsonResponse`` (else ``html``), as Scrapy's does; ``text=``, ``root=`` and every
other parsel argument pass through; a str as the first argument is the text (parsel's
``Selector("<p>...")``).
``response.css``/``xpath`` need none of this: a response keeps its own selector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import parsel

from skitter.http import JsonResponse as _JsonResponse
from skitter.http import XmlResponse as _XmlResponse

if TYPE_CHECKING:
    from skitter.http import Response

__all__ = ["Selector", "SelectorList"]

SelectorList = parsel.SelectorList


class Selector(parsel.Selector):
    """A parsel ``Selector`` that also takes a response (Scrapy's first argument)."""

    __slots__ = ("response",)

    def __init__(
        self,
        response: Response | str | None = None,
        text: str | None = None,
        type: str | None = None,
        root: Any | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(response, str):
            # parsel's habit, Selector("<p>..."): the text itself, not a response.
            if text is not None:
                raise ValueError("Selector received both a text and text=")
            response, text = None, response
        if response is not None:
            if text is not None:
                raise ValueError(
                    f"{self.__class__.__name__}.__init__() received both response and text"
                )
            text = response.text
            kwargs.setdefault("base_url", response.url)
            if type is None:
                type = _type_of(response)
        self.response = response
        if root is not None:
            super().__init__(text=text, type=type, root=root, **kwargs)
        else:
            super().__init__(text=text, type=type, **kwargs)


def _type_of(response: Response) -> str:
    """The parsel type a response reads as: its class says XML or JSON, else HTML."""
    if isinstance(response, _XmlResponse):
        return "xml"
    if isinstance(response, _JsonResponse):
        return "json"
    return "html"
