"""The HTML of the service's pages, built from escaped parts.

Every value that came from a crawl, a user or a spider (URLs, item fields, log lines,
arguments) goes through ``esc`` exactly once, here; the pages add no script at all, and
their policy (``default-src 'none'``) would not run one. Styles come from
``/static/server.css``.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Iterable, Sequence
from urllib.parse import urlencode

import orjson

__all__ = ["duration", "esc", "json_text", "link", "page", "qs", "table", "when"]

_NAV = (("/", "Runs"), ("/schedules", "Schedules"))


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def link(href: str, text: object, cls: str | None = None) -> str:
    attr = f' class="{esc(cls)}"' if cls else ""
    return f'<a href="{esc(href)}"{attr}>{esc(text)}</a>'


def qs(**params: object) -> str:
    """A query string of the parameters that are set (``?a=1&b=x``, or "")."""
    kept = {k: str(v) for k, v in params.items() if v not in (None, "")}
    return "?" + urlencode(kept) if kept else ""


def when(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(start: float | None, end: float | None) -> str:
    if start is None or end is None:
        return ""
    seconds = max(0, round(end - start))
    hours, rest = divmod(seconds, 3600)
    return (
        f"{hours}h {rest // 60:02d}m {rest % 60:02d}s"
        if hours
        else f"{rest // 60}m {rest % 60:02d}s"
    )


def json_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS).decode()


def table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, ident: str, empty: str = "nothing"
) -> str:
    """A table of cells that are already HTML (escape them first)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    if not body:
        body = f'<tr class="empty"><td colspan="{len(headers)}">{esc(empty)}</td></tr>'
    return f'<table id="{esc(ident)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def page(title: str, body: str, *, current: str = "/") -> str:
    nav = " ".join(
        f'<a href="{href}"{" class=current" if href == current else ""}>{label}</a>'
        for href, label in _NAV
    )
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{esc(title)} · skitter server</title>"
        '<link rel=stylesheet href="/static/server.css">'
        '<link rel=icon href="/static/favicon.svg" type="image/svg+xml"></head><body>'
        f"<header><strong>skitter server</strong><nav>{nav}</nav></header>"
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )
