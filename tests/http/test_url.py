"""Canonical URLs and fingerprints: equal pages must collide, different ones must not."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skitter.http import LinkResolver, _url, canonicalize_url, fingerprint, url_host
from skitter.http._url import get_fingerprint


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("http://example.com", "http://example.com/"),
        ("http://Example.COM/Path", "http://example.com/Path"),
        ("HTTP://example.com/", "http://example.com/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:8080/a", "http://example.com:8080/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/a?b=2&a=1", "http://example.com/a?a=1&b=2"),
        ("http://example.com/a?b=2&a=1&a=0", "http://example.com/a?a=1&a=0&b=2"),
        ("http://example.com/a?", "http://example.com/a"),
        ("http://example.com?x=1", "http://example.com/?x=1"),
        ("http://example.com/a?b&&a=", "http://example.com/a?a=&b"),
        ("http://example.com/caf\u00e9", "http://example.com/caf%C3%A9"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://user:pw@Example.com:80/", "http://user:pw@example.com/"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("http://\u00fcber.example/", "http://xn--ber-goa.example/"),
    ],
)
def test_canonical_forms(url: str, canonical: str) -> None:
    assert canonicalize_url(url) == canonical


@pytest.mark.parametrize("url", ["http://[::1/x", "http://host:port/", "example.com/path"])
def test_unparseable_urls_raise_value_error(url: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        canonicalize_url(url)


def test_fingerprint_depends_on_method_url_and_body() -> None:
    url = canonicalize_url("http://example.com/a?y=2&x=1")
    base = fingerprint("GET", url, b"")
    assert base == fingerprint("GET", canonicalize_url("http://example.com/a?x=1&y=2#f"), b"")
    assert base != fingerprint("POST", url, b"")
    assert base != fingerprint("GET", url, b"body")
    assert len(base) == 20


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://Example.com:8080/x", "example.com"),
        ("https://u:p@host.org/", "host.org"),
        ("http://[::1]:80/", "[::1]"),
        ("http://a.b?x", "a.b"),
        ("nonsense", ""),
    ],
)
def test_url_host(url: str, host: str) -> None:
    assert url_host(url) == host


_segment = st.text(alphabet="abcxyz019-._~", min_size=0, max_size=6)


@given(
    host=st.sampled_from(["example.com", "EXAMPLE.com", "a.example.org"]),
    path=st.lists(_segment, max_size=3),
    params=st.lists(st.tuples(_segment, _segment), max_size=4),
    fragment=st.one_of(st.none(), _segment),
)
def test_canonicalization_is_idempotent_and_order_free(
    host: str, path: list[str], params: list[tuple[str, str]], fragment: str | None
) -> None:
    query = "&".join(f"{k}={v}" for k, v in params)
    url = f"http://{host}/{'/'.join(path)}" + (f"?{query}" if query else "")
    if fragment is not None:
        url += f"#{fragment}"
    once = canonicalize_url(url)
    assert canonicalize_url(once) == once
    assert "#" not in once
    reordered = "&".join(f"{k}={v}" for k, v in sorted(params, key=lambda kv: kv[0]))
    other = f"http://{host.lower()}/{'/'.join(path)}" + (f"?{reordered}" if reordered else "")
    assert canonicalize_url(other) == once


_base_part = st.text(alphabet="ab/.?#;:=&", max_size=8)
_href = st.text(alphabet="ab/.?#;:@=&%\\ \t", min_size=1, max_size=10)


@given(
    scheme=st.sampled_from(["http", "https"]),
    host=st.sampled_from(["h.com", "h.com:8080", "u@h.com", "[::1]"]),
    path=_base_part,
    href=_href,
)
def test_link_resolver_agrees_with_urljoin(scheme: str, host: str, path: str, href: str) -> None:
    base = f"{scheme}://{host}/{path}"
    assert LinkResolver(base).resolve(href) == urljoin(base, href)


_dots = st.lists(st.sampled_from(["./", "../", ".", ".."]), max_size=5).map("".join)


@given(
    host=st.sampled_from(["h.com", "h.com:8080", "u@h.com"]),
    path=st.text(alphabet="ab/.", max_size=12),
    dots=_dots,
    rest=st.text(alphabet="ab/.?#:;= ", max_size=8),
)
def test_link_resolver_dot_segments_agree_with_urljoin(
    host: str, path: str, dots: str, rest: str
) -> None:
    """Leading ./ and ../ are resolved without urljoin: up to and past the root."""
    base = f"http://{host}/{path}"
    href = dots + rest
    assert LinkResolver(base).resolve(href) == urljoin(base, href)


@pytest.mark.parametrize(
    ("base", "href"),
    [
        ("http://h.com", "a.html"),
        ("http://h.com/p/000/1.html", "../001/2.html#reviews"),
        ("http://h.com/p/000/1.html", "./2.html"),
        ("http://h.com/p/000/1.html", "../../../../x.html?q=a"),
        ("http://h.com/p/", "./../a:b"),
        ("http://h.com/p/q?x=1", "../"),
        ("http://h.com/dir/page.html?q=1#f", "b.html"),
        ("http://h.com/dir/page.html", "/root/x?y=1#z"),
        ("http://h.com/dir/", "../up.html"),
        ("http://h.com/dir/", "//other.org/x"),
        ("http://h.com/dir/x", "?only=query"),
        ("http://h.com/dir/x", "mailto:a@b.c"),
        ("http://h.com/a/../b/", "c"),
    ],
)
def test_link_resolver_examples(base: str, href: str) -> None:
    assert LinkResolver(base).resolve(href) == urljoin(base, href)


@given(
    base=st.sampled_from(["http://h.com/a/b", "https://h.com/", "http://h.com:8080/x?q#f", ""]),
    scheme=st.sampled_from(["http://", "https://"]),
    rest=st.text(alphabet="ab/.?#:;=@[]% \\\t\n", max_size=14),
)
def test_link_resolver_absolute_links_agree_with_urljoin(base: str, scheme: str, rest: str) -> None:
    """Absolute links are given back as they are only when urljoin would give them so
    (and a link urljoin refuses, such as an unclosed ``[``, is refused the same way)."""
    href = scheme + rest
    try:
        expected: str | type[ValueError] = urljoin(base, href)
    except ValueError:
        expected = ValueError
    try:
        got: str | type[ValueError] = LinkResolver(base).resolve(href)
    except ValueError:
        got = ValueError
    assert got == expected


@pytest.mark.parametrize(
    "href",
    [
        "http://o.com/p/1.html",
        "https://o.com:8443/p?x=1#top",
        "http://o.com",
        "http://o.com/a?",
        "http://o.com/a#",
        "http://o.com/a?#f",
        "http://o.com/a;p",
        "http://o.com/a;",
        "http:///a",
        "http://[::1]:80/a",
        "http://o.com/a\tb",
    ],
)
def test_link_resolver_absolute_examples(href: str) -> None:
    base = "http://h.com/dir/page.html"
    assert LinkResolver(base).resolve(href) == urljoin(base, href)


def test_get_fingerprint_is_the_fingerprint_of_the_canonical_url() -> None:
    for url in ("http://Example.com:80/a?b=2&a=1#f", "https://h.com/x", "http://h.com"):
        expected = fingerprint("GET", canonicalize_url(url), b"")
        assert get_fingerprint(url) == expected
        assert get_fingerprint(url) == expected  # the second time from the memo


def test_get_fingerprint_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_url, "FINGERPRINT_MEMO_SIZE", 4)
    monkeypatch.setattr(_url, "_recent_fps", {})
    monkeypatch.setattr(_url, "_older_fps", {})
    urls = [f"http://h.com/{i}" for i in range(20)]
    for url in urls:
        get_fingerprint(url)
        assert len(_url._recent_fps) + len(_url._older_fps) <= 8
    assert get_fingerprint(urls[0]) == fingerprint("GET", urls[0], b"")


def test_get_fingerprint_raises_for_a_bad_url_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="port"):
            get_fingerprint("http://h.com:port/")
