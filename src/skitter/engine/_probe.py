"""One request at a time through a crawl's components, without the engine's loop.

The shell, ``skitter fetch``/``view``/``parse`` and the contracts of ``skitter check``
must download as the crawl would (the spider's settings, every downloader middleware:
robots.txt, cookies, redirects, retries, scope), not with a bare GET. A ``Probe`` holds
one built ``Project`` open and does, on demand, what ``TaskRunner`` does for a lease:

- ``fetch`` downloads through the middleware onion, follows redirects the middleware
  asks for and retries by the retry table (RETRY_DELAYS, RETRY_TIMES) instead of
  queueing them; out of retries it returns the last response, or raises the error;
- ``check_input`` runs the spider middlewares' input side (HttpErrorMiddleware...);
- ``scrape`` runs a callback on a response, through the spider middlewares' output
  side, and returns what came out (items and requests), nothing queued;
- ``process_item`` sends an item through the pipelines and feeds.

There is no scheduler here: no dupe filter, no slots, no delays between requests beyond
what the caller does; a probe is for a person (or a check) asking one thing at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from skitter.downloader.wiring import failed_times
from skitter.engine._outcome import retry_reason
from skitter.engine._project import Project
from skitter.exceptions import RetryLater
from skitter.http import Request, Response
from skitter.signals import response_received
from skitter.spider import aiter_output

__all__ = ["Probe"]

log = logging.getLogger("skitter.engine")


class Probe:
    """A crawl's spider and components, opened for one-off requests.

    ``async with crawler.probe() as probe`` opens the project (downloader, pipelines,
    spider_opened) and closes it on the way out (spider_closed, feeds finalized)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        #: The spider the components were built for.
        self.spider: Any = project.spider

    async def __aenter__(self) -> Probe:
        await self.open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def open(self) -> None:
        await self.project.open()

    async def close(self) -> None:
        await self.project.close()

    async def fetch(self, request: Request) -> Response:
        """The response to ``request`` as a crawl would get it (redirects followed unless
        the request says otherwise, retries waited out). Raises what the crawl would
        give the errback: ``IgnoreRequest`` (offsite, robots.txt), a ``RequestError``."""
        project = self.project
        policy = project.scheduler.retry_policy
        retried = 0
        while True:
            try:
                result = await project.downloader.fetch(request)
            except RetryLater as exc:
                own = request.meta.get("max_retry_times") if request.meta else None
                retries = request.retries if request.retries is not None else own
                if policy.gives_up(retried, None if retries is None else int(retries)):
                    if exc.response is not None:
                        return await self._received(exc.response)
                    raise (exc.cause or exc) from None
                wait = max(policy.delay(retried), exc.delay or 0.0)
                log.info("Retrying %s in %.1fs (%s): %s", request, wait,
                         failed_times(retried + 1), retry_reason(exc))  # fmt: skip
                retried += 1
                await asyncio.sleep(wait)
                continue
            if isinstance(result, Request):  # a redirect: the middleware capped the hops
                request = result
                continue
            return await self._received(result)

    async def _received(self, response: Response) -> Response:
        project = self.project
        project.stats.inc("response_received_count")
        if response_received in project.signals.live:
            await project.signals.send_catch_log_async(
                response_received, response=response, request=response.request, spider=self.spider
            )
        return response

    async def check_input(self, response: Response) -> None:
        """The spider middlewares' ``process_spider_input``: raises ``HttpError`` for a
        status the spider does not handle, as the crawl would before the callback."""
        await self.project.spider_mw.process_input(response)

    def callback_for(self, response: Response) -> Callable[..., Any]:
        """The callback the crawl would call for ``response``."""
        request = response.request
        if request is not None and request.callback is not None:
            return request.callback
        return self.spider.parse  # type: ignore[no-any-return]

    async def scrape(
        self,
        response: Response,
        callback: Callable[..., Any] | None = None,
        cb_kwargs: dict[str, Any] | None = None,
    ) -> list[Any]:
        """What ``callback`` (default: the request's, else ``parse``) yields for
        ``response`` after the spider middlewares' output side (offsite, depth, ...):
        items and requests, in order; nothing is queued or sent to the pipelines. A
        callback's exception is offered to the middlewares' ``process_spider_exception``,
        and raised if none recovers."""
        request = response.request
        if callback is None:
            callback = self.callback_for(response)
        if cb_kwargs is None:
            cb_kwargs = dict(request.cb_kwargs) if request is not None else {}
        manager = self.project.spider_mw
        out: list[Any] = []
        try:
            async for obj in manager.process_output(
                response, aiter_output(callback(response, **cb_kwargs))
            ):
                if obj is not None:
                    out.append(obj)
        except Exception as exc:
            recovered = await manager.process_exception(response, exc)
            if recovered is None:
                raise
            out.extend([obj async for obj in recovered if obj is not None])
        return out

    async def process_item(self, item: Any, response: Response | None = None) -> Any | None:
        """``item`` through the pipelines (and feeds): what the last one returned, or
        None if it was dropped."""
        return await self.project.pipelines.process_item(item, self.spider, response)
