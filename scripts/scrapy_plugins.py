"""Popular Scrapy plug-ins, each run on skitter through the Scrapy alias, effect checked.

    python scripts/scrapy_plugins.py                  # all 13, one table
    python scripts/scrapy_plugins.py --plugin spidermon --plugin scrapy-redis -v

For each plug-in it installs the plug-in (``pip install --target``, cached in ``--cache``,
so the venv running this is not changed) with its own dependencies but never Scrapy
itself, then runs the small Scrapy spider ``scripts/scrapy_plugins/<module>.py`` under
``python -m skitter.scrapy_alias`` (so ``import scrapy`` is skitter) against a site
served by this process on 127.0.0.1, with the settings the plug-in's README gives. The
spider is plain Scrapy code; what the plug-in must have done is checked here, from what
the site and the local proxies saw and from the crawl's items and stats (not from the
plug-in's own claims):

- scrapy-user-agents, scrapy-fake-useragent: every page was fetched with a User-Agent
  the plug-in chose (not skitter's, not none);
- scrapy-proxies, scrapy-rotating-proxies: every page went through one of the local
  proxies (a proxy serves the site's pages and the site records which one);
- scrapy-jsonschema: the item missing a required field is dropped, the others kept;
- scrapy-fieldstats: ``fields_coverage`` in the stats, with the right percentages;
- scrapy-deltafetch: a second run skips the pages whose items the first run stored;
- spidermon: a project's own close-monitor suite ran, one monitor passed and one
  failed, as the data says (an action of the suite records the results);
- scrapy-poet: a page object was built from the response and injected in the callback,
  and a callback annotated ``DummyResponse`` ran without its page being downloaded;
- scrapy-splash: there is no Splash server here, so what is checked is that the
  requests were rewritten to the Splash endpoint (a local fake that answers with the
  page's HTML) with the right arguments, and that the spider got the page back under
  its own URL; Splash's rendering itself is not tested;
- scrapy-redis: a RedisSpider reads its start URLs from a list on a local redis-server
  (started on a free port) and crawls them;
- scrapy-playwright: ``meta["playwright"]`` pages are rendered (a script-written element
  is in the response) by skitter's browser transport with Debian's ``chromium``;
- scrapy-inline-requests: a callback yields a request and gets its response inline.

It prints a table: plug-in, version, loads?, works?, why not. Exit 1 when fewer than
``--min-working`` work. What skitter changes for each is listed in
``docs/coming-from/scrapy.md`` ("Plug-ins").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import ClientSession, web

HERE = Path(__file__).resolve().parent
SPIDERS = HERE / "scrapy_plugins"
DEFAULT_CACHE = HERE.parent / ".scrapy-plugins"
USER_AGENT_MARK = "skitter"  # skitter's own default User-Agent contains it


@dataclass
class Plugin:
    """A plug-in: its PyPI name and version, its spider module, its extra requirements."""

    name: str
    version: str
    module: str
    deps: list[str] = field(default_factory=list)
    check: Callable[[dict[str, Any], Site], str | None] = lambda result, site: None
    runs: int = 1


# --------------------------------------------------------------------------- the site


@dataclass
class Hit:
    path: str
    headers: dict[str, str]
    proxy: str = ""  # which local proxy forwarded it ("" = direct)


class Site:
    """The local site, the proxies and a fake Splash, on 127.0.0.1, in a thread."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.splash_calls: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.runners: list[web.AppRunner] = []
        self.url = ""
        self.proxies: list[str] = []

    # pages ------------------------------------------------------------------------
    PRODUCTS = [  # (name, price): the third has no price, for the schema and field stats
        ("alpha", "1.50"),
        ("beta", "2.00"),
        ("gamma", None),
        ("delta", "4.25"),
    ]

    def page(self, n: int) -> str:
        name, price = self.PRODUCTS[n - 1]
        price_html = f'<span class="price">{price}</span>' if price else ""
        more = f'<a class="next" href="/product/{n + 1}">next</a>' if n < len(self.PRODUCTS) else ""
        return (
            f"<html><head><title>{name}</title></head><body>"
            f'<h1 class="name">{name}</h1>{price_html}{more}'
            f'<a class="detail" href="/detail/{n}">detail</a></body></html>'
        )

    async def handle(self, request: web.Request, proxy: str = "") -> web.Response:
        path = request.path
        self.hits.append(Hit(request.path_qs, dict(request.headers), proxy))
        if path == "/":
            links = "".join(f'<a href="/product/{n}">p{n}</a>' for n in range(1, 5))
            return self._html(f"<html><body>{links}</body></html>")
        if path.startswith("/product/"):
            return self._html(self.page(int(path.rsplit("/", 1)[1])))
        if path.startswith("/detail/"):
            n = path.rsplit("/", 1)[1]
            return self._html(f'<html><body><p class="stock">{int(n) * 10}</p></body></html>')
        if path == "/js":
            return self._html(
                "<html><body><div id='static'>static</div><script>"
                "const d=document.createElement('div');d.id='rendered';"
                "d.textContent='by script';document.body.appendChild(d);"
                "</script></body></html>"
            )
        if path in ("/render.html", "/render.json", "/execute"):
            return await self.splash(request)
        return web.Response(status=404, text="not found")

    @staticmethod
    def _html(text: str) -> web.Response:
        return web.Response(text=text, content_type="text/html")

    async def splash(self, request: web.Request) -> web.Response:
        """A stand-in for Splash's HTTP API: records the arguments, returns the page."""
        args = await request.json() if request.method == "POST" else dict(request.query)
        self.splash_calls.append({"endpoint": request.path, "args": args})
        target = str(args.get("url", ""))
        async with ClientSession() as session, session.get(target) as got:
            body = await got.text()
        if request.path == "/render.json":
            return web.json_response({"html": body, "url": target})
        return self._html(body)

    async def proxy(self, request: web.Request) -> web.Response:
        """An HTTP forward proxy for this site only: absolute-form requests, served here."""
        name = f"proxy-{request.url.port or request.host}"
        if not request.raw_path.startswith(self.url):
            return web.Response(status=403, text="this proxy serves the local site only")
        sub = request.clone(rel_url=request.raw_path[len(self.url) :] or "/")
        return await self.handle(sub, proxy=name)

    # lifecycle --------------------------------------------------------------------
    def start(self, proxies: int = 2) -> None:
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.url = self._serve(self.handle)
        self.proxies = [self._serve(self.proxy) for _ in range(proxies)]

    def _serve(self, handler: Callable[[web.Request], Any]) -> str:
        async def up() -> str:
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", handler)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.runners.append(runner)
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            return f"http://127.0.0.1:{port}"

        return asyncio.run_coroutine_threadsafe(up(), self.loop).result(10)

    def reset(self) -> None:
        self.hits.clear()
        self.splash_calls.clear()

    def stop(self) -> None:
        async def down() -> None:
            for runner in self.runners:
                await runner.cleanup()

        asyncio.run_coroutine_threadsafe(down(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- checks


def _pages(site: Site) -> list[Hit]:
    return [h for h in site.hits if h.path.startswith("/product/")]


def check_user_agents(result: dict[str, Any], site: Site) -> str | None:
    pages = _pages(site)
    if len(pages) < 4:
        return f"{len(pages)} product pages fetched, 4 expected"
    agents = [h.headers.get("User-Agent", "") for h in pages]
    own = [ua for ua in agents if USER_AGENT_MARK in ua.lower() or not ua]
    if own:
        return f"{len(own)} pages went with skitter's (or no) User-Agent: {own[0]!r}"
    return None


def check_proxies(result: dict[str, Any], site: Site) -> str | None:
    pages = _pages(site)
    direct = [h.path for h in pages if not h.proxy]
    if len(pages) < 4:
        return f"{len(pages)} product pages fetched, 4 expected"
    if direct:
        return f"{len(direct)} pages fetched without a proxy ({direct[0]})"
    return None  # which proxy is random: several used is likely, not certain


def _items(result: dict[str, Any]) -> list[dict[str, Any]]:
    return list(result.get("items", []))


def check_jsonschema(result: dict[str, Any], site: Site) -> str | None:
    names = sorted(i.get("name") for i in _items(result))
    if names != ["alpha", "beta", "delta"]:
        return f"items {names}: the one without a price should be dropped, the rest kept"
    dropped = result["stats"].get("item_dropped_count", 0)
    return None if dropped == 1 else f"item_dropped_count {dropped}, 1 expected"


def check_fieldstats(result: dict[str, Any], site: Site) -> str | None:
    coverage = result["stats"].get("fields_coverage")
    expected = {"name": "100.0%", "price": "75.0%", "url": "100.0%"}
    if coverage != expected:
        return f"fields_coverage {coverage!r}, expected {expected}"
    return None


def check_deltafetch(result: dict[str, Any], site: Site) -> str | None:
    first, second = result["runs"]
    if len(first["items"]) != 4:
        return f"first run scraped {len(first['items'])} items, 4 expected"
    skipped = second["stats"].get("deltafetch/skipped", 0)
    if second["items"] or skipped != 4:
        return f"second run: {len(second['items'])} items, {skipped} skipped; 0 and 4 expected"
    return None


def check_spidermon(result: dict[str, Any], site: Site) -> str | None:
    ran = result.get("monitors") or {}
    expected = {"test_item_count": "passed", "test_all_have_price": "failed"}
    if ran != expected:
        return f"monitor results {ran}, expected {expected}"
    return None


def check_poet(result: dict[str, Any], site: Site) -> str | None:
    every = _items(result)
    dummies = [i for i in every if "dummy" in i]
    if [i.get("dummy") for i in dummies] != ["DummyResponse"]:
        return f"the callback annotated DummyResponse got {dummies}"
    if any(hit.path == "/not-downloaded" for hit in site.hits):
        return "the DummyResponse callback's page was downloaded"
    items = [i for i in every if "dummy" not in i]
    if sorted(i.get("name") for i in items) != ["alpha", "beta", "delta", "gamma"]:
        return f"items {items[:2]}...: the page object did not extract the 4 products"
    if not all(i.get("via") == "ProductPage" for i in items):
        return "the items were not made by the injected page object"
    return None


def check_splash(result: dict[str, Any], site: Site) -> str | None:
    calls = site.splash_calls
    if not calls:
        return "no request reached the Splash endpoint"
    wrong = [c for c in calls if c["endpoint"] != "/render.html" or "wait" not in c["args"]]
    if wrong:
        return f"Splash call {wrong[0]} lacks the spider's endpoint or arguments"
    urls = sorted(i.get("url", "") for i in _items(result))
    if urls != sorted(f"{site.url}/product/{n}" for n in range(1, 5)):
        return f"responses came back under {urls[:2]}..., not the pages' own URLs"
    return None


def check_redis(result: dict[str, Any], site: Site) -> str | None:
    names = sorted(i.get("name") for i in _items(result))
    if names != ["alpha", "beta"]:
        return f"items {names}: the two start URLs pushed to redis should be crawled"
    return None


def check_playwright(result: dict[str, Any], site: Site) -> str | None:
    items = _items(result)
    rendered = [i for i in items if i.get("rendered") == "by script"]
    plain = [i for i in items if i.get("plain")]
    if len(rendered) != 1:
        return f"meta['playwright'] page not rendered: {items}"
    if len(plain) != 1 or plain[0].get("rendered"):
        return f"the request without meta['playwright'] should go over HTTP: {items}"
    return None


def check_inline(result: dict[str, Any], site: Site) -> str | None:
    items = _items(result)
    stocks = sorted(int(i.get("stock", -1)) for i in items)
    if stocks != [10, 20, 30, 40]:
        return f"stocks {stocks}: each detail page should be fetched inline, in the callback"
    return None


PLUGINS = [
    Plugin("scrapy-user-agents", "0.1.1", "scrapy_user_agents", ["user-agents"],
           check_user_agents),
    Plugin("scrapy-proxies", "0.4", "scrapy_proxies", [], check_proxies),
    Plugin("scrapy-jsonschema", "0.5.0", "scrapy_jsonschema", ["jsonschema[format]"],
           check_jsonschema),
    Plugin("scrapy-fieldstats", "0.2.0", "scrapy_fieldstats", [], check_fieldstats),
    Plugin("scrapy-fake-useragent", "1.4.4", "scrapy_fake_useragent",
           ["fake-useragent", "faker"], check_user_agents),
    Plugin("scrapy-rotating-proxies", "0.6.2", "rotating_proxies",
           ["attrs", "six", "twisted"], check_proxies),
    Plugin("scrapy-deltafetch", "2.1.0", "scrapy_deltafetch", [], check_deltafetch, runs=2),
    Plugin("spidermon", "1.27.0", "spidermon",
           ["jsonschema[format]>=4.21.0", "python-slugify>=5.0.0", "twisted"], check_spidermon),
    Plugin("scrapy-poet", "0.27.2", "scrapy_poet",
           ["andi>=0.6.0", "attrs>=21.3.0", "sqlitedict>=1.5.0", "time-machine>=2.7.1",
            "twisted>=18.9.0", "url-matcher>=0.2.0", "web-poet>=0.17.0"], check_poet),
    Plugin("scrapy-splash", "0.11.1", "scrapy_splash", ["six"], check_splash),
    Plugin("scrapy-redis", "0.9.1", "scrapy_redis", ["redis>=4.2", "six>=1.15", "twisted"],
           check_redis),
    Plugin("scrapy-playwright", "0.0.48", "scrapy_playwright", ["playwright>=1.40"],
           check_playwright),
    Plugin("scrapy-inline-requests", "0.3.1", "inline_requests", ["six>=1.5"], check_inline),
]


# --------------------------------------------------------------------------- install


def install(plugin: Plugin, cache: Path) -> Path:
    """The plug-in and its requirements (never Scrapy) in a folder of its own, once."""
    target = cache / f"{plugin.name}-{plugin.version}"
    marker = target / ".installed"
    if marker.exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    pip = [sys.executable, "-m", "pip", "install", "-q", "--target", str(target)]
    subprocess.run([*pip, "--no-deps", f"{plugin.name}=={plugin.version}"], check=True)
    if plugin.deps:
        subprocess.run([*pip, *plugin.deps], check=True)
    for name in ("scrapy", "Scrapy"):  # a requirement's own requirement: never kept
        shutil.rmtree(target / name, ignore_errors=True)
    marker.write_text("\n".join(plugin.deps), encoding="utf-8")
    return target


# --------------------------------------------------------------------------- running


@dataclass
class Outcome:
    plugin: Plugin
    loads: bool = False
    works: bool = False
    why: str = ""


def run_spider(
    plugin: Plugin, target: Path, site: Site, work: Path, python: str, env_extra: dict[str, str]
) -> dict[str, Any]:
    """One run of the plug-in's spider under the alias; the child's JSON result."""
    out = work / "result.json"
    out.unlink(missing_ok=True)
    env = {
        **os.environ,
        **env_extra,
        "PYTHONPATH": os.pathsep.join([str(target), str(SPIDERS)]),
        "PLUGIN_SITE": site.url,
        "PLUGIN_PROXIES": " ".join(site.proxies),
        "PLUGIN_WORK": str(work),
        "PLUGIN_OUT": str(out),
    }
    command = [python, "-m", "skitter.scrapy_alias", str(SPIDERS / "_run.py"), plugin.module]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    (work / "log.txt").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if not out.exists():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"loaded": False, "error": tail, "exit": proc.returncode}
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    result["exit"] = proc.returncode
    return result


def try_plugin(plugin: Plugin, cache: Path, site: Site, python: str, verbose: bool) -> Outcome:
    outcome = Outcome(plugin)
    try:
        target = install(plugin, cache)
    except subprocess.CalledProcessError as error:
        outcome.why = f"install failed: {error}"
        return outcome
    work = Path(tempfile.mkdtemp(prefix=f"plugin-{plugin.module}-"))
    env_extra, redis = _services(plugin, work)
    try:
        site.reset()
        runs = [run_spider(plugin, target, site, work, python, env_extra)
                for _ in range(plugin.runs)]
    finally:
        if redis is not None:
            redis.terminate()
            redis.wait(10)
    if verbose:
        print((work / "log.txt").read_text(encoding="utf-8")[-4000:])
    failed = next((r for r in runs if not r.get("loaded")), None)
    if failed is not None:
        outcome.why = f"import: {failed.get('error', '?')}"
        return outcome
    outcome.loads = True
    broken = next((r for r in runs if r.get("error") or r["exit"]), None)
    if broken is not None:
        outcome.why = f"crawl: {broken.get('error') or 'exit ' + str(broken['exit'])}"
        return outcome
    result = runs[0] if plugin.runs == 1 else {"runs": runs}
    why = plugin.check(result, site)
    outcome.works, outcome.why = why is None, why or ""
    if not verbose:
        shutil.rmtree(work, ignore_errors=True)
    return outcome


def _services(plugin: Plugin, work: Path) -> tuple[dict[str, str], subprocess.Popen[bytes] | None]:
    """A redis-server on a free port for scrapy-redis; nothing for the others."""
    if plugin.name != "scrapy-redis":
        return {}, None
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(work)],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(100):  # wait until it accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if server.poll() is not None:
                raise RuntimeError("redis-server did not start") from None
            threading.Event().wait(0.05)
    return {"PLUGIN_REDIS_URL": f"redis://127.0.0.1:{port}/0"}, server


def print_table(outcomes: list[Outcome]) -> None:
    print(f"{'plug-in':24} {'version':8} {'loads':6} {'works':6} why not")
    for o in outcomes:
        print(f"{o.plugin.name:24} {o.plugin.version:8} {'yes' if o.loads else 'no':6} "
              f"{'yes' if o.works else 'no':6} {o.why[:160]}")
    loads = sum(o.loads for o in outcomes)
    works = sum(o.works for o in outcomes)
    print(f"{'total':24} {'':8} {loads:<6} {works:<6} of {len(outcomes)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugin", action="append", default=[],
                        help="run only this plug-in (repeatable)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                        help=f"where the plug-ins are installed (default {DEFAULT_CACHE})")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter with skitter installed (default: this one)")
    parser.add_argument("--min-working", type=int, default=0,
                        help="exit 1 when fewer plug-ins than this work")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print each run's log tail and keep its work folder")
    args = parser.parse_args()
    chosen = [p for p in PLUGINS if not args.plugin or p.name in args.plugin]
    if not chosen:
        parser.error(f"no plug-in named {args.plugin}")
    args.cache.mkdir(parents=True, exist_ok=True)
    site = Site()
    site.start()
    try:
        outcomes = [try_plugin(p, args.cache, site, args.python, args.verbose) for p in chosen]
    finally:
        site.stop()
    print_table(outcomes)
    return 1 if sum(o.works for o in outcomes) < args.min_working else 0


if __name__ == "__main__":
    sys.exit(main())
