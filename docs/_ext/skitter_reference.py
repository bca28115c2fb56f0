"""Reference pages built from the code at documentation build time, so they cannot drift.

Each directive reads the registry the program itself uses: ``skitter-settings`` every
known setting (``skitter.settings.SETTINGS``, grouped by the module that declares it),
``skitter-refused-settings`` the Scrapy and Spidermon settings refused at start,
``skitter-cli`` every command of the ``skitter`` argument parser, ``skitter-signals``
every signal with the keyword arguments the code sends it with (found by reading the
``send_catch_log`` calls in ``src/skitter``), ``skitter-stats`` every stats key the code
counts (its ``stats.inc``/``set``/``max`` calls, a computed part shown as ``{name}``).
``skitter-meta`` every ``Request.meta`` key the code reads or sets, with its meaning
(``META_MEANINGS``: a key without one, or a meaning without a key, fails the build). A
setting group or a signal the pages do not know fails the build, as a broken link does.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx
from sphinx.pycode import ModuleAnalyzer

#: The settings groups in reading order: module of ``skitter.settings``, and its title.
SETTING_GROUPS = (
    ("_engine", "Engine and the crawl as a whole"),
    ("_politeness", "Politeness: download slots, delays, AutoThrottle"),
    ("_scheduler", "Scheduling: rates, retries, recrawls, circuit breaker"),
    ("_cluster", "Distributed crawling on Redis"),
    ("_downloader", "Downloader and the built-in downloader middlewares"),
    ("_httpcache", "HTTP cache"),
    ("_spider", "Built-in spider middlewares"),
    ("_browser", "Browser rendering"),
    ("_components", "Components: middlewares, pipelines, extensions"),
    ("_feeds", "Feed exports"),
    ("_aws", "S3 credentials"),
    ("_items", "Items to Redis"),
    ("_output", "Logging, progress and stats"),
    ("_network", "TLS, DNS and HTTP authentication"),
    ("_sessions", "Sessions and proxies"),
    ("_media", "Files and images pipelines"),
    ("_sinks", "Sinks"),
    ("_monitors", "Monitors, validation and run reports"),
    ("_alerts", "Alerts"),
    ("_spidermon", "Spidermon's settings"),
)

_SRC = Path(__file__).resolve().parents[2] / "src" / "skitter"
_SENDERS = {"send_catch_log", "send_catch_log_async"}


def _table(headers: Sequence[str], rows: Iterable[Sequence[nodes.Node]]) -> nodes.table:
    table = nodes.table()
    group = nodes.tgroup(cols=len(headers))
    table += group
    for _ in headers:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    head += _row([nodes.Text(text) for text in headers])
    group += head
    body = nodes.tbody()
    for cells in rows:
        body += _row(cells)
    group += body
    return table


def _row(cells: Sequence[nodes.Node]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += nodes.paragraph("", "", cell)
        row += entry
    return row


def _section(title: str, ident: str) -> nodes.section:
    section = nodes.section(ids=[ident])
    section += nodes.title(title, title)
    return section


def _default(value: object) -> str:
    """A default as a reader would write it: sizes in KiB/MiB, containers as JSON."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int) and value >= 1024 and value % 1024 == 0:
        mib, kib = divmod(value, 1024 * 1024)
        return f"{mib} MiB" if kib == 0 else f"{value // 1024} KiB"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str)
    return repr(value) if isinstance(value, str) else str(value)


def _scrapy_cell(setting: Any, module: str) -> nodes.Node:
    """The Scrapy setting of the same meaning, as the declarations and Scrapy's list of
    names say; Spidermon's own names are marked as such, and "—" means Scrapy has none."""
    from skitter.settings._registry import scrapy_equivalent

    if module == "_spidermon":
        return nodes.Text("Spidermon's own")
    name = scrapy_equivalent(setting)
    return nodes.literal(name, name) if name else nodes.Text("\u2014")


class SettingsDirective(Directive):
    """Every known setting: name, type, default, meaning, Scrapy equivalent; one table
    per group."""

    def run(self) -> list[nodes.Node]:
        from skitter.settings import SETTINGS

        out: list[nodes.Node] = []
        shown: set[str] = set()
        for module, title in SETTING_GROUPS:
            group = importlib.import_module(f"skitter.settings.{module}").GROUP
            section = _section(title, f"settings-{module.strip('_')}")
            section += _table(
                ("setting", "type", "default", "meaning", "Scrapy equivalent"),
                (
                    (
                        nodes.literal(s.name, s.name, ids=[f"setting-{s.name.lower()}"]),
                        nodes.Text(s.kind.__name__),
                        nodes.literal(_default(s.default), _default(s.default)),
                        nodes.Text(s.doc),
                        _scrapy_cell(s, module),
                    )
                    for s in group
                ),
            )
            shown.update(s.name for s in group)
            out.append(section)
        missing = sorted(set(SETTINGS) - shown)
        if missing:
            raise self.error(f"settings groups not in SETTING_GROUPS: {', '.join(missing)}")
        return out


class RefusedSettingsDirective(Directive):
    """The Scrapy and Spidermon settings refused at start, with what to use instead."""

    def run(self) -> list[nodes.Node]:
        from skitter.settings._registry import REFUSED

        rows = (
            (nodes.literal(name, name), nodes.Text(why.owner), nodes.Text(why.hint))
            for name, why in sorted(REFUSED.items())
        )
        return [_table(("setting", "whose", "why refused, and what to use"), rows)]


def _parser() -> argparse.ArgumentParser:
    from skitter.cli._main import _build_parser

    return _build_parser()


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help:
        return ""
    return parser._get_formatter()._expand_help(action)


def _option_names(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        return f"{names} {action.metavar or action.dest.upper()}" if action.nargs != 0 else names
    return str(action.metavar or action.dest)


class CliDirective(Directive):
    """Every ``skitter`` command: its description, usage and arguments, from the parser."""

    def run(self) -> list[nodes.Node]:
        parser = _parser()
        out: list[nodes.Node] = [self._command("skitter", parser, top=True)]
        for name, sub in sorted(_subcommands(parser).items()):
            out.append(self._command(f"skitter {name}", sub, top=False))
        return out

    def _command(self, title: str, parser: argparse.ArgumentParser, top: bool) -> nodes.section:
        section = _section(title, "cli-" + title.replace(" ", "-"))
        if parser.description:
            section += nodes.paragraph(parser.description, parser.description)
        usage = parser.format_usage().strip()
        section += nodes.literal_block(usage, usage)
        rows = [
            (nodes.literal(_option_names(a), _option_names(a)), nodes.Text(_help(parser, a)))
            for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)
        ]
        if rows:
            section += _table(("argument", "meaning"), rows)
        if top:
            names = ", ".join(f"skitter {name}" for name in sorted(_subcommands(parser)))
            section += nodes.paragraph(names, f"Commands: {names}.")
        return section


def _sent_signals() -> dict[str, dict[str, set[str]]]:
    """For each signal sent in src/skitter: the keyword arguments, by sending module."""
    found: dict[str, dict[str, set[str]]] = {}
    for path in sorted(_SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(_SRC.parent).with_suffix("").parts)
        for call in ast.walk(tree):
            name = _signal_of(call)
            if name is None:
                continue
            assert isinstance(call, ast.Call)
            kwargs = {k.arg for k in call.keywords if k.arg and k.arg != "signal"}
            found.setdefault(name, {}).setdefault(module, set()).update(kwargs)
    return found


def _signal_of(node: ast.AST) -> str | None:
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr not in _SENDERS:
        return None
    given = [k.value for k in node.keywords if k.arg == "signal"] + list(node.args[:1])
    if given and isinstance(given[0], ast.Attribute):
        return given[0].attr
    if given and isinstance(given[0], ast.Name):
        return given[0].id
    return None


class SignalsDirective(Directive):
    """Every signal of ``skitter.signals``: what it means and what handlers are given."""

    def run(self) -> list[nodes.Node]:
        import skitter.signals

        docs = ModuleAnalyzer.for_module("skitter.signals").find_attr_docs()
        sent = _sent_signals()
        rows = []
        for name in skitter.signals.__all__:
            if name == "SignalManager":
                continue
            meaning = " ".join(docs.get(("", name), [])).strip()
            if not meaning:
                raise self.error(f"skitter.signals.{name} has no '#:' comment saying what it means")
            where = sent.get(name, {})
            kwargs = sorted(set().union(*where.values())) if where else []
            rows.append(
                (
                    nodes.literal(name, name, ids=[f"signal-{name}"]),
                    nodes.Text(meaning),
                    nodes.Text(", ".join(kwargs) if kwargs else "(none)"),
                )
            )
        return [_table(("signal", "sent when", "handler arguments"), rows)]


_STATS_METHODS = {"inc", "set", "max", "inc_value", "set_value", "max_value", "min_value"}


def _text(node: ast.AST) -> str | None:
    """A string literal as written, an f-string with its computed parts as ``{expr}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(part.value) if isinstance(part, ast.Constant) else f"{{{ast.unparse(part.value)}}}"
            for part in node.values
            if isinstance(part, ast.Constant | ast.FormattedValue)
        )
    return None


def _names_in(function: ast.AST) -> dict[str, list[str]]:
    """The strings each plain name is assigned in ``function`` (``key = f"..."``)."""
    names: dict[str, list[str]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and (text := _text(node.value)) is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.setdefault(target.id, []).append(text)
    return names


def _stats_calls(function: ast.AST) -> Iterable[str]:
    """The keys ``function`` counts with ``...stats.inc(key)`` and the like: a literal, or
    a name assigned a literal in the same function."""
    names = _names_in(function)
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr not in _STATS_METHODS or "stats" not in ast.unparse(node.func.value):
            continue
        if not node.args:
            continue
        key = node.args[0]
        text = _text(key)
        if text is not None:
            yield text
        elif isinstance(key, ast.Name):
            yield from names.get(key.id, [])


def _stats_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(_SRC.rglob("*.py")):
        module = ".".join(path.relative_to(_SRC.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for key in _stats_calls(function):
                    found.setdefault(key, set()).add(module)
    return found


def _meta_key(node: ast.AST) -> str | None:
    """The key of ``x.meta["key"]``, ``x.meta.get("key")`` or ``"key" in x.meta``."""
    if isinstance(node, ast.Subscript) and _is_meta(node.value):
        return _text(node.slice)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop", "setdefault")
        and node.args
        and _is_meta(node.func.value)
    ):
        return _text(node.args[0])
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.In | ast.NotIn)
        and _is_meta(node.comparators[0])
    ):
        return _text(node.left)
    return None


def _is_meta(node: ast.AST) -> bool:
    """A request's or a response's meta (not a job's record or a field's, also named so)."""
    text = ast.unparse(node)
    return text == "meta" or (text.endswith(".meta") and ("request" in text or "response" in text))


#: Modules whose ``meta`` is a record of their own (a job's state, a cache entry, a schema
#: field), not a request's, and which read no request's meta: not scanned.
_OTHER_META = {
    "skitter._job",
    "skitter.extensions.httpcache._entry",
    "skitter.pipelines._schemas",
    "skitter.pipelines._sinks._identity",
    "skitter.server._deploy",  # a deployed version's record, not a request's meta
}

#: What each ``Request.meta`` key means. The build fails for a key the code uses that
#: has no meaning here, and for a meaning of a key the code no longer uses.
META_MEANINGS = {
    "allow_offsite": "Scrapy's: the offsite check lets this request through (dropped "
    "when it redirects to another host); also admits a data: or file: URL.",
    "autothrottle_dont_adjust_delay": "Scrapy's: AutoThrottle does not adjust the slot's "
    "delay for this request's response.",
    "browser_keep_page": "Gives the callback the live Playwright page, which it must "
    "close (rendering).",
    "browser_page": "Set on a rendered response with browser_keep_page: the Playwright page.",
    "browser_wait_for": "A CSS selector the browser waits for before the page counts as loaded.",
    "browser_wait_until": "When a rendered page counts as loaded, for this request "
    "(BROWSER_WAIT_UNTIL).",
    "cached_response": "Internal to the HTTP cache: a stored response waiting to be validated.",
    "cookiejar": "Scrapy's: the name of the cookie jar (session) this request uses.",
    "depth": "Scrapy's: how many links from a start request; set by the depth middleware.",
    "depth_reset": "Scrapy's: this request starts again at depth 0 (the depth middleware "
    "consumes it).",
    "dont_cache": "Scrapy's: the HTTP cache neither serves nor stores this request.",
    "dont_merge_cookies": "Scrapy's: the cookie jar neither adds cookies to this request "
    "nor keeps those of its response.",
    "dont_obey_robotstxt": "Scrapy's: robots.txt is not checked for this request.",
    "dont_redirect": "Scrapy's: a redirect response is given to the callback as it is.",
    "dont_render": "Opts this request out of rendering when the spider or BROWSER_RENDER "
    "renders all.",
    "dont_retry": "Scrapy's: this request is never retried.",
    "download_fail_on_dataloss": "Scrapy's: a truncated body fails the request "
    "(DOWNLOAD_FAIL_ON_DATALOSS).",
    "download_latency": "Scrapy's: set on the response, the seconds its download took.",
    "download_maxsize": "Scrapy's: the largest body accepted for this request (DOWNLOAD_MAXSIZE).",
    "download_slot": "Scrapy's: the download slot this request queues in (politeness).",
    "download_timeout": "Scrapy's: seconds this download may take (DOWNLOAD_TIMEOUT).",
    "download_warnsize": "Scrapy's: the body size above which a warning is logged "
    "(DOWNLOAD_WARNSIZE).",
    "handle_httpstatus_all": "Scrapy's: every status reaches the callback.",
    "handle_httpstatus_list": "Scrapy's: these non-2xx statuses reach the callback.",
    "http_pass": "Scrapy's per-request password: refused (meta is stored with the job); "
    "use HTTP_AUTH settings.",
    "http_user": "Scrapy's per-request user: refused, as http_pass.",
    "impersonate": "The browser the curl transport's TLS fingerprint imitates "
    "(DOWNLOAD_IMPERSONATE).",
    "is_start_request": "Scrapy 2.13's: set on the requests start() yields.",
    "is_unverifiable": "Set on a redirect or an embedded resource, for the cookie jar's "
    "third-party rules.",
    "max_retry_times": "Scrapy's: how many times this request may be retried (RETRY_TIMES).",
    "playwright": "scrapy-playwright's: with its download handler configured, a true "
    "value renders this request.",
    "proxy": "Scrapy's: the proxy URL this request goes through.",
    "redirect_reasons": "Scrapy's: the statuses of the redirects that led here.",
    "redirect_times": "Scrapy's: how many redirects led here (REDIRECT_MAX_TIMES).",
    "redirect_urls": "Scrapy's: the URLs redirected from, oldest first.",
    "referrer_policy": "Scrapy's: the Referer policy for this request (REFERRER_POLICY).",
    "retry_times": "Scrapy's: how many times this request has been retried so far.",
    "rule": "Scrapy's: the index of the CrawlSpider rule whose link this request follows.",
    "session_id": "The session (cookie jar and proxy) this request uses (sessions and proxies).",
    "transport": "The transport that fetches this request: aiohttp, httpx, curl or browser.",
    "verbatim_url": "Keeps the URL as given: spaces and non-ASCII characters not escaped.",
}


def _meta_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(_SRC.rglob("*.py")):
        module = ".".join(path.relative_to(_SRC.parent).with_suffix("").parts)
        if module in _OTHER_META:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = _meta_key(node)
            if key is not None and "{" not in key and not key.startswith("_"):
                found.setdefault(key, set()).add(module)
    return found


#: What the stats keys of each first path segment count (a key without a ``/``: that key).
#: A key whose segment is not here fails the build, as does a segment no key has.
STATS_GROUPS = {
    "alerts": "Alerts the monitors sent, suppressed or lost.",
    "browser": "The rendering browser: launches, restarts, pages, blocked requests.",
    "depth": "Requests dropped past DEPTH_LIMIT (Scrapy's).",
    "downloader": "Downloads (Scrapy's): requests, responses, bytes, statuses, errors, redirects.",
    "dupefilter": "Requests merged into one already queued or crawled (same taskid).",
    "elapsed_time_seconds": "Seconds the crawl ran (Scrapy's).",
    "engine": "The crawl engine: failed requests, start-request and periodic errors, "
    "outages of the task store, tasks left at the end.",
    "feedexport": "Feeds (Scrapy's): items written per format, stores and uploads, lost items.",
    "finish_error": "The error that failed the crawl, when one did.",
    "finish_reason": "Why the crawl ended (Scrapy's): finished, closespider_..., shutdown...",
    "finish_time": "When the crawl ended (Scrapy's).",
    "frontier": "Stored tasks found invalid and quarantined (Redis).",
    "httpcache": "The HTTP cache (Scrapy's): hits, misses, stores, revalidations, errors.",
    "httpcompression": "Bodies HttpCompressionMiddleware decoded itself, and their decoded "
    "bytes (Scrapy's; the transport's own decoding is not counted here).",
    "httperror": "Responses dropped for their status (Scrapy's HttpErrorMiddleware).",
    "images": "Images the images pipeline refused as too large in pixels.",
    "item_dropped_count": "Items a pipeline dropped (Scrapy's).",
    "item_dropped_reasons_count": "Items dropped, by exception (Scrapy's).",
    "item_error_count": "Items a pipeline failed on (Scrapy's).",
    "item_scraped_count": "Items that passed every pipeline (Scrapy's).",
    "monitors": "Monitors: their status, periodic runs and failures, the report.",
    "multiproc": "A --processes crawl: processes, workers replaced, coordinator calls, CPU, "
    "the longest spawn-to-first-lease of a worker.",
    "offsite": "Requests dropped outside allowed_domains, and their domains (Scrapy's).",
    "pipeline": "Errors of each item pipeline.",
    "proxy": "The proxy pool: requests, failures and blocks per proxy, tiers, proxies down.",
    "recrawl": "Recrawled pages the server said were unchanged (304).",
    "redis_items": "Items sent to Redis by RedisPipeline, trimmed, or lost.",
    "render_auto": 'render="auto": pages rendered, pages HTTP was enough for, patterns learned.',
    "request_depth_count": "Requests kept at each depth, with DEPTH_STATS_VERBOSE (Scrapy's).",
    "request_depth_max": "The deepest request (Scrapy's).",
    "response_received_count": "Responses received (Scrapy's).",
    "retry": "Retries (Scrapy's): count, attempts, reasons, requests given up on.",
    "robotstxt": "robots.txt (Scrapy's): fetches, statuses, errors, requests forbidden.",
    "scheduler": "The scheduler: requests queued, invalid URLs, leases reclaimed, circuit "
    "breakers, cluster slot permits.",
    "sessions": "Sessions: created, retired, retries after a block, given up.",
    "signals": "Errors raised by signal handlers.",
    "sink": "Each sink's items and errors.",
    "spider_exceptions": "Exceptions raised by callbacks, by type (Scrapy's).",
    "start_requests": "Start requests accepted, and refused (invalid).",
    "start_time": "When the crawl started (Scrapy's).",
    "urllength": "Requests dropped past URLLENGTH_LIMIT (Scrapy's).",
    "validation": "Item validation: items checked, invalid, kept, routed; errors per field.",
    "{": "A key whose name the counting code computes: see the module that counts it.",
}


def _stats_group(key: str) -> str:
    return "{" if key.startswith("{") else key.split("/", 1)[0]


class MetaDirective(Directive):
    """Every ``Request.meta`` key skitter reads or sets, and the modules that do."""

    def run(self) -> list[nodes.Node]:
        keys = _meta_keys()
        if len(keys) < 10:
            raise self.error(f"only {len(keys)} meta keys found: has Request.meta changed?")
        unsaid = sorted(set(keys) - set(META_MEANINGS))
        stale = sorted(set(META_MEANINGS) - set(keys))
        if unsaid or stale:
            raise self.error(
                f"META_MEANINGS in docs/_ext: say what {unsaid} mean; drop {stale}, no longer used"
            )
        rows = (
            (
                nodes.literal(key, key),
                nodes.Text(META_MEANINGS[key]),
                nodes.Text(", ".join(sorted(modules))),
            )
            for key, modules in sorted(keys.items())
        )
        return [_table(("meta key", "meaning", "read or set in"), rows)]


class StatsDirective(Directive):
    """Every stats key counted in ``src/skitter``, and the modules that count it."""

    def run(self) -> list[nodes.Node]:
        keys = _stats_keys()
        if len(keys) < 50:
            raise self.error(f"only {len(keys)} stats keys found: has the stats API changed?")
        groups = {_stats_group(key) for key in keys}
        unsaid = sorted(groups - set(STATS_GROUPS))
        stale = sorted(set(STATS_GROUPS) - groups)
        if unsaid or stale:
            raise self.error(
                f"STATS_GROUPS in docs/_ext: say what {unsaid} count; drop {stale}, no longer "
                "counted"
            )
        rows = (
            (
                nodes.literal(key, key),
                nodes.Text(STATS_GROUPS[_stats_group(key)]),
                nodes.Text(", ".join(sorted(modules))),
            )
            for key, modules in sorted(keys.items())
        )
        return [_table(("stats key", "what it counts", "counted in"), rows)]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("skitter-settings", SettingsDirective)
    app.add_directive("skitter-refused-settings", RefusedSettingsDirective)
    app.add_directive("skitter-cli", CliDirective)
    app.add_directive("skitter-signals", SignalsDirective)
    app.add_directive("skitter-stats", StatsDirective)
    app.add_directive("skitter-meta", MetaDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
