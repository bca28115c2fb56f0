"""Scrapy's ``scrapy.utils.curl``: a curl command line as Request arguments."""

from skitter.http.wiring import curl_to_request_kwargs

__all__ = ["curl_to_request_kwargs"]
