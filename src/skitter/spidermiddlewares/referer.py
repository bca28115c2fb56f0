"""Scrapy's ``scrapy.spidermiddlewares.referer`` path for skitter's built-in and its
referrer policies (REFERRER_POLICY may name them by this path)."""

from skitter.http import ReferrerPolicy
from skitter.http.wiring import (
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
from skitter.spider import RefererMiddleware

#: Scrapy's constants for the policies' names (what REFERRER_POLICY and the
#: ``referrer_policy`` meta key may say).
POLICY_NO_REFERRER = NoReferrerPolicy.name
POLICY_NO_REFERRER_WHEN_DOWNGRADE = NoReferrerWhenDowngradePolicy.name
POLICY_SAME_ORIGIN = SameOriginPolicy.name
POLICY_ORIGIN = OriginPolicy.name
POLICY_STRICT_ORIGIN = StrictOriginPolicy.name
POLICY_ORIGIN_WHEN_CROSS_ORIGIN = OriginWhenCrossOriginPolicy.name
POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN = StrictOriginWhenCrossOriginPolicy.name
POLICY_UNSAFE_URL = UnsafeUrlPolicy.name
POLICY_SCRAPY_DEFAULT = DefaultReferrerPolicy.name

__all__ = [
    "POLICY_NO_REFERRER",
    "POLICY_NO_REFERRER_WHEN_DOWNGRADE",
    "POLICY_ORIGIN",
    "POLICY_ORIGIN_WHEN_CROSS_ORIGIN",
    "POLICY_SAME_ORIGIN",
    "POLICY_SCRAPY_DEFAULT",
    "POLICY_STRICT_ORIGIN",
    "POLICY_STRICT_ORIGIN_WHEN_CROSS_ORIGIN",
    "POLICY_UNSAFE_URL",
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
