"""FormRequest: a request carrying form data, or built from a ``<form>`` of a page.

``from_response`` submits a form the way a browser would after a click on its first
submit button: the fields a browser sends (hidden ones such as CSRF tokens and
ASP.NET's ``__VIEWSTATE`` included; checkboxes and radios only when checked; a select's
selected options, or its first one; nothing disabled), to the form's action, with its
method. Scrapy's arguments and behaviour, with one difference: a ``formname``,
``formid``, ``formxpath`` or ``formcss`` that matches no form is an error, where Scrapy
quietly submits the first form instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Self
from urllib.parse import urlencode, urljoin, urlsplit, urlunsplit

from parsel import Selector
from parsel.csstranslator import HTMLTranslator
from w3lib.html import strip_html5_whitespace

from skitter.http._request import Request

if TYPE_CHECKING:
    from skitter.http._response import Response

__all__ = ["FormRequest"]

# An lxml.html element (parsel's root): lxml ships no type information.
HtmlElement = Any
FormValue = str | bytes | Iterable[str | bytes]
FormData = Mapping[str, FormValue | None] | Iterable[tuple[str, FormValue | None]]

_NOT_FIELDS = frozenset({"submit", "image", "reset"})  # sent only as the clicked button
_CHECKABLE = frozenset({"checkbox", "radio"})
_SUBMITTERS = frozenset({"submit", "image"})


class FormRequest(Request):
    """A Request whose ``formdata`` (a dict, or (name, value) pairs; a value may be a
    list) is sent URL-encoded: as the body, with an ``application/x-www-form-urlencoded``
    Content-Type, for POST (the method when ``formdata`` is given and ``method`` is
    not); else as the URL's query string, replacing the one it had."""

    __slots__ = ()

    valid_form_methods: ClassVar[list[str]] = ["GET", "POST"]

    def __init__(self, *args: Any, formdata: FormData | None = None, **kwargs: Any) -> None:
        if formdata and kwargs.get("method") is None:
            kwargs["method"] = "POST"
        super().__init__(*args, **kwargs)
        if not formdata:
            return
        pairs = formdata.items() if isinstance(formdata, Mapping) else formdata
        query = _urlencode(pairs, self.encoding)
        if self.method == "POST":
            self.headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
            self._body = query.encode("ascii")
        else:
            self._url = urlunsplit(urlsplit(self._url)._replace(query=query))

    @classmethod
    def from_response(
        cls,
        response: Response,
        formname: str | None = None,
        formid: str | None = None,
        formnumber: int = 0,
        formdata: FormData | None = None,
        clickdata: Mapping[str, str | int] | None = None,
        dont_click: bool = False,
        formxpath: str | None = None,
        formcss: str | None = None,
        **kwargs: Any,
    ) -> Self:
        """The request that submits a form of ``response``.

        The form is the one named ``formname``, else the one with id ``formid``, else
        the one containing the first match of ``formxpath`` (or ``formcss``); when none
        of these is given, form number ``formnumber`` (0: the first). ``formdata``
        overrides the form's fields of the same names (None removes a field).
        ``clickdata`` picks the submit button sent along (attributes it must have, or
        ``nr``: its index among the buttons); ``dont_click`` sends none. ``url`` and
        ``method`` override the form's; other arguments go to the request.
        """
        kwargs.setdefault("encoding", response.encoding)
        form = _find_form(response, formname, formid, formnumber, formxpath, formcss)
        pairs = _form_data(form, formdata, clickdata, dont_click)
        url = kwargs.pop("url", None)
        if url is None:
            action = strip_html5_whitespace(form.get("action") or "")
            # An empty action submits to the document itself, not to <base href>.
            url = urljoin(response.base_url, action) if action else response.url
        else:
            url = urljoin(response.base_url, url)
        method = kwargs.pop("method", None)
        if method is None:
            method = (form.get("method") or "GET").upper()
            if method not in cls.valid_form_methods:
                method = "GET"  # what browsers do with a method they do not know
        return cls(url=url, method=method, formdata=pairs, **kwargs)


class _FormNotFound(ValueError, IndexError):
    """No form with that number: a ValueError like every other "no such form", and
    the IndexError Scrapy raises for it."""


def _urlencode(pairs: Iterable[tuple[str, FormValue | None]], encoding: str) -> str:
    encoded: list[tuple[bytes, bytes]] = []
    for key, value in pairs:
        name = _bytes(key, encoding, key)
        if isinstance(value, str | bytes):
            encoded.append((name, _bytes(value, encoding, key)))
        elif isinstance(value, Iterable):
            encoded.extend((name, _bytes(v, encoding, key)) for v in value)
        elif value is not None:
            _bytes(value, encoding, key)  # raises, naming the field
    return urlencode(encoded)


def _bytes(value: object, encoding: str, key: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode(encoding)
    raise TypeError(
        f"formdata {key!r}: values must be str or bytes (or lists of them), "
        f"got {type(value).__name__} {value!r}"
    )


def _find_form(
    response: Response,
    formname: str | None,
    formid: str | None,
    formnumber: int,
    formxpath: str | None,
    formcss: str | None,
) -> HtmlElement:
    selector = response.selector
    if selector.type != "html":  # a form in an XML or JSON response is still HTML
        selector = Selector(text=response.text, type="html", base_url=response.url)
    root = selector.root
    forms = root.xpath("//form")
    if not forms:
        raise ValueError(f"No <form> element found in {response!r}")
    if formname is not None:
        found = root.xpath("//form[@name=$name]", name=formname)
        if found:
            return found[0]
    if formid is not None:
        found = root.xpath("//form[@id=$id]", id=formid)
        if found:
            return found[0]
    inside = formxpath if formcss is None else HTMLTranslator().css_to_xpath(formcss)
    if inside is not None:
        for node in root.xpath(inside)[:1]:
            while node is not None and getattr(node, "tag", None) != "form":
                node = node.getparent()
            if node is not None:
                return node
    wanted = [
        f"{what} {value!r}"
        for what, value in (
            ("named", formname),
            ("with id", formid),
            ("with", formxpath),
            ("with CSS", formcss),
        )
        if value is not None
    ]
    if wanted:
        raise ValueError(f"No <form> element found {' or '.join(wanted)} in {response!r}")
    if not -len(forms) <= formnumber < len(forms):
        raise _FormNotFound(
            f"Form number {formnumber} not found in {response!r} (it has {len(forms)})"
        )
    return forms[formnumber]


def _form_data(
    form: HtmlElement,
    formdata: FormData | None,
    clickdata: Mapping[str, str | int] | None,
    dont_click: bool,
) -> list[tuple[str, FormValue]]:
    """The (name, value) pairs a browser would submit, ``formdata`` applied."""
    try:
        given = list(formdata.items() if isinstance(formdata, Mapping) else formdata or ())
        overridden = dict(given).keys()
    except (TypeError, ValueError):
        raise ValueError(
            f"formdata should be a dict or an iterable of (name, value) tuples, got {formdata!r}"
        ) from None
    pairs: list[tuple[str, FormValue]] = [
        (name, value) for name, value in _fields(form) if name not in overridden
    ]
    if not dont_click:
        clicked = _clicked(form, clickdata)
        if clicked is not None and clicked[0] not in overridden:
            pairs.append(clicked)
    pairs.extend((name, value) for name, value in given if value is not None)
    return pairs


def _fields(form: HtmlElement) -> Iterator[tuple[str, str]]:
    for element in form.iter("input", "select", "textarea"):
        name = element.get("name")
        if not name or _disabled(element):
            continue
        tag = element.tag
        if tag == "input":
            kind = (element.get("type") or "text").strip().lower()
            if kind in _NOT_FIELDS:
                continue
            if kind in _CHECKABLE:
                if element.get("checked") is not None:
                    yield name, element.get("value") or "on"
                continue
            yield name, element.get("value") or ""
        elif tag == "select":
            for value in _selected(element):
                yield name, value
        else:
            yield name, element.text or ""


def _selected(select: HtmlElement) -> list[str]:
    """A select's submitted values: its selected options; for a single select with none
    selected, its first option, as browsers show and send it."""
    options = [o for o in select.iter("option") if o.get("disabled") is None]
    chosen = [o for o in options if o.get("selected") is not None]
    if select.get("multiple") is None:
        chosen = chosen[-1:] or options[:1]  # the last selected wins, as in browsers
    return [_option_value(o) for o in chosen]


def _option_value(option: HtmlElement) -> str:
    value = option.get("value")
    return value if value is not None else " ".join(option.text_content().split())


def _disabled(element: HtmlElement) -> bool:
    if element.get("disabled") is not None:
        return True
    return any(
        fieldset.get("disabled") is not None for fieldset in element.iterancestors("fieldset")
    )


def _clicked(
    form: HtmlElement, clickdata: Mapping[str, str | int] | None
) -> tuple[str, str] | None:
    """The (name, value) of the button clicked: the first submit button, or the one
    ``clickdata`` describes; None when it has no name (nothing is sent for it)."""
    buttons = [b for b in form.iter("input", "button") if _submits(b) and not _disabled(b)]
    if clickdata is None:
        button = buttons[0] if buttons else None
    else:
        button = _matching_button(buttons, clickdata)
    if button is None or button.get("name") is None:
        return None
    return button.get("name"), button.get("value") or ""


def _submits(element: HtmlElement) -> bool:
    kind = (element.get("type") or "").strip().lower()
    if element.tag == "button":
        return kind in ("", "submit")
    return kind in _SUBMITTERS


def _matching_button(buttons: list[HtmlElement], clickdata: Mapping[str, str | int]) -> HtmlElement:
    attributes = {k: v for k, v in clickdata.items() if k != "nr"}
    nr = clickdata.get("nr")
    if nr is not None:
        if not isinstance(nr, int) or not 0 <= nr < len(buttons):
            raise ValueError(f"No clickable element matching clickdata: {dict(clickdata)!r}")
        buttons = [buttons[nr]]
    found = [b for b in buttons if all(b.get(k) == str(v) for k, v in attributes.items())]
    if not found:
        raise ValueError(f"No clickable element matching clickdata: {dict(clickdata)!r}")
    if len(found) > 1:
        raise ValueError(
            f"Multiple elements found ({found!r}) matching the criteria in clickdata: "
            f"{dict(clickdata)!r}"
        )
    return found[0]
