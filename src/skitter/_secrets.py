"""Secrets a user hands skitter, masked wherever skitter prints or shows them.

A Redis URL carries its password (``redis://user:pass@host:6379/0``), a proxy URL its
credentials, a feed URI may, and settings such as ``AWS_SECRET_ACCESS_KEY`` are secrets
whole. Logs, the console, the dashboard, ``repr()`` and exception messages show them
masked, always with these helpers, so that there is one rule for what counts as a
secret:

- the password of a URL's userinfo (``user:***@``), or the whole userinfo when it has no
  colon (``***@``: a proxy or API token passed as the user name);
- the value of a query parameter named like a secret (``?password=***``, ``token``,
  ``secret``, ``key``, ``auth``, ``signature``...);
- the value of a setting named like one (``AWS_*``, ``*_PASSWORD``, ``*_TOKEN``,
  ``*_SECRET*``, ``*_KEY``...);
- the value of an HTTP header that carries credentials or a session (``Cookie``,
  ``Set-Cookie``, ``Authorization``, ``Proxy-Authorization``, or named like a secret:
  ``X-Api-Key``, ``X-Auth-Token``...), as ``skitter fetch --headers`` prints them.

``mask_text`` applies the URL rules to every URL inside free text, for messages that
come from libraries (aiohttp's proxy errors quote the proxy URL with its password).
Everything here runs only when something is printed, never per request.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

__all__ = ["MASK", "is_secret_name", "mask_header", "mask_setting", "mask_text", "mask_url"]

MASK = "***"

#: Parts of a setting name (split at ``_``) that make its value a secret.
_SECRET_PARTS = frozenset(
    {"PASSWORD", "PASSWD", "PASS", "PWD", "SECRET", "TOKEN", "KEY", "APIKEY", "CREDENTIALS"}
)
_SECRET_PARAM = re.compile(
    r"pass|pwd|secret|token|key|auth|credential|signature|^sig$", re.IGNORECASE
)
#: ``scheme://userinfo@`` anywhere in a text: up to the last ``@`` before the path, as
#: ``urlsplit`` reads it (a password with an unescaped ``@`` stays masked whole).
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/\s'\"<>]+)@")
#: ``?name=value`` or ``&name=value`` anywhere in a text.
_PARAM = re.compile(r"(?P<lead>[?&;])(?P<name>[A-Za-z0-9_.\-]+)=(?P<value>[^&;#\s'\"<>]*)")


def is_secret_name(name: str) -> bool:
    """Whether a setting (or environment variable) named ``name`` holds a secret."""
    upper = name.upper()
    if upper.startswith("AWS_"):
        return True
    return any(part in _SECRET_PARTS for part in upper.split("_"))


_SECRET_HEADERS = frozenset({"cookie", "set-cookie", "authorization", "proxy-authorization"})


def mask_header(name: str, value: str) -> str:
    """How an HTTP header's value may be shown: ``***`` for credentials and cookies."""
    if name.lower() in _SECRET_HEADERS or _SECRET_PARAM.search(name):
        return MASK
    return mask_text(value)


def _masked_userinfo(userinfo: str) -> str:
    user, colon, _password = userinfo.partition(":")
    return f"{user}:{MASK}" if colon else MASK


def _masked_param(match: re.Match[str]) -> str:
    if match["value"] and _SECRET_PARAM.search(match["name"]):
        return f"{match['lead']}{match['name']}={MASK}"
    return match[0]


def mask_url(url: str, *, query: bool = True) -> str:
    """``url`` with its password (or token user name) and secret query values masked:
    ``redis://user:***@host:6379/0``. A URL without secrets comes back unchanged.
    ``query=False`` leaves the query alone (a crawled page's URL, whose ``?key=`` is the
    site's, not the user's)."""
    if not isinstance(url, str):
        url = str(url)
    if "@" not in url and (not query or "=" not in url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL we can take apart: mask what looks like one
        return mask_text(url)
    netloc = parts.netloc
    userinfo, at, hostport = netloc.rpartition("@")
    if at:
        netloc = f"{_masked_userinfo(userinfo)}@{hostport}"
    masked = parts.query
    if query and masked:
        masked = _PARAM.sub(_masked_param, "?" + masked)[1:]
    if netloc == parts.netloc and masked == parts.query:
        return url
    return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, masked, parts.fragment))


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
