"""Scrapy's ``Selector``: parsel's, built from a response too, and knowing it.

It lives beside Response (not in ``skitter.selector``, which re-exports it) because a
response's own ``selector`` is one: Scrapy code checks ``isinstance(response.selector,
Selector)`` and reads ``response.selector.response``.

``Selector(response)`` (or ``response=``) reads the response's decoded text, takes its
URL as the base for relative links and its type as the response reads (``xml`` for an
``XmlResponse``, ``json`` for a ``JsonResponse``, else ``html``); ``text=``, ``root=``
and every other parsel argument pass through; a str as the first argument is the text
(parsel's ``Selector("<p>...")``).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import parsel

if TYPE_CHECKING:
    from skitter.http._response import Response

__all__ = ["PageSelector", "Selector"]


class Selector(parsel.Selector):
    """A parsel ``Selector`` that also takes a response (Scrapy's first argument)."""

    __slots__ = ("_response",)

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
                type = response._selector_kind()
        self._response: Response | weakref.ref[Response] | None = response
        if root is not None:
            super().__init__(text=text, type=type, root=root, **kwargs)
        else:
            super().__init__(text=text, type=type, **kwargs)

    @property
    def response(self) -> Response | None:
        """The response this selector was built from (None for text, and for the
        selectors a query returns)."""
        held = getattr(self, "_response", None)
        if held.__class__ is weakref.ref:
            response: Response | None = held()
            return response
        return held


class PageSelector(Selector):
    """A response's own selector, and what its queries return.

    parsel makes a selector for every node a query finds, through the class's
    ``__init__``: this one is parsel's own, so a query costs what it costs in parsel.
    The response is held weakly: a strong reference both ways would leave every page
    (body, text, tree) to the cyclic garbage collector instead of freeing it when the
    callback is done with it.
    """

    __slots__ = ()
    __init__ = parsel.Selector.__init__

    @classmethod
    def of(
        cls, response: Response, kind: str | None, *, text: str | None = None, body: bytes = b""
    ) -> PageSelector:
        """The selector of ``response``, its type chosen, from its decoded ``text`` or
        (when parsel builds the same tree from them) its ``body`` bytes."""
        if text is not None:
            selector: PageSelector = cls(text=text, type=kind, base_url=response.url)
        else:
            selector = cls(body=body, type=kind, base_url=response.url)
        selector._response = weakref.ref(response)
        return selector
