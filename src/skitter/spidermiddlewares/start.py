"""Scrapy's ``scrapy.spidermiddlewares.start``: marks start requests.

skitter's engine already marks every start request ``meta["is_start_request"] = True``
(Scrapy's key) as it feeds it, so this middleware is not in the default chain; it exists
for projects and plug-ins that name or subclass it, and does the same: a start request
gets the key unless it set one itself, a request found on a page is left alone.
"""

from __future__ import annotations

from typing import Any

from skitter.http import Request
from skitter.spider import BaseSpiderMiddleware

__all__ = ["StartSpiderMiddleware"]


class StartSpiderMiddleware(BaseSpiderMiddleware):
    """Sets ``meta["is_start_request"]`` on start requests that do not have it."""

    def get_processed_request(self, request: Request, response: Any) -> Request | None:
        if response is None:
            request.meta.setdefault("is_start_request", True)
        return request
