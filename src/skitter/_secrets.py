"""Secrets a user hands skitter, masked wherever skitter prints or shows them.

A Redis URL carries its password (``redis://user:pass@host:6379/0``), a proxy URL its
credentials, a feed URI may, and settings such as ``AWS_SECRET_ACCESS_KEY`` are secrets
whole. Logs, the console, the dashboard, ``repr()`` and exception messages show them
masked, always with these helpers, so that there is one rule for what counts as a
secret:

- the password of a URL's userinfo (``user:***@``), or the whole userinfo when it has no
  colon (``***@``: a proxy or API token passed as the user name). The userinfo is
  everything from ``scheme://`` to the last ``@`` (``split_userinfo``): a secret with an
  unescaped ``/`` (half of all AWS secret keys) ends the authority early for
  ``urlsplit``, which would print the rest of it as a path; here it is masked whole;
- the value of a query parameter named like a secret (``?password=***``, ``token``,
  ``secret``, ``key``, ``auth``, ``signature``...);
- the value of a setting named like one (``AWS_*``, ``*_PASSWORD``, ``*_TOKEN``,
  ``*_SECRET*``, ``*_KEY``, ``*_CREDENTIALS``...);
- the value of an HTTP header that carries credentials or a session (``Cookie``,
  ``Set-Cookie``, ``Authorization``, ``Proxy-Authorization``, or named like a secret:
  ``X-Api-Key``, ``X-Auth-Token``...), as ``skitter fetch --headers`` prints them.

``mask_text`` applies the URL rules to every URL inside free text, for messages that
come from libraries (aiohttp's proxy errors quote the proxy URL with its password).
``authority_problem`` says why a URI a user configured (a feed, a media store, a Redis,
a proxy) cannot be read the same way by the library that uses it, without quoting it.
Everything here runs only when something is printed or configured, never per request.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "MASK",
    "authority_problem",
    "is_secret_header",
    "is_secret_name",
    "mask_endpoint",
    "mask_header",
    "mask_page_url",
    "mask_setting",
    "mask_text",
    "mask_url",
    "page_url_without_userinfo",
    "split_page_userinfo",
    "split_userinfo",
]

MASK = "***"

#: Parts of a setting name (split at ``_``) that make its value a secret.
_SECRET_PARTS = frozenset(
    {
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PWD",
        "SECRET",
        "TOKEN",
        "KEY",
        "APIKEY",
        "CREDENTIALS",
        "WEBHOOK",
        "WEBHOOKS",  # a webhook's URL is its credential (Slack's, Discord's)
    }
)
_SECRET_PARAM = re.compile(
    r"pass|pwd|secret|token|key|auth|credential|signature|^sig$", re.IGNORECASE
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
#: ``scheme://userinfo@`` anywhere in a text: the userinfo runs to the last ``@`` of the
#: URL (a run of characters that are not blanks or quotes, up to the next ``://``: URLs
#: separated by commas are each their own), as ``split_userinfo`` reads it.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>(?:(?!://)[^\s'\"<>])+)@"
)
#: ``?name=value`` or ``&name=value`` anywhere in a text.
_PARAM = re.compile(r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^&;#\s'\"<>]*)")
#: What ends an authority for RFC 3986 (and ``urlsplit``).
_AUTHORITY_END = re.compile(r"[/?#]")
#: ``host[:port]``: a name or address (IPv6 in brackets), an optional numeric port.
_HOSTPORT = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::[0-9]*)?")


def is_secret_name(name: str) -> bool:
    """Whether a setting (or environment variable) named ``name`` holds a secret."""
    upper = name.upper()
    if upper.startswith("AWS_"):
        return True
    return any(part in _SECRET_PARTS for part in upper.split("_"))


_SECRET_HEADERS = frozenset(
    {"cookie", "set-cookie", "set-cookie2", "authorization", "proxy-authorization"}
)


def is_secret_header(name: str) -> bool:
    """Whether an HTTP header named ``name`` carries credentials or a session."""
    return name.lower() in _SECRET_HEADERS or _SECRET_PARAM.search(name) is not None


def mask_header(name: str, value: str) -> str:
    """How an HTTP header's value may be shown: ``***`` for credentials and cookies."""
    return MASK if is_secret_header(name) else mask_text(value)


def split_userinfo(url: str) -> tuple[str, str | None, str]:
    """``url`` as (``scheme://``, its userinfo or None, the rest from the host on).

    The one rule for where credentials are: everything from ``scheme://`` to the last
    ``@`` of the URL. A password may hold ``/``, ``?``, ``#`` or ``@`` unescaped (users
    paste secrets as they are); reading it so keeps it whole, where ``urlsplit`` ends
    the authority at the first ``/`` and takes the rest of the secret for a path. An
    ``@`` that belongs to the path makes the userinfo too long, never too short: what
    is masked then is more than the password, never less. Without ``scheme://`` there
    is no userinfo: ``("", None, url)``."""
    match = _SCHEME.match(url)
    if match is None:
        return "", None, url
    head = match.end()
    at = url.rfind("@", head)
    if at < 0:
        return url[:head], None, url[head:]
    return url[:head], url[head:at], url[at + 1 :]


def _masked_userinfo(userinfo: str) -> str:
    """A URL's userinfo as it may be shown: ``user:***``, or ``***`` for a token."""
    user, colon, _password = userinfo.partition(":")
    return f"{user}:{MASK}" if colon else MASK


def _masked_param(match: re.Match[str]) -> str:
    if match["value"] and _SECRET_PARAM.search(match["name"]):
        return f"{match['lead']}{match['name']}={MASK}"
    return match[0]


def _masked_query(rest: str) -> str:
    path, mark, query = rest.partition("?")
    if not mark or "=" not in query:
        return rest
    return path + _PARAM.sub(_masked_param, mark + query)


def mask_url(url: str) -> str:
    """``url`` with its password (or token user name) and secret query values masked:
    ``redis://user:***@host:6379/0``. A URL without secrets comes back unchanged."""
    if not isinstance(url, str):
        url = str(url)
    if "@" not in url and "=" not in url:
        return url
    prefix, userinfo, rest = split_userinfo(url)
    rest = _masked_query(rest)
    if userinfo is None:
        return prefix + rest
    return f"{prefix}{_masked_userinfo(userinfo)}@{rest}"


def mask_endpoint(url: str) -> str:
    """A URL that is a credential whole as it may be shown: its scheme and host only
    (``https://hooks.slack.com/***``). A Slack or Discord webhook carries its secret in
    the path, which ``mask_url`` would show."""
    prefix, _userinfo, rest = split_userinfo(str(url))
    host = _AUTHORITY_END.split(rest, maxsplit=1)[0]
    return f"{prefix}{host}/{MASK}"


def split_page_userinfo(url: str) -> tuple[str, str | None, str]:
    """``split_userinfo`` for a crawled page's URL: its query is the site's, and an
    ``@`` after a valid ``host[:port]`` is its path's (``https://www.youtube.com/@x``),
    since that is how the HTTP client reads it. Any other ``@`` ends a userinfo."""
    prefix, userinfo, rest = split_userinfo(url)
    if userinfo is None:
        return prefix, None, url[len(prefix) :]
    authority = _AUTHORITY_END.split(url[len(prefix) :], maxsplit=1)[0]
    if "@" in authority:  # the client's own userinfo: up to the last @ before the path
        userinfo, _, host = authority.rpartition("@")
        return prefix, userinfo, host + url[len(prefix) + len(authority) :]
    if _HOSTPORT.fullmatch(authority):
        return prefix, None, url[len(prefix) :]
    return prefix, userinfo, rest


def mask_page_url(url: str) -> str:
    """A crawled page's URL as log lines and the web UI name it (``split_page_userinfo``)."""
    if "@" not in url:
        return url
    prefix, userinfo, rest = split_page_userinfo(url)
    if userinfo is None:
        return url
    return f"{prefix}{_masked_userinfo(userinfo)}@{rest}"


def page_url_without_userinfo(url: str) -> str:
    """A crawled page's URL without its user:password (``split_page_userinfo``), as what is
    stored of a response may hold it."""
    if "@" not in url:
        return url
    prefix, userinfo, rest = split_page_userinfo(url)
    return url if userinfo is None else prefix + rest


def mask_text(text: str) -> str:
    """``text`` with every URL in it masked as ``mask_url`` does (for messages that quote
    URLs: an exception from a library, a setting's repr)."""
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{_masked_userinfo(m['userinfo'])}@", text)
    if "=" in text:
        text = _PARAM.sub(_masked_param, text)
    return text


def mask_setting(name: str, value: Any) -> str:
    """How a setting's value may be shown in a message: ``'***'`` for a secret one,
    else its repr with any URL in it masked."""
    if is_secret_name(name):
        return repr(MASK)
    return mask_text(repr(value))


#: Why a configured URI's userinfo would be misread: the characters that end an
#: authority for ``urlsplit`` (and so for redis-py, ftplib's callers, botocore's).
_MISREAD = re.compile(r"[/?#]")
_ENCODE_HINT = (
    "percent-encode its user name and password ('/' as %2F, '?' as %3F, '#' as %23, "
    "'@' as %40): everything between :// and the last @ is read as user:password, so "
    "an @ in the path must be written %40 too"
)


def authority_problem(uri: str) -> str | None:
    """Why the authority of ``uri`` (a URI a user configured) is not
    ``[user[:password]@]host[:port]``, in words that never quote it; None when it is.

    ``split_userinfo``'s reading and the libraries' (``urlsplit``) must agree, or a
    secret with a ``/`` becomes a host name and a path, and goes over the network and
    into error messages as such. Where they cannot agree, the URI is refused with how to
    write it."""
    prefix, userinfo, rest = split_userinfo(uri)
    if not prefix:
        return None
    if userinfo is not None and _MISREAD.search(userinfo):
        return f"its user name or password is not written as a URI needs: {_ENCODE_HINT}"
    hostport = _AUTHORITY_END.split(rest, maxsplit=1)[0]
    if not _HOSTPORT.fullmatch(hostport):
        return (
            "what follows :// and the user:password@ is not host:port (a host name and a "
            f"port number); if a password holds a ':' or another special character, "
            f"{_ENCODE_HINT}"
        )
    return None
