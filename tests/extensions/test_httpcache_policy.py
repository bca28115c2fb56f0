"""The cache policies' rules, on responses built by hand (pure functions of headers and
the clock: no server needed to decide freshness)."""

from __future__ import annotations

from email.utils import formatdate
from typing import Any

import pytest

from skitter._clock import FakeClock
from skitter.exceptions import ConfigError
from skitter.extensions.httpcache import (
    DummyPolicy,
    RFC2616Policy,
    parse_cache_control,
    policy_class,
    storage_class,
)
from skitter.extensions.httpcache import SqliteCacheStorage as Sqlite
from skitter.extensions.httpcache._entry import STORED_AT
from skitter.http import Request, Response
from skitter.settings import Settings

NOW = 1_800_000_000.0


def date(offset: float = 0.0) -> str:
    return formatdate(NOW + offset, usegmt=True)


def policy(**settings: Any) -> tuple[RFC2616Policy, FakeClock]:
    clock = FakeClock(epoch=NOW)
    return RFC2616Policy(Settings(settings), clock), clock


def response(status: int = 200, **headers: str) -> Response:
    named = {k.replace("_", "-"): v for k, v in headers.items()}
    return Response("http://example.com/", status, named, b"body")


def test_parse_cache_control() -> None:
    assert parse_cache_control(['max-age=60, no-cache, private="x"', "Must-Revalidate"]) == {
        "max-age": "60",
        "no-cache": None,
        "private": "x",
        "must-revalidate": None,
    }
    assert parse_cache_control(["no-cache, max-age=5"], ignore=["No-Cache"]) == {"max-age": "5"}


@pytest.mark.parametrize(
    ("status", "headers", "stored"),
    [
        (200, {}, False),  # neither validators nor freshness
        (200, {"ETag": '"x"'}, True),
        (200, {"Last-Modified": date(-60)}, True),
        (200, {"Cache-Control": "max-age=10"}, True),
        (200, {"Expires": date(60)}, True),
        (200, {"Cache-Control": "no-store, max-age=10"}, False),
        (304, {"ETag": '"x"'}, False),
        (301, {}, True),
        (302, {}, False),
        (404, {"ETag": '"x"'}, False),
    ],
)
def test_what_rfc2616_stores(status: int, headers: dict[str, str], stored: bool) -> None:
    p, _ = policy()
    request = Request("http://example.com/")
    assert p.should_cache_response(response(status, **headers), request) is stored


def test_always_store_and_ignored_controls() -> None:
    p, _ = policy(HTTPCACHE_ALWAYS_STORE=True)
    assert p.should_cache_response(response(), Request("http://example.com/"))
    p, _ = policy(HTTPCACHE_IGNORE_RESPONSE_CACHE_CONTROLS=["no-store", "no-cache"])
    kept = response(Cache_Control="no-store, no-cache, max-age=60", Date=date())
    assert p.should_cache_response(kept, Request("http://example.com/"))
    assert p.is_cached_response_fresh(kept, Request("http://example.com/"))


def test_requests_that_are_not_cached() -> None:
    p, _ = policy()
    assert not p.should_cache_request(Request("file:///etc/hosts"))  # HTTPCACHE_IGNORE_SCHEMES
    assert not p.should_cache_request(
        Request("http://example.com/", headers={"Cache-Control": "no-store"})
    )
    assert p.should_cache_request(Request("http://example.com/"))


def test_freshness_by_max_age_then_validators() -> None:
    p, clock = policy()
    cached = response(Cache_Control="max-age=60", Date=date(), ETag='"x"', Last_Modified=date(-9))
    request = Request("http://example.com/")
    assert p.is_cached_response_fresh(cached, request)
    assert "If-None-Match" not in request.headers
    clock.advance(61)
    assert not p.is_cached_response_fresh(cached, request)
    assert request.headers["If-None-Match"] == b'"x"'
    assert request.headers.text("If-Modified-Since") == date(-9)


def test_freshness_by_expires_and_by_last_modified() -> None:
    p, clock = policy()
    expires = response(Date=date(), Expires=date(100))
    heuristic = response(Date=date(), Last_Modified=date(-1000))  # fresh for 100 s
    unreadable = response(Date=date(), Expires="0")
    request = Request("http://example.com/")
    assert p.is_cached_response_fresh(expires, request)
    assert p.is_cached_response_fresh(heuristic, request)
    assert not p.is_cached_response_fresh(unreadable, request)  # already expired
    clock.advance(101)
    assert not p.is_cached_response_fresh(expires, request)
    assert not p.is_cached_response_fresh(heuristic, request)


def test_age_header_no_cache_and_request_max_age() -> None:
    p, _ = policy()
    request = Request("http://example.com/")
    assert not p.is_cached_response_fresh(response(Cache_Control="max-age=60", Age="61"), request)
    assert not p.is_cached_response_fresh(
        response(Cache_Control="no-cache, max-age=60", Date=date(), ETag='"x"'), request
    )
    assert request.headers["If-None-Match"] == b'"x"'  # no-cache asks for revalidation
    cached = response(Cache_Control="max-age=60", Date=date(-30))
    assert p.is_cached_response_fresh(cached, Request("http://example.com/"))
    assert not p.is_cached_response_fresh(
        cached, Request("http://example.com/", headers={"Cache-Control": "max-age=10"})
    )
    assert not p.is_cached_response_fresh(
        cached, Request("http://example.com/", headers={"Cache-Control": "no-cache"})
    )


def test_max_stale_and_must_revalidate() -> None:
    p, clock = policy()
    cached = response(Cache_Control="max-age=10", Date=date())
    strict = response(Cache_Control="max-age=10, must-revalidate", Date=date())
    clock.advance(15)

    def asking(value: str) -> Request:
        return Request("http://example.com/", headers={"Cache-Control": value})

    assert p.is_cached_response_fresh(cached, asking("max-stale=10"))
    assert not p.is_cached_response_fresh(cached, asking("max-stale=2"))
    assert p.is_cached_response_fresh(cached, asking("max-stale"))
    assert not p.is_cached_response_fresh(strict, asking("max-stale"))


def test_what_confirms_a_stale_entry() -> None:
    p, _ = policy()
    request = Request("http://example.com/")
    cached = response(Cache_Control="max-age=1")
    assert p.is_cached_response_valid(cached, response(304), request)
    assert p.is_cached_response_valid(cached, response(503), request)
    assert not p.is_cached_response_valid(cached, response(200), request)
    strict = response(Cache_Control="must-revalidate")
    assert not p.is_cached_response_valid(strict, response(503), request)


def test_dummy_policy() -> None:
    p = DummyPolicy(Settings({"HTTPCACHE_IGNORE_HTTP_CODES": [500]}))
    request = Request("http://example.com/")
    assert p.should_cache_response(response(404), request)
    assert not p.should_cache_response(response(500), request)
    assert not p.should_cache_request(Request("file:///tmp/x"))
    assert p.is_cached_response_fresh(response(Cache_Control="no-cache"), request)


@pytest.mark.parametrize(
    "name",
    [
        "rfc2616",
        "RFC2616",
        "skitter.extensions.httpcache.RFC2616Policy",
        "scrapy.extensions.httpcache.RFC2616Policy",
        RFC2616Policy,
    ],
)
def test_policy_names(name: Any) -> None:
    assert policy_class(name) is RFC2616Policy


@pytest.mark.parametrize(
    "name", ["sqlite", "skitter.extensions.httpcache.SqliteCacheStorage", Sqlite]
)
def test_storage_names(name: Any) -> None:
    assert storage_class(name) is Sqlite


def test_ignore_codes_must_be_statuses() -> None:
    with pytest.raises(ConfigError, match="HTTPCACHE_IGNORE_HTTP_CODES"):
        DummyPolicy(Settings({"HTTPCACHE_IGNORE_HTTP_CODES": ["not-a-status"]}))


def test_an_entry_without_date_ages_from_when_it_was_stored() -> None:
    """No Date header: the entry's age counts from the time the storage kept it
    (``STORED_AT`` in the request's meta), not from now, so it does go stale."""
    rfc, clock = policy()
    cached = response(Cache_Control="max-age=60")
    stored = Request("http://example.com/", meta={STORED_AT: NOW - 30})
    assert rfc.is_cached_response_fresh(cached, stored)
    clock.advance(31)
    assert not rfc.is_cached_response_fresh(cached, Request(stored.url, meta=dict(stored.meta)))
