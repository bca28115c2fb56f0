"""Scrapy's ``scrapy.utils.response``: a response opened in a browser, its base URL,
its meta refresh, a status as text."""

from skitter.utils._response import (
    get_base_url,
    get_meta_refresh,
    open_in_browser,
    response_status_message,
)

__all__ = ["get_base_url", "get_meta_refresh", "open_in_browser", "response_status_message"]
