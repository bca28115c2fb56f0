"""Requests, responses, URL canonicalization and fingerprints, and the crawl's scope."""

from skitter.http._form import FormRequest
from skitter.http._headers import Headers
from skitter.http._json_request import JsonRequest
from skitter.http._link import Link
from skitter.http._referrer import ReferrerPolicies, ReferrerPolicy
from skitter.http._request import RenderMode, Request
from skitter.http._response import Response
from skitter.http._response_types import (
    HtmlResponse,
    JsonResponse,
    TextResponse,
    XmlResponse,
    response_class,
)
from skitter.http._scope import SCHEMES, Scope
from skitter.http._url import LinkResolver, canonicalize_url, fingerprint, in_domain, url_host
from skitter.http._xmlrpc import XmlRpcRequest

__all__ = [
    "SCHEMES",
    "FormRequest",
    "Headers",
    "HtmlResponse",
    "JsonRequest",
    "JsonResponse",
    "Link",
    "LinkResolver",
    "ReferrerPolicies",
    "ReferrerPolicy",
    "RenderMode",
    "Request",
    "Response",
    "Scope",
    "TextResponse",
    "XmlResponse",
    "XmlRpcRequest",
    "canonicalize_url",
    "fingerprint",
    "in_domain",
    "response_class",
    "url_host",
]
