"""The run report: the monitors' results, the stats, field coverage and sample invalid
items, as JSON (for programs) and HTML (for people), written beside the feed.

The HTML is one self-contained page: its only style is the ``<style>`` block below, so
the dashboard can serve it under a Content-Security-Policy that allows that block's
hash and nothing else (``STYLE_HASH``). Everything crawled (item values, URLs, error
messages) is escaped; a secret a message may quote is masked.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from skitter._secrets import mask_text

__all__ = ["STYLE_HASH", "render_html", "report_paths", "write_report"]

_STYLE = (
    "body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:2em}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:left;vertical-align:top}"
    ".passed{color:#176f2c}.failed,.error{color:#b00020;font-weight:bold}"
    ".warned{color:#9a6700;font-weight:bold}.skipped{color:#666}"
    "pre{white-space:pre-wrap;margin:0}"
)
#: The CSP source of the page's one style block.
STYLE_HASH = "'sha256-" + base64.b64encode(hashlib.sha256(_STYLE.encode()).digest()).decode() + "'"


def report_paths(folder: Path, spider: str) -> tuple[Path, Path]:
    """The JSON and HTML report files of ``spider`` in ``folder``."""
    return folder / f"{spider}.report.json", folder / f"{spider}.report.html"


def write_report(report: Mapping[str, Any], folder: Path, spider: str) -> tuple[Path, Path]:
    """Write both forms (each to a temporary name first, so a reader never sees half)."""
    folder.mkdir(parents=True, exist_ok=True)
    as_json, as_html = report_paths(folder, spider)
    body = orjson.dumps(report, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str)
    for path, data in ((as_json, body), (as_html, render_html(report).encode())):
        partial = path.with_suffix(path.suffix + ".part")
        partial.write_bytes(data)
        partial.replace(path)
    return as_json, as_html


def _e(value: Any) -> str:
    return html.escape(mask_text(str(value)))


def _rows(header: tuple[str, ...], rows: list[tuple[Any, ...]], classes: int = -1) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            css = f' class="{_e(cell)}"' if i == classes else ""
            cells.append(f"<td{css}>{_e(cell)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def render_html(report: Mapping[str, Any]) -> str:
    """The report as one HTML page."""
    status = str(report.get("status", ""))
    parts = [
        f'<h1>{_e(report.get("spider"))}: <span class="{_e(status)}">{_e(status)}</span></h1>',
        f"<p>finish reason {_e(report.get('finish_reason'))}, "
        f"{_e(report.get('items', 0))} items, report made "
        f"{'at the end' if report.get('final') else 'during the crawl'}</p>",
        "<h2>Monitors</h2>",
        _rows(
            ("monitor", "level", "status", "message"),
            [(m["name"], m["level"], m["status"], m["message"]) for m in report["monitors"]],
            classes=2,
        )
        if report.get("monitors")
        else "<p>No monitor ran.</p>",
    ]
    coverage = report.get("coverage") or {}
    if coverage:
        parts.append("<h2>Field coverage</h2>")
        rows = [
            (kind, name, f"{share * 100:.1f} %")
            for kind, fields in coverage.items()
            for name, share in fields.items()
        ]
        parts.append(_rows(("item class", "field", "filled"), rows))
    validation = report.get("validation") or {}
    if validation:
        parts.append("<h2>Item validation</h2>")
        counts = [(k, v) for k, v in validation.items() if k != "samples"]
        parts.append(_rows(("count", "value"), counts))
        samples = validation.get("samples") or []
        if samples:
            parts.append("<h2>Sample invalid items</h2>")
            rows = [
                (
                    s["type"],
                    ", ".join(f"{e['field']}: {e['rule']}" for e in s["errors"]),
                    orjson.dumps(s["item"], default=str).decode(),
                )
                for s in samples
            ]
            parts.append(_rows(("type", "errors", "item"), rows))
    alerts = report.get("alerts") or []
    if alerts:
        parts.append("<h2>Alerts</h2>")
        rows = [
            (a["channel"], a["target"], "sent" if a["delivered"] else a["error"]) for a in alerts
        ]
        parts.append(_rows(("channel", "to", "result"), rows))
    stats = report.get("stats") or {}
    parts.append("<h2>Stats</h2>")
    parts.append(_rows(("stat", "value"), sorted(stats.items())))
    title = _e(f"{report.get('spider')} run report")
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title>'
        f"<style>{_STYLE}</style></head><body>{''.join(parts)}</body></html>"
    )
