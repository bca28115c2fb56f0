"""What other packages compose from the HTTP layer beside ``skitter.http``'s user API:
the wire codec and the compact in-memory form of a request (the frontiers, the
multiprocess service, media), the credentials held off a stored request (proxy
authorization and held headers, for the downloader), the scope's entry parser, URL,
header, method and curl helpers, and the referrer policies (Scrapy's import paths in
``skitter.utils`` and ``skitter.spidermiddlewares`` re-export some of them).
"""

from skitter.http._codec import FORMAT_VERSION, decode_request, encode_request
from skitter.http._compact import Callbacks, pack_request, unpack_request
from skitter.http._curl import curl_to_request_kwargs, request_to_curl
from skitter.http._headers import to_text
from skitter.http._heldheaders import HEADERS_MARK, HELD_HEADERS, unrestorable
from skitter.http._methods import spider_method
from skitter.http._proxyauth import HELD, MARK, restore
from skitter.http._referrer import (
    DefaultReferrerPolicy,
    NoReferrerPolicy,
    NoReferrerWhenDowngradePolicy,
    OriginPolicy,
    OriginWhenCrossOriginPolicy,
    SameOriginPolicy,
    StrictOriginPolicy,
    StrictOriginWhenCrossOriginPolicy,
    UnsafeUrlPolicy,
)
from skitter.http._request import request_class
from skitter.http._response_types import (
    MIMETYPES,
    class_from_body,
    class_from_disposition,
    class_from_filename,
    class_from_mime,
)
from skitter.http._scope import LOCAL_SCHEMES, parse_entry
from skitter.http._selector import Selector
from skitter.http._url import add_http_if_no_scheme, url_netloc

__all__ = [
    "FORMAT_VERSION",
    "HEADERS_MARK",
    "HELD",
    "HELD_HEADERS",
    "LOCAL_SCHEMES",
    "MARK",
    "MIMETYPES",
    "Callbacks",
    "DefaultReferrerPolicy",
    "NoReferrerPolicy",
    "NoReferrerWhenDowngradePolicy",
    "OriginPolicy",
    "OriginWhenCrossOriginPolicy",
    "SameOriginPolicy",
    "Selector",
    "StrictOriginPolicy",
    "StrictOriginWhenCrossOriginPolicy",
    "UnsafeUrlPolicy",
    "add_http_if_no_scheme",
    "class_from_body",
    "class_from_disposition",
    "class_from_filename",
    "class_from_mime",
    "curl_to_request_kwargs",
    "decode_request",
    "encode_request",
    "pack_request",
    "parse_entry",
    "request_class",
    "request_to_curl",
    "restore",
    "spider_method",
    "to_text",
    "unpack_request",
    "unrestorable",
    "url_netloc",
]
