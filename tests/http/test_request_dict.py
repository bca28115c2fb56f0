"""Request.to_dict / request_from_dict, and Request subclasses through replace, copy
and the frontier's wire codec: each comes back as its class, with its attributes."""

from __future__ import annotations

import inspect
from typing import Any

import msgspec
import pytest

from skitter import FormRequest
from skitter.exceptions import CodecError
from skitter.http import JsonRequest, Request
from skitter.http._codec import _Wire, decode_request, encode_request
from skitter.utils.request import fingerprint, request_from_dict, request_httprepr
from skitter.utils.test import get_crawler


def helper(response: Any) -> None:
    pass


class Spider:
    alias = helper

    def parse_item(self, response: Any) -> None:
        pass

    def on_error(self, failure: Any) -> None:
        pass

    def __private(self, response: Any) -> None:
        pass


class Tagged(Request):
    """A spider's own subclass with an attribute of its own, the Scrapy way."""

    attributes = (*Request.attributes, "tag")

    def __init__(self, *args: Any, tag: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tag = tag


def same(a: Request, b: Request) -> None:
    assert type(a) is type(b)
    for name in type(a).attributes:
        if name == "headers":
            assert list(a.headers.items()) == list(b.headers.items())
        else:
            assert getattr(a, name) == getattr(b, name), name
    assert a.has_explicit_taskid == b.has_explicit_taskid and a.taskid == b.taskid


def full(spider: Spider) -> Request:
    return Request(
        "http://e.com/p?x=1",
        callback=spider.parse_item,
        errback=spider.on_error,
        method="POST",
        headers=[("X-A", "1"), ("X-A", "2")],
        body=b"\xa3 body",
        cookies={"currency": "\u0440\u0443\u0431"},
        meta={"a": [1, {"b": None}]},
        encoding="latin-1",
        priority=20,
        dont_filter=True,
        cb_kwargs={"k": "v"},
        exetime=5.0,
        retries=2,
        age=60,
        auto_recrawl=True,
        itag="v2",
        taskid="mine",
        render=True,
    )


def test_every_attribute_round_trips_through_a_dict() -> None:
    spider = Spider()
    r = full(spider)
    d = r.to_dict(spider=spider)
    assert d["callback"] == "parse_item" and d["errback"] == "on_error"
    assert "_class" not in d
    same(r, request_from_dict(d, spider=spider))


def test_a_plain_request_needs_no_spider() -> None:
    r = Request("http://e.com/")
    same(r, request_from_dict(r.to_dict()))


@pytest.mark.parametrize(
    "make",
    [
        lambda: FormRequest("http://e.com/", formdata={"a": "£"}, encoding="latin-1"),
        lambda: JsonRequest("http://e.com/", data={"a": 1}, dumps_kwargs={"indent": 4}),
        lambda: Tagged("http://e.com/", tag="t1", meta={"m": 1}),
    ],
)
def test_subclasses_keep_their_class_and_attributes(make: Any) -> None:
    spider = Spider()
    r = make()
    d = r.to_dict(spider=spider)
    assert d["_class"].endswith(type(r).__qualname__)
    same(r, request_from_dict(d, spider=spider))
    same(r, r.copy())
    same(r, decode_request(encode_request(r, spider), spider))
    moved = r.replace(url="http://e.com/other")
    assert type(moved) is type(r) and moved.url == "http://e.com/other"
    for name in type(r).extra_attributes:
        assert getattr(moved, name) == getattr(r, name)


def test_replace_to_another_class() -> None:
    r = FormRequest("http://e.com/", formdata={"a": "1"})
    plain = r.replace(cls=Request)
    assert type(plain) is Request and plain.body == b"a=1"


def test_aliases_and_private_methods_are_found_by_name() -> None:
    spider = Spider()
    r = Request("http://e.com/", callback=spider.alias, errback=spider._Spider__private)  # type: ignore[attr-defined]
    d = r.to_dict(spider=spider)
    assert (d["callback"], d["errback"]) == ("alias", "_Spider__private")
    same(r, request_from_dict(d, spider=spider))


class Helper:
    def parse_page(self, response: Any) -> None:
        pass


def test_another_objects_method_the_spider_holds_is_named_by_its_attribute() -> None:
    """Delegated work, as Scrapy allows: the spider's own attribute gives it back."""
    spider = Spider()
    spider.delegated = Helper().parse_page  # type: ignore[attr-defined]
    r = Request("http://e.com/", callback=spider.delegated)  # type: ignore[attr-defined]
    d = r.to_dict(spider=spider)
    assert d["callback"] == "delegated"
    same(r, request_from_dict(d, spider=spider))
    with pytest.raises(ValueError, match="is not a method of the spider"):
        request_from_dict(d, spider=Spider())  # a spider without that attribute


@pytest.mark.parametrize(
    ("callback", "spider", "message"),
    [
        (lambda response: None, Spider(), "is not an instance method in: <"),
        (helper, Spider(), "is not a method of the spider"),
        (Spider().parse_item, None, "instance method in: None"),
        (Spider().parse_item, Spider(), "is not a method of the spider"),  # another spider's
    ],
)
def test_a_callback_that_is_no_spider_method_cannot_be_named(
    callback: Any, spider: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Request("http://e.com/", callback=callback).to_dict(spider=spider)


@pytest.mark.parametrize("name", ["missing", "__init__", "__class__"])
def test_a_name_the_spider_has_no_method_for_is_a_value_error(name: str) -> None:
    d = Request("http://e.com/").to_dict()
    d["callback"] = name
    with pytest.raises(ValueError, match=f"callback '{name}' is not a method of the spider"):
        request_from_dict(d, spider=Spider())


def test_a_class_this_process_does_not_define_is_refused() -> None:
    d = {**Request("http://e.com/").to_dict(), "_class": "os.system"}
    with pytest.raises(ValueError, match=r"no Request class 'os\.system'"):
        request_from_dict(d)


def test_the_wire_format_has_a_field_for_every_request_attribute() -> None:
    """A Request attribute without a wire field would be lost in the SQLite and Redis
    frontiers: adding one to Request.attributes must add it to the codec."""
    # flags travel in ``extra`` (a plain request without flags pays nothing for them)
    assert set(Request.attributes) - {"flags"} <= set(_Wire.__struct_fields__)


def test_flags_are_stored_and_read_back_for_a_request_and_a_subclass() -> None:
    for request in (
        Request("http://e.com/", flags=["cached"]),
        Tagged("http://e.com/", tag="x", flags=["a", "b"]),
    ):
        back = decode_request(encode_request(request))
        assert back.flags == request.flags
        assert type(back) is type(request)
    assert decode_request(encode_request(Request("http://e.com/"))).flags == []


def test_a_stored_subclass_nobody_defines_any_more_is_a_codec_error() -> None:
    payload = encode_request(Tagged("http://e.com/", tag="x"))
    wire = msgspec.msgpack.decode(payload)
    wire[-2] = "gone.module.Vanished"
    with pytest.raises(CodecError, match=r"no Request class 'gone\.module\.Vanished'"):
        decode_request(msgspec.msgpack.encode(wire))


def test_a_stored_attribute_the_class_does_not_have_is_a_codec_error() -> None:
    wire = msgspec.msgpack.decode(encode_request(Tagged("http://e.com/", tag="x")))
    wire[-1] = {"tag": "x", "planted": 1}
    with pytest.raises(CodecError, match=r"has no attributes \['planted'\]"):
        decode_request(msgspec.msgpack.encode(wire))


def test_an_attribute_that_is_not_plain_data_is_refused_when_stored() -> None:
    r = JsonRequest("http://e.com/", data={}, dumps_kwargs={"default": str})
    with pytest.raises(CodecError, match="'default'"):
        encode_request(r)


def test_a_plain_request_pays_three_bytes_for_the_subclass_fields() -> None:
    plain = encode_request(Request("http://e.com/"))
    assert plain.endswith(b"\xc0\xc0\xc0")  # encoding, class and attributes: nil
    assert b"FormRequest" in encode_request(FormRequest("http://e.com/"))


def test_fingerprint_is_scrapys_value_byte_for_byte() -> None:
    # Values Scrapy 2.18 computes for the same requests (its own test data).
    assert fingerprint(Request("http://example.org")).hex() == (
        "7873d70c33756a15fed7649ba909e064bf9c5844"
    )
    with_header = Request("https://example.org#a", headers={"A": b"B"})
    assert fingerprint(with_header, include_headers=["A"], keep_fragments=True).hex() == (
        "c1ef7e949b53c18309dc7a389fdc7b1116492e11"
    )
    assert fingerprint(Request("http://a.com/?b=2&a=1")) == fingerprint(
        Request("http://a.com/?a=1&b=2")
    )
    r = Request("http://e.com/a?b=1&a=2#x")
    assert fingerprint(r) != r.fingerprint  # the task's identity is skitter's own
    assert fingerprint(r) is fingerprint(r)  # hashed once per request
    crawler_fp = get_crawler().request_fingerprinter.fingerprint(r)
    assert crawler_fp == fingerprint(r)


def test_request_httprepr_is_the_http_request_it_stands_for() -> None:
    r = Request("http://e.com/p?q=1", method="POST", headers={"X-A": "1"}, body=b"b")
    assert request_httprepr(r) == b"POST /p?q=1 HTTP/1.1\r\nHost: e.com\r\nX-A: 1\r\n\r\nb"


def test_attributes_name_exactly_what_replace_copies_and_the_constructor_takes() -> None:
    assert set(Request("http://e.com/")._arguments()) == set(Request.attributes)
    params = set(inspect.signature(Request).parameters) - {"taskid"}
    assert params == set(Request.attributes)
    assert JsonRequest.extra_attributes == ("dumps_kwargs",) and FormRequest.extra_attributes == ()
