"""A curl command line as Request arguments
(``Request.from_curl``), for requests copied from a browser's developer tools."""

from __future__ import annotations

import argparse
import shlex
import warnings
from collections.abc import Iterable
from http.cookies import SimpleCookie
from typing import TYPE_CHECKING, Any

from w3lib.http import basic_auth_header

from skitter.http._url import add_http_if_no_scheme

if TYPE_CHECKING:
    from skitter.http._request import Request

__all__ = ["curl_to_request_kwargs", "request_to_curl"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ValueError(message)  # argparse would exit the process


def _parser() -> _Parser:
    parser = _Parser(prog="curl", add_help=False)
    parser.add_argument("url")
    parser.add_argument("-H", "--header", dest="headers", action="append", default=[])
    parser.add_argument("-X", "--request", dest="method")
    parser.add_argument("-b", "--cookie", dest="cookies", action="append", default=[])
    parser.add_argument(
        "-d", "--data", "--data-raw", "--data-binary", "--data-ascii",
        dest="data", action="append", default=[],
    )  # fmt: skip
    parser.add_argument("-u", "--user", dest="auth")
    # Options that change nothing about the request a crawler sends.
    for flag in ("--compressed", "-s", "--silent", "-v", "--verbose", "-k", "--insecure",
                 "-L", "--location", "-i", "--include"):  # fmt: skip
        parser.add_argument(flag, action="store_true", dest=f"_{flag.lstrip('-')}")
    return parser


def _cookies(cookie_header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    jar.load(cookie_header)
    return {name: morsel.value for name, morsel in jar.items()}


def curl_to_request_kwargs(
    curl_command: str, ignore_unknown_options: bool = True
) -> dict[str, Any]:
    """The Request arguments (``method``, ``url``, and ``headers``, ``cookies``, ``body``
    when given) of a ``curl ...`` command. Options skitter does not know are warned
    about (a UserWarning), or refused with ``ignore_unknown_options=False``."""
    argv = shlex.split(curl_command)
    if not argv or argv[0] != "curl":
        raise ValueError('A curl command must start with "curl"')
    args, unknown = _parser().parse_known_args(argv[1:])
    if unknown:
        message = "Unrecognized options: " + ", ".join(unknown)
        if not ignore_unknown_options:
            raise ValueError(message)
        warnings.warn(message, UserWarning, stacklevel=2)
    result: dict[str, Any] = {"method": "GET", "url": add_http_if_no_scheme(args.url)}
    headers: list[tuple[str, str | bytes]] = []
    cookies: dict[str, str] = {}
    for header in args.headers:
        name, _, value = header.partition(":")
        name, value = name.strip(), value.strip()
        if name.lower() == "cookie":
            cookies.update(_cookies(value))
        else:
            headers.append((name, value))
    for cookie in args.cookies:
        if "=" in cookie:  # otherwise a cookie file's name, which curl would read
            cookies.update(_cookies(cookie))
    if args.auth:
        user, _, password = args.auth.partition(":")
        headers.append(("Authorization", basic_auth_header(user, password)))
    if args.data:
        # bash's $'...' quoting leaves its "$" in front of each value
        result["body"] = "&".join(d[1:] if d.startswith("$") else d for d in args.data)
        result["method"] = "POST"
    if args.method:
        result["method"] = args.method
    if headers:
        result["headers"] = headers
    if cookies:
        result["cookies"] = cookies
    return result


def _quoted(text: str) -> str:
    """``text`` in single quotes for a POSIX shell."""
    return "'" + text.replace("'", "'\\''") + "'"


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cookie_line(cookies: Any) -> str:
    pairs: Iterable[tuple[Any, Any]] = (
        cookies.items() if isinstance(cookies, dict) else ((c["name"], c["value"]) for c in cookies)
    )
    return "; ".join(f"{_str(name)}={_str(value)}" for name, value in pairs)


def request_to_curl(request: Request) -> str:
    """A ``curl`` command that sends ``request`` (method, URL, body, headers, cookies),
    to replay it by hand. It carries the request's credentials as they are: it is made
    for the one who asks, never written to a log by skitter."""
    parts = ["curl", "-X", request.method, request.url]
    if request.body:
        parts += ["--data-raw", _quoted(request.body.decode(request.encoding, "replace"))]
    if request.has_headers:
        for name, value in request.headers.text_items():
            parts += ["-H", _quoted(f"{name}: {value}")]
    if request.cookies:
        parts += ["--cookie", _quoted(_cookie_line(request.cookies))]
    return " ".join(parts)
