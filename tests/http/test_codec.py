"""The request wire codec: exact round trips, callbacks by name, and refusals."""

from __future__ import annotations

import datetime
import enum
import pickle
from typing import Any
from unittest.mock import ANY

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skitter.exceptions import CodecError, FatalError, SkitterError, UnknownCallback
from skitter.http import Request
from skitter.http._codec import FORMAT_VERSION, decode_request, encode_request
from skitter.http._heldheaders import SECRET_HEADERS
from skitter.http._proxyauth import MARK, restore


class Spider:
    def parse(self, response: Any) -> None:
        pass

    def parse_item(self, response: Any) -> None:
        pass

    def _private(self, response: Any) -> None:
        pass

    def on_error(self, failure: Any) -> None:
        pass

    not_callable = 42


class OtherSpider:
    def parse(self, response: Any) -> None:
        pass


def fields(request: Request) -> dict[str, Any]:
    """Everything a request carries, for comparing two of them."""
    return {
        "url": request.url,
        "method": request.method,
        "headers": list(request.headers.items()) if request.has_headers else None,
        "body": request.body,
        "cookies": request.cookies,
        "meta": request.meta,
        "cb_kwargs": request.cb_kwargs,
        "callback": request.callback,
        "errback": request.errback,
        "priority": request.priority,
        "dont_filter": request.dont_filter,
        "exetime": request.exetime,
        "retries": request.retries,
        "age": request.age,
        "auto_recrawl": request.auto_recrawl,
        "itag": request.itag,
        "taskid": request.taskid,
        "explicit": request.has_explicit_taskid,
    }


def typed(value: Any) -> Any:
    """``value`` with the type of every leaf, so that 1 == 1.0 == True do not pass."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value), value)


def roundtrip(request: Request, spider: object | None = None) -> Request:
    return decode_request(encode_request(request, spider), spider)


# -- round trips --------------------------------------------------------------------------
text = st.text(max_size=20)
ints = st.integers(min_value=-(2**63), max_value=2**64 - 1)
scalars = st.none() | st.booleans() | ints | st.floats(allow_nan=False) | text | st.binary()
plain = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
# Secret headers are never stored (their own tests below): a round trip drops them.
header_name = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=13).filter(
    lambda name: name not in SECRET_HEADERS
)


# The extremes of each field, given explicitly, so the search spends its examples on
# mixtures: the widest integers msgpack must carry, non-ASCII everywhere, nested data, a
# negative age (never recrawl), an exetime as an int and a float.
_EXTREMES: dict[str, Any] = {
    "path": "ü/ä?q=ö#frag",
    "method": "DELETE",
    "headers": [("x-a", "1"), ("x-a", ""), ("accept", "é")],
    "body": bytes(range(50)),
    "cookies": [{"name": "ü", "value": ""}],
    "meta": {"": [2**64 - 1, -(2**63), None, True, {"k": [b"\x00", 1e308]}]},
    "cb_kwargs": {"n": -(2**63), "f": -0.0},
    "callback": "_private",
    "errback": "on_error",
    "priority": -(2**40),
    "dont_filter": True,
    "exetime": 4e9,
    "retries": 100,
    "age": -1,
    "auto_recrawl": True,
    "itag": "",
    "taskid": "\u2603",
}


@settings(max_examples=60)
@example(**_EXTREMES)
@example(**{**_EXTREMES, "cookies": {}, "meta": {}, "exetime": 2**40, "age": 1e9, "itag": None})
@given(
    path=st.text(max_size=30),
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE"]),
    headers=st.lists(st.tuples(header_name, text), max_size=4),
    body=st.binary(max_size=50),
    cookies=st.none()
    | st.dictionaries(text, text, max_size=3)
    | st.lists(st.fixed_dictionaries({"name": text, "value": text}), max_size=2),
    meta=st.dictionaries(text, plain, max_size=4),
    cb_kwargs=st.dictionaries(text, plain, max_size=4),
    callback=st.sampled_from([None, "parse", "parse_item", "_private"]),
    errback=st.sampled_from([None, "on_error"]),
    priority=st.integers(min_value=-(2**40), max_value=2**40),
    dont_filter=st.booleans(),
    exetime=st.floats(min_value=0, max_value=4e9) | st.integers(min_value=0, max_value=2**40),
    retries=st.none() | st.integers(min_value=0, max_value=100),
    age=st.floats(min_value=-1, max_value=1e9) | st.integers(min_value=-1, max_value=2**40),
    auto_recrawl=st.booleans(),
    itag=st.none() | text,
    taskid=st.none() | text,
)
def test_every_field_round_trips(
    path: str,
    method: str,
    headers: list[tuple[str, str]],
    body: bytes,
    cookies: Any,
    meta: dict[str, Any],
    cb_kwargs: dict[str, Any],
    callback: str | None,
    errback: str | None,
    priority: int,
    dont_filter: bool,
    exetime: float,
    retries: int | None,
    age: float,
    auto_recrawl: bool,
    itag: str | None,
    taskid: str | None,
) -> None:
    spider = Spider()
    request = Request(
        "https://example.com/" + path,
        getattr(spider, callback) if callback else None,
        method,
        headers,
        body,
        cookies,
        meta,
        priority=priority,
        dont_filter=dont_filter,
        errback=getattr(spider, errback) if errback else None,
        cb_kwargs=cb_kwargs,
        exetime=exetime,
        retries=retries,
        age=age,
        auto_recrawl=auto_recrawl,
        itag=itag,
        taskid=taskid,
    )
    copy = roundtrip(request, spider)
    assert typed(fields(copy)) == typed(fields(request))


def test_no_headers_stay_no_headers_and_fingerprint_is_unchanged() -> None:
    request = Request("https://example.com/a?b=1#frag", method="post", body="x")
    copy = roundtrip(request)
    assert not copy.has_headers
    assert copy.fingerprint == request.fingerprint
    assert not copy.has_explicit_taskid


def test_multivalued_headers_keep_order_and_values() -> None:
    request = Request("https://example.com/", headers=[("Accept", "a"), ("X-A", "1"), ("x-a", "2")])
    assert list(roundtrip(request).headers.items()) == [(b"Accept", [b"a"]), (b"X-A", [b"1", b"2"])]


def test_header_bytes_survive_the_store_byte_for_byte_or_are_refused() -> None:
    utf8 = "café ✓".encode()
    assert roundtrip(Request("https://e.com/", headers={b"X-Raw": utf8})).headers["X-Raw"] == utf8
    latin = Request("https://e.com/", headers={"X-Raw": "café"}, encoding="latin-1")
    assert latin.headers["X-Raw"] == b"caf\xe9"
    with pytest.raises(CodecError, match=r"X-Raw.*not UTF-8"):
        encode_request(latin)


def test_merged_priority_float_kept() -> None:
    assert roundtrip(Request("https://example.com/", priority=3.0)).priority == 3.0  # type: ignore[arg-type]


def test_payload_starts_with_the_version() -> None:
    data = encode_request(Request("https://example.com/"))
    assert msgspec.msgpack.decode(data)[0] == FORMAT_VERSION


# -- callbacks ----------------------------------------------------------------------------
def test_callbacks_travel_by_name_and_bind_to_the_decoding_spider() -> None:
    spider = Spider()
    data = encode_request(
        Request("https://example.com/", spider.parse_item, errback=spider.on_error), spider
    )
    assert b"parse_item" in data and b"on_error" in data
    other = Spider()
    copy = decode_request(data, other)
    assert copy.callback == other.parse_item
    assert copy.errback == other.on_error


def some_function(response: Any) -> None:
    pass


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda spider: lambda response: None, id="lambda"),
        pytest.param(lambda spider: some_function, id="function"),
        pytest.param(lambda spider: OtherSpider().parse, id="other-object-method"),
        pytest.param(lambda spider: Spider().parse, id="another-spider-instance"),
        pytest.param(lambda spider: print, id="builtin"),
    ],
)
def test_callback_that_is_not_a_method_of_the_spider_is_refused(make: Any) -> None:
    spider = Spider()
    request = Request("https://example.com/x", make(spider))
    with pytest.raises(
        CodecError, match=r"<GET https://example.com/x>.*only methods of the spider"
    ) as info:
        encode_request(request, spider)
    assert info.value.request is request


def test_errback_is_checked_too() -> None:
    spider = Spider()
    request = Request("https://example.com/x", spider.parse, errback=lambda failure: None)
    with pytest.raises(CodecError, match="errback"):
        encode_request(request, spider)


def test_callback_without_a_spider_is_refused() -> None:
    spider = Spider()
    with pytest.raises(CodecError, match="no spider given"):
        encode_request(Request("https://example.com/", spider.parse))


def test_method_under_another_name_is_stored_under_the_name_that_finds_it() -> None:
    """A decorator without functools.wraps renames the method, an alias in the class body
    gives it a second name, a private method is mangled: each is stored under the
    attribute that gives it back, as Scrapy's to_dict finds it."""

    def wrap(func: Any) -> Any:
        def wrapper(self: Any, response: Any) -> Any:
            return func(self, response)

        return wrapper

    def outside(self: Any, response: Any) -> None:
        pass

    class Named:
        parse = wrap(lambda self, response: None)
        alias = outside

        def __private(self, response: Any) -> None:
            pass

    spider = Named()
    for callback, name in [
        (spider.parse, "parse"),
        (spider.alias, "alias"),
        (spider._Named__private, "_Named__private"),  # type: ignore[attr-defined]
    ]:
        back = decode_request(encode_request(Request("https://e.com/", callback), spider), spider)
        assert back.callback == callback, name


def test_method_no_name_gives_back_is_refused() -> None:
    """The spider's attribute was replaced after the request was made: no name finds
    the callback again, so storing it fails now rather than on resume."""
    spider = Spider()
    request = Request("https://example.com/", spider.parse)
    spider.parse = None  # type: ignore[method-assign, assignment]
    with pytest.raises(CodecError, match="only methods"):
        encode_request(request, spider)


def test_removed_callback_gives_unknown_callback_naming_it_and_the_spider() -> None:
    spider = Spider()
    data = encode_request(Request("https://example.com/p", spider.parse_item), spider)
    with pytest.raises(UnknownCallback) as info:
        decode_request(data, OtherSpider())
    exc = info.value
    assert isinstance(exc, CodecError) and isinstance(exc, SkitterError)
    assert exc.callback == "parse_item"
    assert exc.spider_class == "OtherSpider"
    assert exc.url == "https://example.com/p"
    assert "parse_item" in str(exc) and "OtherSpider" in str(exc) and "example.com/p" in str(exc)


def test_callback_name_without_a_spider_is_unknown() -> None:
    spider = Spider()
    data = encode_request(Request("https://example.com/p", spider.parse), spider)
    with pytest.raises(UnknownCallback):
        decode_request(data)


def wire(**changes: Any) -> bytes:
    """A valid payload as a list, with some elements changed, encoded."""
    order = [
        "v", "url", "method", "headers", "body", "cookies", "meta", "cb_kwargs", "callback",
        "errback", "priority", "dont_filter", "exetime", "retries", "age", "auto_recrawl",
        "itag", "taskid",
    ]  # fmt: skip
    values = msgspec.msgpack.decode(encode_request(Request("https://example.com/w")))
    for key, value in changes.items():
        values[order.index(key)] = value
    return msgspec.msgpack.encode(values)


@pytest.mark.parametrize(
    "name",
    ["__init__", "__class__", "__getattribute__", "__reduce__", "not_callable", "missing",
     "os.system", "parse; import os", ""],
)  # fmt: skip
@pytest.mark.parametrize("role", ["callback", "errback"])
def test_crafted_callback_names_are_never_resolved(name: str, role: str) -> None:
    with pytest.raises(UnknownCallback, match="not a method of spider Spider"):
        decode_request(wire(**{role: name}), Spider())


# -- plain data ---------------------------------------------------------------------------
class Colour(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    ("meta", "where"),
    [
        ({"when": datetime.datetime(2024, 1, 1)}, r"meta\['when'\]: datetime"),
        ({"pos": (1, 2)}, r"meta\['pos'\]: tuple is not plain data \(use a list\)"),
        ({"tags": {"a"}}, r"meta\['tags'\]: set"),
        ({"deep": [1, {"x": object()}]}, r"meta\['deep'\]\[1\]\['x'\]: object"),
        ({"colour": Colour.RED}, r"meta\['colour'\]: Colour"),
        ({"k": {1: "int key"}}, r"meta\['k'\]: dict key 1 is a int"),
        ({"big": 2**64}, r"meta\['big'\]: int \d+ does not fit in 64 bits"),
        ({"fn": print}, r"meta\['fn'\]"),
    ],
)
def test_meta_must_be_plain_data(meta: dict[str, Any], where: str) -> None:
    request = Request("https://example.com/m", meta=meta)
    with pytest.raises(CodecError, match=where) as info:
        encode_request(request)
    assert "<GET https://example.com/m>" in str(info.value)


def test_cb_kwargs_and_cookies_must_be_plain_data() -> None:
    with pytest.raises(CodecError, match=r"cb_kwargs\['item'\]: object"):
        encode_request(Request("https://example.com/", cb_kwargs={"item": object()}))
    with pytest.raises(CodecError, match=r"cookies\[0\]: tuple"):
        encode_request(Request("https://example.com/", cookies=[("a", "b")]))  # type: ignore[list-item]


def test_cyclic_meta_is_refused_not_a_recursion_error() -> None:
    meta: dict[str, Any] = {}
    meta["self"] = meta
    with pytest.raises(CodecError, match="nested deeper"):
        encode_request(Request("https://example.com/", meta=meta))


@pytest.mark.parametrize(
    ("field", "value"),
    [("priority", "high"), ("priority", 1.5), ("exetime", "soon"), ("age", None),
     ("retries", 2.0), ("itag", 7), ("dont_filter", 1), ("auto_recrawl", None)],
)  # fmt: skip
def test_scheduling_fields_of_the_wrong_type_are_refused_at_encode(field: str, value: Any) -> None:
    request = Request("https://example.com/")
    setattr(request, field, value)
    with pytest.raises(CodecError, match=f"bad {field}"):
        encode_request(request)


# -- hostile or broken payloads -----------------------------------------------------------
class Boom:
    def __reduce__(self) -> Any:
        return (pytest.fail, ("pickle payload was executed",))


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(pickle.dumps(Boom()), id="pickle"),
        pytest.param(pickle.dumps(Boom(), protocol=0), id="pickle-protocol-0"),
        pytest.param(b"\x91" * 100_000 + b"\xc0", id="deeply-nested"),
        pytest.param(msgspec.msgpack.encode({"v": 1, "callback": "__init__"}), id="map"),
        pytest.param(msgspec.msgpack.encode([1, "https://x/"]), id="too-short"),
        pytest.param(b"\xdc\x00\x12\x01", id="truncated-header"),
        pytest.param(b"not msgpack at all", id="text"),
    ],
)
def test_garbage_gives_codec_error(data: bytes) -> None:
    with pytest.raises(CodecError, match=r"malformed|version"):
        decode_request(data, Spider())


def test_truncated_payloads_give_codec_error() -> None:
    spider = Spider()
    data = encode_request(
        Request("https://example.com/t", spider.parse, meta={"a": [1, 2]}), spider
    )
    for end in range(len(data)):
        with pytest.raises(CodecError):
            decode_request(data[:end], spider)


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"v": 2}, "format version 2, written by a newer skitter"),
        ({"v": 0}, "unknown format version 0"),
        ({"url": 5}, "malformed"),
        ({"url": "no-scheme"}, "not a valid request"),
        ({"priority": "1"}, "malformed"),
        ({"meta": {"a": msgspec.msgpack.Ext(1, b"x")}}, "malformed"),
        ({"meta": {"when": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)}}, "datetime"),
        ({"meta": {"a": {1: 2}}}, "dict key"),
        ({"cookies": [{"a": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)}]}, "datetime"),
        ({"headers": [["a"]]}, "malformed"),
        ({"method": None}, "malformed"),
    ],
)
def test_wrong_types_give_codec_error(changes: dict[str, Any], match: str) -> None:
    with pytest.raises(CodecError, match=match):
        decode_request(wire(**changes), Spider())


def test_a_newer_major_version_is_refused_with_what_to_do() -> None:
    values = msgspec.msgpack.decode(encode_request(Request("https://example.com/")))
    values[0] = 3
    values.append("new field")
    with pytest.raises(CodecError, match="format version 3, written by a newer skitter") as caught:
        decode_request(msgspec.msgpack.encode(values))
    assert "upgrade this worker" in str(caught.value)


def test_a_newer_writers_trailing_fields_are_ignored_by_this_reader() -> None:
    """Rolling upgrades: a worker of the same major version that appended optional fields
    must not make this one's tasks BAD."""
    spider = Spider()
    request = Request("https://example.com/new", callback=spider.parse, meta={"k": [1]})
    values = msgspec.msgpack.decode(encode_request(request, spider))
    values += ["a field from the future", {"nested": [1, 2, {"x": None}]}, 3.5, True, None]
    decoded = decode_request(msgspec.msgpack.encode(values), spider)
    assert fields(decoded) == fields(request)


def test_render_flag_round_trips_and_old_payloads_read_as_plain_http() -> None:
    assert decode_request(encode_request(Request("http://e.com/", render=True))).render is True
    # a version-1 payload written before ``render`` was appended: 18 fields
    old = msgspec.msgpack.encode(
        [
            1,
            "http://e.com/",
            "GET",
            None,
            b"",
            None,
            {},
            {},
            None,
            None,
            0,
            False,
            0.0,
            None,
            -1,
            False,
            None,
            None,
        ]
    )
    assert decode_request(old).render is False


def test_render_auto_round_trips_and_a_reader_of_bool_only_refuses_it() -> None:
    assert decode_request(encode_request(Request("http://e.com/", render="auto"))).render == "auto"
    payload = encode_request(Request("http://e.com/", render="auto"))
    # A reader from before "auto" (``render: bool``) refuses the payload (its task goes
    # BAD, to be queued again after the upgrade) rather than fetching it over HTTP only.

    class Before(msgspec.Struct, array_like=True):
        head: tuple[Any, ...]
        render: bool = False

    values = msgspec.msgpack.decode(payload)
    with pytest.raises(msgspec.ValidationError, match="Expected `bool`"):
        msgspec.msgpack.decode(msgspec.msgpack.encode([values[:18], values[18]]), type=Before)
    values[18] = "sometimes"  # nor does this reader take another string
    with pytest.raises(CodecError, match="malformed stored request"):
        decode_request(msgspec.msgpack.encode(values))


# -- no secrets stored ----------------------------------------------------------------------
SECRET = "s3cr3t-value"


def test_cookie_and_authorization_headers_are_never_stored() -> None:
    request = Request(
        "https://example.com/account",
        headers={
            "Cookie": f"session={SECRET}",
            "authorization": f"Bearer {SECRET}",
            "Proxy-Authorization": f"Basic {SECRET}",
            "Accept": "text/html",
        },
    )
    data = encode_request(request)
    assert SECRET.encode() not in data
    decoded = decode_request(data)
    # The spider's own credentials come back from this process's memory (test_held_headers);
    # the Cookie header is the cookie middleware's to make again from its jar.
    assert dict(decoded.headers.text_items()) == {
        "Accept": "text/html",
        "Authorization": f"Bearer {SECRET}",
        "Proxy-Authorization": f"Basic {SECRET}",
    }
    assert request.headers.text("Cookie") == f"session={SECRET}", "the live request is untouched"


def test_credentials_in_a_proxy_url_are_never_stored() -> None:
    request = Request(
        "http://example.com/",
        meta={"proxy": f"http://user:{SECRET}@proxy.example:3128", "other": 1},
    )
    data = encode_request(request)
    assert SECRET.encode() not in data and b"user" not in data
    decoded = decode_request(data)
    assert decoded.meta == {"proxy": "http://proxy.example:3128", "other": 1, MARK: ANY}
    assert request.meta["proxy"] == f"http://user:{SECRET}@proxy.example:3128"
    ipv6 = Request("http://example.com/", meta={"proxy": f"http://u:{SECRET}@[::1]:8080"})
    assert decode_request(encode_request(ipv6)).meta["proxy"] == "http://[::1]:8080"


def test_a_stored_proxy_gets_back_the_credentials_this_process_was_given() -> None:
    """The mark stands for the user; this process holds the password of each."""
    proxy = "http://proxy.example:3128"
    for user in ("anna", "bob"):
        request = Request(
            "http://example.com/", meta={"proxy": proxy.replace("//", f"//{user}:{SECRET}-{user}@")}
        )
        decoded = decode_request(encode_request(request))
        restore(decoded)
        assert decoded.meta == {"proxy": request.meta["proxy"]}
    a_slash = Request("http://example.com/", meta={"proxy": f"http://u:a/{SECRET}@[::1]:8080"})
    data = encode_request(a_slash)  # a secret with a '/': stripped whole all the same
    assert SECRET.encode() not in data and b"a/" not in data
    decoded = decode_request(data)
    assert decoded.meta["proxy"] == "http://[::1]:8080"
    restore(decoded)
    assert decoded.meta["proxy"] == a_slash.meta["proxy"]


def test_a_stored_proxy_whose_credentials_this_process_lacks_is_never_sent_without() -> None:
    elsewhere = Request("http://example.com/", meta={"proxy": "http://h.example:1", MARK: "x"})
    with pytest.raises(FatalError, match=r"PROXY_CREDENTIALS") as raised:
        restore(elsewhere)
    assert "http://***@h.example:1" in str(raised.value)


def test_a_proxy_from_this_workers_environment_is_not_stored_at_all() -> None:
    """HttpProxyMiddleware marks it: the worker that decodes the request picks its own."""
    request = Request(
        "http://example.com/",
        meta={"proxy": f"http://user:{SECRET}@envproxy:3128", "_scheme_proxy": True},
    )
    data = encode_request(request)
    assert SECRET.encode() not in data and b"envproxy" not in data
    assert decode_request(data).meta == {}
    spiders_own = Request("http://example.com/", meta={"proxy": "http://mine:3128"})
    assert decode_request(encode_request(spiders_own)).meta == {"proxy": "http://mine:3128"}


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"priority": float("inf")}, "priority inf"),
        ({"priority": float("nan")}, "priority nan"),
        ({"priority": 1.5}, "priority 1.5"),
        ({"exetime": float("nan")}, "exetime nan"),
        ({"age": float("-inf")}, "age -inf"),
        ({"retries": -1}, "retries -1"),
    ],
)
def test_planted_numbers_are_refused(changes: dict[str, Any], match: str) -> None:
    """Someone with write access to the store can plant them: a CodecError (the task is
    BAD), never a crash later in the scheduler."""
    with pytest.raises(CodecError, match=match):
        decode_request(wire(**changes), Spider())
