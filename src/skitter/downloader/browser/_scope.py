"""Keeping a rendered page inside ``allowed_domains``.

The Downloader checks a rendered request's URL before the browser sees it, but
Chromium then makes requests of its own: the main document's redirects, sub-resources
and theirs, iframes, scripts' fetches and navigations. Playwright's ``page.route``
only sees the first request of a redirect chain (by design: redirects are followed
inside Chromium's network stack), so the guard intercepts one level lower, on the
DevTools protocol's Fetch domain, through a CDP session of the page's own: Chromium
pauses every request of the page's target, redirect hops included, and the guard
continues it or fails it (``BlockedByClient``) by the crawl's ``Scope``, judged on the
URL as Chromium itself parsed and serialized it, so no parser disagreement can let one
through. Site isolation is switched off at launch (``CHROMIUM_ARGS``) so that a
cross-site iframe stays in the page's target instead of getting one of its own.
WebSockets never reach the Fetch domain; Playwright's ``route_web_socket`` closes those
to offsite hosts.

A refused main-frame navigation (a redirect, or a script sending the page elsewhere)
fails the request as offsite (``IgnoreRequest``, through the Downloader's guard, so it
counts like any other); a refused sub-resource or WebSocket is counted in
``browser/offsite_blocked`` and the page goes on without it. Only requests to
``allowed_domains`` leave the browser, so a page that needs a CDN must list it.

Not covered: ``<link rel=preconnect>`` may open a connection (no request is sent on
it), and requests of shared workers, which live in targets of their own.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from skitter.http import Scope

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, WebSocketRoute

    from skitter._types import StatsSink
    from skitter.downloader.browser._pool import PageLease

__all__ = ["PageGuard"]

logger = logging.getLogger("skitter.downloader.browser")

_EVERY_REQUEST = {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}


class PageGuard:
    """Judges every request of one page; ``refused_navigation`` is the first URL the
    main frame was refused, if any."""

    # No __slots__: Playwright keeps its wrapper of a bound-method handler on the instance.

    def __init__(
        self, cdp: CDPSession, main_frame: str, scope: Scope, stats: StatsSink, seen: set[str]
    ) -> None:
        self._cdp = cdp
        self._main_frame = main_frame
        self._scope = scope
        self._stats = stats
        self._seen = seen
        self.refused_navigation: str | None = None

    @classmethod
    async def attach(
        cls, lease: PageLease, scope: Scope, stats: StatsSink, seen: set[str]
    ) -> PageGuard:
        """Start guarding ``lease``'s page, before it navigates. ``seen`` holds the
        hosts already logged (one DEBUG line per host and crawl)."""
        cdp = await lease.context.new_cdp_session(lease.page)
        tree = await cdp.send("Page.getFrameTree")
        guard = cls(cdp, tree["frameTree"]["frame"]["id"], scope, stats, seen)
        cdp.on("Fetch.requestPaused", guard._on_paused)
        await cdp.send("Fetch.enable", _EVERY_REQUEST)
        await lease.page.route_web_socket(guard._offsite_websocket, guard._refuse_websocket)
        return guard

    def allows(self, url: str, *, navigation: bool = False) -> bool:
        """Whether the page may request ``url`` (a URL yarl cannot read may not); a
        refusal is recorded (``navigation``: of the main frame's document)."""
        if self._scope.allows_url(url):
            return True
        self._refused(url, navigation)
        return False

    async def _on_paused(self, event: dict[str, Any]) -> None:
        from playwright.async_api import Error as PlaywrightError

        params: dict[str, Any] = {"requestId": event["requestId"]}
        navigation = (
            event.get("frameId") == self._main_frame and event.get("resourceType") == "Document"
        )
        if self.allows(event["request"]["url"], navigation=navigation):
            method = "Fetch.continueRequest"
        else:
            method = "Fetch.failRequest"
            params["errorReason"] = "BlockedByClient"
        with contextlib.suppress(PlaywrightError):  # the page closed meanwhile
            await self._cdp.send(method, params)

    def _offsite_websocket(self, url: str) -> bool:
        """The WebSocket route's URL test: true for the ones to refuse. ws and wss
        are judged as the http and https of their handshake."""
        if url.startswith("ws"):
            url = "http" + url[2:]
        return not self._scope.allows_url(url)

    async def _refuse_websocket(self, route: WebSocketRoute) -> None:
        """Never connected to the server: closed at once."""
        from playwright.async_api import Error as PlaywrightError

        self._refused(route.url, False)
        with contextlib.suppress(PlaywrightError):
            await route.close(code=1008, reason="outside allowed_domains")

    def _refused(self, url: str, navigation: bool) -> None:
        if navigation:
            if self.refused_navigation is None:
                self.refused_navigation = url
            return  # counted as offsite/filtered when the request fails
        self._stats.inc("browser/offsite_blocked")
        host = Scope.describe(url)
        if host not in self._seen:
            self._seen.add(host)
            logger.debug("Blocked a rendered page's request to %r (offsite): %s", host, url)
