"""The Playwright route handler of a rendered page: what it may load, and how its main
document is sent.

Every request the page makes passes here once (not its redirect hops: Playwright does
not route those, which is why scope has a guard of its own, ``_scope``):

- with a scope guard, a request outside ``allowed_domains`` is aborted (a second net
  under the guard, for a request of a target the guard does not see);
- resource types in BROWSER_BLOCK_RESOURCES are aborted and counted
  (``browser/blocked_request_count``);
- the main document is sent with the request's method, body and the headers the
  middlewares set (but not those the browser computes itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skitter.http import Request
from skitter.http.wiring import to_text

if TYPE_CHECKING:
    from playwright.async_api import Page, Route

    from skitter._types import StatsSink
    from skitter.downloader.browser._scope import PageGuard

__all__ = ["page_router"]

# Headers the browser computes itself; sending ours would duplicate or contradict them.
_BROWSER_HEADERS = frozenset(
    {
        "accept-encoding",
        "connection",
        "content-length",
        "cookie",
        "host",
        "keep-alive",
        "proxy-authorization",
        "te",
        "transfer-encoding",
        "upgrade",
        "user-agent",  # set as the context's user agent instead
    }
)


def page_router(
    page: Page,
    request: Request,
    blocked: frozenset[str],
    stats: StatsSink,
    guard: PageGuard | None,
) -> Callable[[Route], Any]:
    """The handler to give ``page.route("**/*", ...)`` for rendering ``request``."""
    from playwright.async_api import Error as PlaywrightError

    first_navigation = True

    async def route(route: Route) -> None:
        nonlocal first_navigation
        sent = route.request
        try:
            main_frame = sent.frame == page.main_frame
            if guard is not None and not guard.allows(
                sent.url, navigation=main_frame and sent.is_navigation_request()
            ):
                await route.abort("blockedbyclient")
            elif sent.resource_type in blocked:
                stats.inc("browser/blocked_request_count")
                await route.abort("blockedbyclient")
            elif first_navigation and main_frame:
                first_navigation = False
                await route.continue_(**_main_document(request, sent.headers))
            else:
                await route.continue_()
        except PlaywrightError:
            pass  # the page was closed or crashed meanwhile; navigation reports it

    return route


def _main_document(request: Request, browser_headers: dict[str, str]) -> dict[str, Any]:
    """``route.continue_`` arguments that make the main document ``request``."""
    headers = dict(browser_headers)
    if request.has_headers:
        for name, values in request.headers.items():
            low = to_text(name).lower()
            if low not in _BROWSER_HEADERS:
                headers[low] = ", ".join(to_text(value) for value in values)
    out: dict[str, Any] = {"headers": headers}
    if request.method != "GET":
        out["method"] = request.method
    if request.body:
        out["post_data"] = request.body
    return out
