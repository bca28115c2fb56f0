"""Scrapy's ``scrapy.spidermiddlewares.referer`` path for skitter's built-in and its
referrer policies (REFERRER_POLICY may name them by this path)."""

from skitter.http._referrer import (
    DefaultReferrerPolicy,
    NoReferrerPolicy,
    NoReferrerWhenDowngradePolicy,
    OriginPolicy,
    OriginWhenCrossOriginPolicy,
    ReferrerPolicy,
    SameOriginPolicy,
    StrictOriginPolicy,
    StrictOriginWhenCrossOriginPolicy,
    UnsafeUrlPolicy,
)
from skitter.spider import RefererMiddleware

__all__ = [
    "DefaultReferrerPolicy",
    "NoReferrerPolicy",
    "NoReferrerWhenDowngradePolicy",
    "OriginPolicy",
    "OriginWhenCrossOriginPolicy",
    "RefererMiddleware",
    "ReferrerPolicy",
    "SameOriginPolicy",
    "StrictOriginPolicy",
    "StrictOriginWhenCrossOriginPolicy",
    "UnsafeUrlPolicy",
]
