"""Scope: allowed_domains entries, which URLs they allow, and tricky URLs read the way
the transport reads them (yarl), never by a look-alike parser."""

from __future__ import annotations

import logging

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from yarl import URL

from skitter.exceptions import InvalidURL
from skitter.http import Request, Scope


# -- entries ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("entry", "normalized"),
    [
        ("example.com", "example.com"),
        ("Example.COM.", "example.com"),
        ("example.com:8080", "example.com:8080"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("127.0.0.1", "127.0.0.1"),
        ("127.0.0.1:8080", "127.0.0.1:8080"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("[::1]:8080", "[::1]:8080"),
        ("2001:db8::1", "2001:db8::1"),
        ("2001:DB8:0:0::1", "2001:db8::1"),
        # reduced, with a warning
        ("http://example.com/shop", "example.com"),
        ("https://example.com:8443/", "example.com:8443"),
        ("*.example.com", "example.com"),
        ("example.com/path", "example.com"),
    ],
)
def test_usable_entries(entry: str, normalized: str) -> None:
    scope = Scope([entry])
    assert [str(e) for e in scope.entries] == [normalized]
    assert scope.problems == ()


@pytest.mark.parametrize(
    "entry", ["", "  ", None, 42, "127.1", "ex ample.com", "a..b", "*", "host:0", "host:99999",
              "host:", "host:abc", "::zz", "[::1", "http://", "a\\b.com"],
)  # fmt: skip
def test_unusable_entries_match_nothing_and_are_reported(
    entry: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="skitter.scope"):
        scope = Scope([entry, "example.com"])
    assert [str(e) for e in scope.entries] == ["example.com"]
    [problem] = scope.problems
    assert repr(entry) in problem and "unusable" in problem
    assert any(repr(entry) in r.getMessage() for r in caplog.records)
    assert scope.allows(URL("http://example.com/"))
    assert not scope.allows(URL("http://other.org/"))


@pytest.mark.parametrize("entries", [[""], [None], ["127.1", "::zz"], ["http://"]])
def test_only_unusable_entries_refuse_everything(entries: list[object]) -> None:
    """The old code reduced such entries to nothing and switched the filter off."""
    scope = Scope(entries)
    assert scope.restricted
    assert scope.problems[-1] == "allowed_domains has no usable entry: every request is offsite"
    for url in ("http://example.com/", "http://127.0.0.1/", "http://[::1]/", "http://a/"):
        assert not scope.allows(URL(url)), url


def test_empty_allowed_domains_is_no_restriction() -> None:
    for scope in (Scope(), Scope([]), Scope(None)):
        assert not scope.restricted
        assert scope.allows(URL("ftp://anything.example/"))
        assert scope.allows_url("http://a/") is True


def test_a_string_is_one_entry_not_its_letters(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="skitter.scope"):
        scope = Scope("example.com")
    assert [str(e) for e in scope.entries] == ["example.com"]
    assert "not a string" in caplog.records[0].getMessage()
    assert not scope.allows(URL("http://e/"))


def test_urls_given_by_mistake_are_reduced_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="skitter.scope"):
        Scope(["http://Example.com/path", "ok.net"])
    [record] = caplog.records
    assert "using 'example.com' for 'http://Example.com/path'" in record.getMessage()


def test_the_scope_of_a_spider_is_built_once() -> None:
    class Shop:
        allowed_domains = ["example.com"]

    spider = Shop()
    assert Scope.of(spider) is Scope.of(spider)
    assert Scope.of(Shop()) is not Scope.of(spider)
    assert not Scope.of(None).restricted


# -- matching -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("allowed", "url", "ok"),
    [
        # a bare host: every port and subdomain, as in Scrapy
        (["example.com"], "http://example.com/", True),
        (["example.com"], "https://example.com:8443/x", True),
        (["example.com"], "http://a.b.example.com:81/", True),
        (["example.com"], "http://EXAMPLE.com./", True),  # case and a trailing dot
        (["example.com"], "http://notexample.com/", False),
        (["example.com"], "http://example.com.evil.com/", False),
        (["example.com"], "ftp://example.com/", False),  # http and https only
        # host:port: that port only (and its subdomains on it)
        (["example.com:8080"], "http://example.com:8080/", True),
        (["example.com:8080"], "http://www.example.com:8080/", True),
        (["example.com:8080"], "http://example.com/", False),
        (["example.com:8080"], "http://example.com:8081/", False),
        (["example.com:80"], "http://example.com/", True),  # the default port is a port
        (["example.com:80"], "https://example.com/", False),
        # IP literals: exactly that address; localhost is another host
        (["127.0.0.1"], "http://127.0.0.1:1234/", True),
        (["127.0.0.1"], "http://localhost:1234/", False),
        (["localhost"], "http://127.0.0.1/", False),
        (["127.0.0.1"], "http://x.127.0.0.1/", False),  # no "subdomains" of an address
        (["127.0.0.1"], "http://127.1/", False),
        (["127.0.0.1:8080"], "http://127.0.0.1:8081/", False),
        (["::1"], "http://[::1]:8080/", True),
        (["::1"], "http://[0:0::1]/", True),
        (["[::1]:8080"], "http://[::1]:8080/", True),
        (["[::1]:8080"], "http://[::1]:8081/", False),
        (["2001:db8::1"], "http://[2001:DB8::1]/", True),
        (["2001:db8::1"], "http://[2001:db8::2]/", False),
        (["::1"], "http://127.0.0.1/", False),
        # IDNA
        (["bücher.de"], "http://xn--bcher-kva.de/", True),
        (["xn--bcher-kva.de"], "http://BÜCHER.de/", True),
        # what the transport reads as the host decides
        (["example.com"], "http://example.com@evil.com/", False),
        (["example.com"], "http://evil.com#@example.com/", False),
        (["example.com"], "http://evil.com?@example.com/", False),
        (["example.com"], "http://evil.com/@example.com", False),
        (["example.com"], "http://user:pw@example.com/", True),
        (["example.com"], "http://ex%61mple.com/", False),  # yarl does not decode a host
        (["example.com"], "http://example。com/", True),  # IDNA maps the ideographic stop
        (["example.com"], "http://exa\tmple.com/", True),  # tabs are dropped, as WHATWG says
        (["example.com"], "http:///example.com/", False),  # no host at all
    ],
)
def test_which_urls_are_in_scope(allowed: list[str], url: str, ok: bool) -> None:
    scope = Scope(allowed)
    assert scope.allows(URL(url)) is ok
    assert scope.allows_url(url) is ok


@pytest.mark.parametrize(
    "url",
    ["http://evil.com\\@example.com/", "http://example.com:99999/", "http://[::1/",
     "http://[::1]example.com/", "http://a.com:8080:90/", "http://example.com[::1]@"],
)  # fmt: skip
def test_urls_the_transport_cannot_read_are_not_allowed(url: str) -> None:
    scope = Scope(["example.com", "::1", "a.com"])
    assert scope.allows_url(url) is None  # the caller refuses (browser) or reports (links)
    with pytest.raises(InvalidURL, match="invalid URL"):
        Request(url).parsed_url  # noqa: B018 - what the Downloader's guard reads


def test_admits_honours_allow_offsite_only() -> None:
    scope = Scope(["example.com"])
    assert scope.admits(Request("http://example.com/"))
    assert scope.admits(Request("http://evil.com/", meta={"allow_offsite": True}))
    assert not scope.admits(Request("http://evil.com/", dont_filter=True))
    assert not scope.admits(Request("http://evil.com/", meta={"allow_offsite": False}))


def test_parsed_url_is_parsed_once() -> None:
    request = Request("http://Example.com/a b")
    assert request.parsed_url is request.parsed_url
    assert request.parsed_url.raw_host == "example.com"
    assert request.url == "http://example.com/a%20b"  # escaped as Scrapy does


# -- the string path agrees with the parsed path ------------------------------------------
_HOSTS = st.sampled_from(
    ["example.com", "EXAMPLE.com", "sub.example.com", "evil.com", "127.0.0.1", "localhost",
     "[::1]", "::1", "bücher.de", "user:pw@example.com"]
)  # fmt: skip
_MARKS = st.sampled_from(
    ["@", "\\", "#", "?", "/", "//", ":", ":8080", ":80", "\t", "\n", " ", "%40", "%2e", ".",
     "。", "[", "]"]
)  # fmt: skip
_TEXT = st.lists(st.one_of(_HOSTS, _MARKS), max_size=6).map("".join)
_START = st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "http:/", "http:", "//", ""])


_ALLOWED = ["example.com", "127.0.0.1:8080", "::1", "localhost"]
#: The verdicts to check against: ``allows`` on the parsed URL, cached by the exact
#: (scheme, host, port), so one scope serves every example.
_REFERENCE = Scope(_ALLOWED)


# Each example is a family of URLs sharing a beginning, built from the characters that end
# or fake an authority; the explicit ones are the known ways to smuggle a host past a
# prefix cache (userinfo, a tab, a port before "@", an escaped "@", a path-like host), so
# the search spends its examples on what they do not cover.
@settings(max_examples=150)
@example("http://", "example.com", ["", "@evil.com/"])
@example("http://", "example.com", ["\t@evil.com/", "/"])
@example("http://", "localhost", [":8080@evil.com/", ":8080/"])
@example("http://", "localhost", ["%40evil.com/", "/a"])
@example("https://", "[::1]", [":80@evil.com", "#@evil.com"])
@example("//", "127.0.0.1:8080", ["\\evil.com", "?@evil.com"])
@example("HTTP://", "bücher.de", ["。example.com", ".example.com"])
@given(_START, st.tuples(_TEXT, _HOSTS, _TEXT).map("".join), st.lists(_TEXT, min_size=2))
def test_allows_url_agrees_with_allows_on_the_parsed_url(
    start: str, common: str, tails: list[str]
) -> None:
    """``allows_url`` caches by the text up to the end of the authority: that text alone
    must decide the verdict, so URLs sharing a beginning may not share a wrong one."""
    scope = Scope(_ALLOWED)  # a fresh prefix cache for each family
    for tail in ["", *tails]:
        url = start + common + tail
        got = scope.allows_url(url)
        try:
            parsed = URL(url)
        except Exception:  # yarl raises IndexError for some brackets, ValueError mostly
            continue  # unparsable: None, or the verdict of an equal authority seen before
        assert got is _REFERENCE.allows(parsed), url


@pytest.mark.parametrize(
    ("first", "then"),
    [("http://example.com", "http://example.com@evil.com/"),
     ("http://example.com", "http://example.com\t@evil.com/"),
     ("http://localhost", "http://localhost:8080@evil.com/"),
     ("http://localhost", "http://localhost%40evil.com/")],
)  # fmt: skip
def test_a_shared_beginning_does_not_share_a_verdict(first: str, then: str) -> None:
    scope = Scope(["example.com", "localhost", "::1"])
    assert scope.allows_url(first) is True
    assert scope.allows_url(then) is False
