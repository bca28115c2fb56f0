"""FormRequest: form data encoding, and from_response on HTML forms (the cases Scrapy's
test suite pins down, plus what browsers leave out: disabled fields)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlsplit

import pytest

from skitter import FormRequest
from skitter.http import HtmlResponse, Request, Response, XmlResponse

FORM_CT = "application/x-www-form-urlencoded"


def page(html: str | bytes, url: str = "http://example.com/dir/page.html", **kw: Any) -> Any:
    kw.setdefault("encoding", "utf-8")
    return HtmlResponse(url, body=html, **kw)


def sent(request: Request, encoding: str = "utf-8") -> list[tuple[str, str]]:
    """The (name, value) pairs submitted, in order."""
    raw = request.body.decode("ascii") if request.method == "POST" else urlsplit(request.url).query
    return parse_qsl(raw, keep_blank_values=True, encoding=encoding)


def fields(request: Request, encoding: str = "utf-8") -> dict[str, list[str]]:
    raw = request.body.decode("ascii") if request.method == "POST" else urlsplit(request.url).query
    return parse_qs(raw, keep_blank_values=True, encoding=encoding)


# -- formdata ----------------------------------------------------------------------------
def test_formdata_makes_a_urlencoded_post() -> None:
    r = FormRequest("http://e.com/post", formdata={"name": "Jo Doe", "price": "£ 1"})
    assert r.method == "POST"
    assert r.headers.text("Content-Type") == FORM_CT
    assert sorted(r.body.split(b"&")) == [b"name=Jo+Doe", b"price=%C2%A3+1"]
    assert r.encoding == "utf-8"


def test_formdata_is_encoded_with_the_request_encoding() -> None:
    r = FormRequest("http://e.com/", formdata={"price": "£ 1"}, encoding="latin-1")
    assert r.body == b"price=%A3+1"


def test_bytes_pairs_and_lists_of_values() -> None:
    r = FormRequest("http://e.com/", formdata=[(b"a", b"\xc2\xa3"), ("c", ["x", "y"])])
    assert r.body == b"a=%C2%A3&c=x&c=y"


def test_get_puts_formdata_in_the_query_replacing_it_and_keeps_the_fragment() -> None:
    r = FormRequest("http://e.com/s?a=0&c=3#top", method="GET", formdata=[("a", "1"), ("a", "2")])
    assert r.url == "http://e.com/s?a=1&a=2#top"
    assert r.body == b"" and "Content-Type" not in r.headers


@pytest.mark.parametrize("formdata", [{"page": 2}, {"page": [1, 2]}, {3: "x"}])
def test_values_that_are_not_text_are_refused_naming_the_field(formdata: Any) -> None:
    with pytest.raises(TypeError, match="values must be str or bytes"):
        FormRequest("http://e.com/", formdata=formdata)


def test_empty_formdata_is_a_plain_request() -> None:
    r = FormRequest("http://e.com/", formdata={})
    assert (r.method, r.body, r.has_headers) == ("GET", b"", False)


def test_an_explicit_content_type_is_kept() -> None:
    r = FormRequest("http://e.com/", formdata={"a": "1"}, headers={"Content-Type": "x/y"})
    assert r.headers["Content-Type"] == b"x/y"


# -- from_response: which form -----------------------------------------------------------
TWO_FORMS = """
<form name="first" id="f1" action="one.php" method="POST">
  <input type="hidden" name="one" value="1"></form>
<form name="second" id="f2" action="two.php" method="POST">
  <input type="hidden" name="two" value="2"></form>
"""


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "one"),
        ({"formnumber": 1}, "two"),
        ({"formnumber": -1}, "two"),
        ({"formname": "second"}, "two"),
        ({"formid": "f2"}, "two"),
        ({"formname": "nope", "formid": "f2"}, "two"),
        ({"formxpath": "//form[@action='two.php']"}, "two"),
        ({"formxpath": "//input[@name='two']"}, "two"),  # the form around the match
        ({"formcss": "input[name=two]"}, "two"),
    ],
)
def test_the_form_is_chosen_by_name_id_xpath_css_or_number(
    kwargs: dict[str, Any], field: str
) -> None:
    r = FormRequest.from_response(page(TWO_FORMS), **kwargs)
    assert list(fields(r)) == [field]


def test_no_form_at_all_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"No <form> element found in <200 http://example\.com"):
        FormRequest.from_response(page("<html><body>none</body></html>"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"formname": "third"}, "named 'third'"),
        ({"formid": "f9"}, "with id 'f9'"),
        ({"formxpath": "//div"}, "with '//div'"),
        ({"formcss": "p.none"}, "with CSS 'p.none'"),
        ({"formname": "third", "formid": "f9"}, "named 'third' or with id 'f9'"),
    ],
)
def test_a_form_asked_for_and_not_there_is_refused_not_replaced_by_the_first(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=f"No <form> element found {message}"):
        FormRequest.from_response(page(TWO_FORMS), **kwargs)


def test_an_xpath_outside_any_form_is_refused() -> None:
    html = "<div><p id='x'>out</p></div>" + TWO_FORMS
    with pytest.raises(ValueError, match="No <form> element found with"):
        FormRequest.from_response(page(html), formxpath="//p[@id='x']")


def test_a_form_number_out_of_range_is_a_value_error_and_scrapys_index_error() -> None:
    with pytest.raises(ValueError, match="Form number 2 not found"):
        FormRequest.from_response(page(TWO_FORMS), formnumber=2)
    with pytest.raises(IndexError):
        FormRequest.from_response(page(TWO_FORMS), formnumber=2)


def test_a_form_name_with_quotes_is_matched_literally() -> None:
    html = """<form name='a"b'><input name="q" value="1"></form>"""
    assert fields(FormRequest.from_response(page(html), formname='a"b')) == {"q": ["1"]}


def test_form_in_an_xml_response_is_read_as_html() -> None:
    xml = XmlResponse(
        "http://e.com/", body=b'<r><form action="/x"><input name="a" value="1"/></form></r>'
    )
    r = FormRequest.from_response(xml)
    assert r.url == "http://e.com/x?a=1"


# -- from_response: what is sent -----------------------------------------------------------
def test_inputs_as_a_browser_sends_them() -> None:
    html = """<form action="go" method="post">
      <input type="hidden" name="csrf" value="t0k">
      <input type="text" name="t1" value="v1"><input type="text" name="t2">
      <input name="t3" value="v3">
      <input type="text" value="no name">
      <input type="checkbox" name="c1" value="c1v" checked>
      <input type="checkbox" name="c2" value="no">
      <input type="checkbox" name="c3" checked>
      <input type="radio" name="r" value="r1"><input type="radio" name="r" value="r2" checked>
      <input type="text" name="off" value="x" disabled>
      <fieldset disabled><input name="in_off" value="y"></fieldset>
      <input type="reset" name="reset" value="r">
      <input type="file" name="f">
      <textarea name="ta">some text</textarea><textarea name="ta2"></textarea>
      <div><fieldset><input name="deep" value="d"></fieldset></div>
    </form>"""
    r = FormRequest.from_response(page(html), dont_click=True)
    assert r.method == "POST" and r.headers.text("Content-Type") == FORM_CT
    assert sent(r) == [
        ("csrf", "t0k"),
        ("t1", "v1"),
        ("t2", ""),
        ("t3", "v3"),
        ("c1", "c1v"),
        ("c3", "on"),
        ("r", "r2"),
        ("f", ""),
        ("ta", "some text"),
        ("ta2", ""),
        ("deep", "d"),
    ]


def test_selects_send_the_selected_option_or_the_first() -> None:
    html = """<form>
      <select name="s1"><option value="a">A</option><option value="b" selected>B</option></select>
      <select name="s2"><option value="a">A</option><option value="b">B</option></select>
      <select name="s3"><option>  Text   value </option></select>
      <select name="m1" multiple><option value="a" selected>A</option><option value="b">B</option>
        <option value="c" selected>C</option></select>
      <select name="m2" multiple><option value="a">A</option></select>
      <select name="empty"></select>
      <select><option value="x" selected>no name</option></select>
      <select name="s4"><option value="a" disabled>A</option><option value="b">B</option></select>
      <select name="s5"><optgroup><option value="g" selected>G</option></optgroup></select>
    </form>"""
    assert sent(FormRequest.from_response(page(html))) == [
        ("s1", "b"),
        ("s2", "a"),
        ("s3", "Text value"),
        ("m1", "a"),
        ("m1", "c"),
        ("s4", "b"),
        ("s5", "g"),
    ]


def test_formdata_overrides_adds_and_none_removes() -> None:
    html = """<form method="post"><input type="hidden" name="a" value="1">
      <input type="hidden" name="b" value="2"><input type="hidden" name="b" value="3">
      <input type="hidden" name="gone" value="x"></form>"""
    r = FormRequest.from_response(page(html), formdata={"b": ["4", "5"], "gone": None, "new": "n"})
    assert sent(r) == [("a", "1"), ("b", "4"), ("b", "5"), ("new", "n")]


def test_formdata_pairs_may_repeat_a_name() -> None:
    html = '<form method="post"><input name="two" value="old"></form>'
    r = FormRequest.from_response(page(html), formdata=(("two", "x"), ("two", "y")))
    assert sent(r) == [("two", "x"), ("two", "y")]


@pytest.mark.parametrize("bad", [123, ("a",)])
def test_formdata_that_is_not_pairs_is_a_clear_error(bad: Any) -> None:
    with pytest.raises(ValueError, match="formdata should be a dict or an iterable"):
        FormRequest.from_response(page("<form></form>"), formdata=bad)


# -- from_response: the button clicked ---------------------------------------------------------
BUTTONS = """<form action="get.php">
  <input type="hidden" name="h" value="1">
  <input type="SuBmIt" name="b1" value="first">
  <input type="image" name="img" value="picture" src="x.png">
  <button name="b3" value="third">Three</button>
  <button type="button" name="plain" value="no">not a submit</button>
  <input type="submit" name="b4" value="fourth" disabled>
</form>"""


def test_the_first_submit_button_is_clicked() -> None:
    assert sent(FormRequest.from_response(page(BUTTONS))) == [("h", "1"), ("b1", "first")]


def test_dont_click_sends_no_button() -> None:
    assert sent(FormRequest.from_response(page(BUTTONS), dont_click=True)) == [("h", "1")]


@pytest.mark.parametrize(
    ("clickdata", "button"),
    [
        ({"name": "b3"}, ("b3", "third")),
        ({"value": "picture"}, ("img", "picture")),
        ({"nr": 2}, ("b3", "third")),
        ({"nr": 1, "type": "image"}, ("img", "picture")),
    ],
)
def test_clickdata_picks_the_button(clickdata: dict[str, Any], button: tuple[str, str]) -> None:
    assert sent(FormRequest.from_response(page(BUTTONS), clickdata=clickdata))[-1] == button


@pytest.mark.parametrize(
    ("clickdata", "message"),
    [
        ({"name": "plain"}, "No clickable element matching"),  # type=button submits nothing
        ({"name": "b4"}, "No clickable element matching"),  # disabled
        ({"nr": 9}, "No clickable element matching"),
        ({"nr": 0, "name": "b3"}, "No clickable element matching"),
        ({"type": "submit"}, "Multiple elements found"),
    ],
)
def test_clickdata_matching_no_single_button_is_refused(
    clickdata: dict[str, Any], message: str
) -> None:
    html = BUTTONS.replace("SuBmIt", "submit").replace("<button name", '<button type="submit" name')
    with pytest.raises(ValueError, match=message):
        FormRequest.from_response(page(html), clickdata=clickdata)


def test_a_button_without_a_value_sends_an_empty_one_and_without_a_name_nothing() -> None:
    html = '<form><input type="submit" name="go"><button>anonymous</button></form>'
    assert sent(FormRequest.from_response(page(html))) == [("go", "")]
    assert sent(FormRequest.from_response(page(html), clickdata={"nr": 1})) == []


def test_formdata_overrides_the_clicked_button() -> None:
    html = '<form><input type="submit" name="go" value="one"></form>'
    r = FormRequest.from_response(page(html), formdata={"go": "two"})
    assert sent(r) == [("go", "two")]


# -- from_response: where and how -------------------------------------------------------------
def test_action_is_resolved_against_the_page_and_base_href() -> None:
    html = '<form action=" sub/post.php\n"></form>'
    assert FormRequest.from_response(page(html)).url == "http://example.com/dir/sub/post.php"
    based = '<html><head><base href=" http://other.com/b/"></head><body>' + html + "</body></html>"
    assert FormRequest.from_response(page(based)).url == "http://other.com/b/sub/post.php"


def test_a_form_without_action_submits_to_the_page_itself() -> None:
    r = FormRequest.from_response(page('<form><input name="a" value="1"></form>'))
    assert r.url == "http://example.com/dir/page.html?a=1"


def test_url_and_method_arguments_override_the_form() -> None:
    html = '<form action="/app"><input name="a" value="1"></form>'
    assert FormRequest.from_response(page(html), url="/else").url == "http://example.com/else?a=1"
    r = FormRequest.from_response(page(html), method="post")
    assert (r.method, r.body) == ("POST", b"a=1")


@pytest.mark.parametrize(
    ("method", "expected"), [("post", "POST"), ("GET", "GET"), ("dialog", "GET"), ("", "GET")]
)
def test_form_method_as_browsers_read_it(method: str, expected: str) -> None:
    r = FormRequest.from_response(page(f'<form method="{method}"><input name="a"></form>'))
    assert r.method == expected


def test_non_ascii_names_and_values_in_the_page_encoding() -> None:
    html = '<form method="post"><input type="hidden" name="prix £" value="µ 1"></form>'
    for encoding in ("utf-8", "latin-1"):
        r = FormRequest.from_response(page(html.encode(encoding), encoding=encoding))
        assert r.encoding == page(b"", encoding=encoding).encoding
        assert sent(r, encoding) == [("prix £", "µ 1")]


def test_request_arguments_pass_through() -> None:
    def cb(response: Response) -> None:
        pass

    r = FormRequest.from_response(
        page('<form method="post"><input name="a" value="1"></form>'),
        callback=cb,
        meta={"k": 1},
        cb_kwargs={"x": 2},
        headers={"X-Extra": "y"},
        priority=4,
        dont_filter=True,
    )
    assert (r.callback, r.meta, r.cb_kwargs, r.priority, r.dont_filter) == (
        cb,
        {"k": 1},
        {"x": 2},
        4,
        True,
    )
    assert r.headers["X-Extra"] == b"y" and r.headers.text("Content-Type") == FORM_CT


def test_malformed_html5_still_finds_the_form() -> None:
    html = '<!DOCTYPE html><body></html><form><input type="text" name="foo" value="xxx"></form>'
    r = FormRequest.from_response(page(html), formdata={"bar": "buz"})
    assert sent(r) == [("foo", "xxx"), ("bar", "buz")]


def test_from_response_on_a_subclass_gives_the_subclass() -> None:
    class Mine(FormRequest):
        pass

    assert type(Mine.from_response(page("<form></form>"))) is Mine
