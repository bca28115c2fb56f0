"""Rendering in headless Chromium: a second transport at the centre of the same onion.

``BrowserTransport`` (``_transport``) is what the Downloader sends requests to render
to; ``wants_render`` is its routing rule; ``browser_problem`` says why this machine
cannot render (Playwright or Chromium missing). The rest is private: the page pool and
Chromium's launch (``_pool``, ``_launch``), cookies shared with the HTTP jar
(``_cookies``), Playwright's errors as skitter's (``_errors``), the request router
(``_routes``) and the page's scope guard (``_scope``).
"""

from skitter.downloader.browser._launch import browser_problem
from skitter.downloader.browser._transport import BrowserTransport, wants_render

__all__ = ["BrowserTransport", "browser_problem", "wants_render"]
