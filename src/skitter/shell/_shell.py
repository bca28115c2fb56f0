"""The interactive shell: try selectors on a page as the spider would download it.

``Shell`` fills a namespace (``request``, ``response``, ``spider``, ``settings``,
``crawler``, ``fetch``, ``view``, ``shelp``) and starts a REPL on it: IPython when it is
importable, else the standard ``code`` console; ``SCRAPY_PYTHON_SHELL`` (``ipython``,
``python``, or both, comma-separated, in order of preference) chooses, as in Scrapy.

``fetch`` is synchronous for the user but downloads through the crawl's own components
(``Crawler.probe()``: settings, downloader middlewares, scope), on an event loop that
runs on a thread of its own (``LoopThread``), so the REPL's thread blocks on the answer.

``inspect_response(response, spider)``, called from a callback, opens the shell on that
response in the middle of a crawl. The callback is synchronous and runs on the crawl's
event loop, so the crawl waits (the loop is blocked) until the shell is left (Ctrl-D);
``fetch`` is not offered there (its loop is the one waiting), as in Scrapy.
"""

from __future__ import annotations

import code
import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

import skitter
from skitter.crawler import Crawler
from skitter.engine import Probe
from skitter.http import Request, Response
from skitter.settings import Settings
from skitter.shell._loop import LoopThread
from skitter.spider import Spider
from skitter.utils.response import open_in_browser

__all__ = ["Shell", "inspect_response"]

_RELEVANT = (Crawler, Spider, Request, Response, Settings)


class Shell:
    """A REPL over a crawl's objects. With ``loop``, ``fetch`` downloads through
    ``crawler.probe()`` opened on that loop; without, ``fetch`` is not offered.
    ``url_for`` turns what the user typed into a URL and whether it named a local file
    (the CLI's rule: ``./page.html`` is a file)."""

    def __init__(
        self,
        crawler: Any,
        *,
        loop: LoopThread | None = None,
        code: str | None = None,
        url_for: Callable[[str], tuple[str, bool]] | None = None,
        describe_error: Callable[[BaseException, Any], str] | None = None,
    ) -> None:
        self.crawler = crawler
        self.code = code
        self.vars: dict[str, Any] = {}
        #: The last download's error, or None (``-c`` fails on it).
        self.error: BaseException | None = None
        self.spider: Any = getattr(crawler, "spider", None)
        self._loop = loop
        self._probe: Probe | None = None
        self._url_for = url_for or (lambda url: (url, False))
        self._describe = describe_error or (lambda exc, _: f"{type(exc).__name__}: {exc}")

    @property
    def fetch_available(self) -> bool:
        return self._loop is not None

    def open(self) -> None:
        """Build and open the crawl's components on the loop (before the first fetch)."""
        if self._loop is None or self._probe is not None:
            return

        async def opened() -> Probe:
            probe = self.crawler.probe()
            await probe.open()
            return probe  # type: ignore[no-any-return]

        self._probe = self._loop.run(opened())
        self.spider = self._probe.spider

    def close(self) -> None:
        if self._loop is not None and self._probe is not None:
            probe, self._probe = self._probe, None
            self._loop.run(probe.close())

    def fetch(self, request_or_url: Request | str, redirect: bool = True, **kwargs: Any) -> None:
        """Download a URL (or a Request) as the spider would, and update ``request``
        and ``response``; ``redirect=False`` shows a 3xx as it came."""
        if self._loop is None:
            raise RuntimeError("fetch() is not available here (the crawl's loop is waiting)")
        if isinstance(request_or_url, Request):
            request = request_or_url
        else:
            url, local = self._url_for(request_or_url)
            request = Request(url, dont_filter=True, **kwargs)
            if not redirect:
                request.meta["handle_httpstatus_all"] = True
            if local:  # a file the user named: the scope's file: refusal is for crawls
                request.meta["allow_offsite"] = True
        self.open()
        assert self._probe is not None
        response: Response | None = None
        self.error = None
        try:
            response = self._loop.run(self._probe.fetch(request))
        except KeyboardInterrupt:
            print("[s] fetch interrupted", file=sys.stderr)
        except Exception as exc:
            self.error = exc
            print(f"[s] {self._describe(exc, self.spider)}", file=sys.stderr)
        self.populate_vars(response, request if response is None else response.request)

    def view(self, response: Response | None = None) -> Any:
        """Open ``response`` (default: the current one) in a web browser."""
        response = response if response is not None else self.vars.get("response")
        if response is None:
            raise ValueError("no response to view: fetch() one first")
        return open_in_browser(response)

    def populate_vars(
        self, response: Response | None = None, request: Request | None = None
    ) -> None:
        ns = self.vars
        ns["skitter"] = skitter
        ns["crawler"] = self.crawler
        ns["settings"] = getattr(self.crawler, "settings", None)
        ns["spider"] = self.spider
        ns["request"] = request
        ns["response"] = response
        if self.fetch_available:
            ns["fetch"] = self.fetch
        ns["view"] = self.view
        ns["shelp"] = self.print_help

    def print_help(self) -> None:
        print(self.get_help())

    def get_help(self) -> str:
        lines = [
            "Available skitter objects:",
            "  skitter    the skitter module (Request, Selector...)",
        ]
        for name, value in sorted(self.vars.items()):
            if isinstance(value, _RELEVANT):
                lines.append(f"  {name:<10} {value!r}")
        lines.append("Useful shortcuts:")
        if self.fetch_available:
            lines.append("  fetch(url[, redirect=True]) Fetch URL and update local objects")
            lines.append(
                "  fetch(req)                  Fetch a skitter.Request and update local objects"
            )
        lines.append("  shelp()           Shell help (print this help)")
        lines.append("  view(response)    View response in a browser")
        return "\n".join(f"[s] {line}" for line in lines) + "\n"

    def start(
        self,
        url: str | None = None,
        request: Request | None = None,
        response: Response | None = None,
        redirect: bool = True,
    ) -> Any:
        """Fetch ``url`` (or ``request``), or show ``response``; then evaluate ``code``
        and return its value, or run the REPL until the user leaves it."""
        if url is not None:
            self.fetch(url, redirect=redirect)
        elif request is not None:
            self.fetch(request)
        else:
            self.open()
            self.populate_vars(response, response.request if response is not None else None)
        if self.code is not None:
            if self.error is not None:
                return None  # said on stderr; the caller fails the run
            return eval(self.code, self.vars)  # the user's own expression, as scrapy -c
        interact(self.vars, self.get_help())
        return None


def interact(namespace: dict[str, Any], banner: str) -> None:
    """Run IPython, else the standard console, on ``namespace`` (SCRAPY_PYTHON_SHELL
    lists the preferred ones)."""
    asked = os.environ.get("SCRAPY_PYTHON_SHELL")
    names = [part.strip().lower() for part in (asked or "ipython").split(",") if part.strip()]
    for name in [*names, "python"]:
        if name not in ("ipython", "python"):
            print(
                f"[s] SCRAPY_PYTHON_SHELL: no {name!r} shell here (ipython, python)",
                file=sys.stderr,
            )
            continue
        if name == "ipython":
            try:  # optional: the user's own IPython, when installed
                embed = importlib.import_module("IPython.terminal.embed")
            except ImportError:
                if asked:
                    print("[s] IPython is not installed: the standard console", file=sys.stderr)
                continue
            embed.InteractiveShellEmbed(banner1=banner, user_ns=namespace)()
            return
        if name == "python":
            try:
                import readline
                import rlcompleter

                readline.set_completer(rlcompleter.Completer(namespace).complete)
                readline.parse_and_bind("tab: complete")
            except ImportError:  # no readline (Windows): no completion
                pass
            code.interact(banner=banner, local=namespace, exitmsg="")
            return


def inspect_response(response: Response, spider: Any) -> None:
    """Open a shell on ``response`` from a spider's callback; the crawl waits until the
    shell is left (Ctrl-D). The REPL runs on a thread of its own, so that IPython does
    not meet the crawl's running event loop; this thread blocks on it meanwhile."""
    shell = Shell(getattr(spider, "crawler", None))
    shell.spider = spider
    failure: list[BaseException] = []

    def run() -> None:
        try:
            shell.start(response=response)
        except BaseException as exc:  # raised here, on the callback's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="skitter-inspect-response")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
