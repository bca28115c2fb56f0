"""Requests, responses, URL canonicalization and fingerprints."""

from skitter.http._request import Request
from skitter.http._response import Response
from skitter.http._url import LinkResolver, canonicalize_url, fingerprint, in_domain, url_host

__all__ = [
    "LinkResolver",
    "Request",
    "Response",
    "canonicalize_url",
    "fingerprint",
    "in_domain",
    "url_host",
]
