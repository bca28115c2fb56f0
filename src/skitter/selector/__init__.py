"""Scrapy's ``scrapy.selector``: parsel's selectors, built from a response too.

``Selector(response)`` (or ``response=``) reads the response's decoded text, takes its
URL as the base for relative links and picks ``xml`` for an ``XmlResponse``, ``json``
for a ``JsonResponse`` (else ``html``), as Scrapy's does; ``text=``, ``root=`` and every
other parsel argument pass through; a str as the first argument is the text (parsel's
``Selector("<p>...")``). A response's own ``selector`` is one too, and knows its
response (``selector.response``). The class lives in the HTTP layer, beside Response.
"""

from __future__ import annotations

import parsel

from skitter.http.wiring import Selector

__all__ = ["Selector", "SelectorList"]

SelectorList = parsel.SelectorList
