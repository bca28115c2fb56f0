"""Items per second into PostgreSQL through a sink, against the JSON-lines feed.

One site, served by an aiohttp process on 127.0.0.1 (a binary tree of ``--pages``
pages, ``--items`` items each), crawled by each variant in a fresh subprocess, runs
interleaved (run 1 of each, then run 2 ...), all in one invocation:

- ``feed``: ``-o items.jsonl`` (the file feed, flushed by the OS's page cache);
- ``postgres``: ``SINKS`` into a fresh table, batched (SINK_BATCH_SIZE 500, each task
  acknowledged once its items are committed);
- ``postgres-batch1``: the same with ``batch_size`` 1, a transaction per item: what
  batching buys (not in the default set: it is some 20 times slower; ``--variants``);
- ``postgres+feed``: both at once.

Every run must write every item (the table is counted), or the benchmark fails. Prints
the median items/s of each and the ratios to the feed::

    PYTHONPATH=src .venv/bin/python benchmarks/sink_bench.py
    PYTHONPATH=src .venv/bin/python benchmarks/sink_bench.py --pages 1000 --runs 1
    PYTHONPATH=src .venv/bin/python benchmarks/sink_bench.py --pages 300 \
        --variants feed,postgres-batch1

``--postgres`` is the server's admin URI (a database is made for the run and dropped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VARIANTS = ("feed", "postgres", "postgres-batch1", "postgres+feed")


def serve(port: int, pages: int, items: int) -> None:
    """The site (in its own process): page n links to 2n+1 and 2n+2 and lists items."""
    from aiohttp import web

    rows = "".join(f'<div class="item"><b>item {i}</b><i>{i * 1.5}</i></div>' for i in range(items))

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        links = "".join(f'<a href="/p/{m}">{m}</a>' for m in (2 * n + 1, 2 * n + 2) if m < pages)
        return web.Response(
            text=f"<html><body>{rows}{links}</body></html>", content_type="text/html"
        )

    app = web.Application()
    app.router.add_get("/p/{n}", page)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def child(variant: str, base: str, database: str, table: str, work: Path) -> dict[str, Any]:
    """One crawl in this process; its items and seconds."""
    from skitter import Spider
    from skitter.crawler import Crawler

    class Bench(Spider):
        name = "bench"
        start_urls = [f"{base}/p/0"]

        def parse(self, response: Any) -> Any:
            page = int(response.url.rsplit("/", 1)[1])
            for n, item in enumerate(response.css("div.item")):
                yield {"page": page, "n": n, "name": item.css("b::text").get(),
                       "price": float(item.css("i::text").get())}  # fmt: skip
            yield from response.follow_all(css="a::attr(href)")

    settings: dict[str, Any] = {"CONCURRENT_REQUESTS": 32, "LOG_LEVEL": "WARNING",
                                "STATS_DUMP": False}  # fmt: skip
    if "feed" in variant:
        settings["FEEDS"] = {str(work / f"{table}.jsonl"): {"format": "jsonl"}}
    if "postgres" in variant:
        options: dict[str, Any] = {"create": True, "key": "page,n"}
        if variant == "postgres-batch1":
            options["batch_size"] = 1
        settings["SINKS"] = {f"{database}?table={table}": options}
    started = time.perf_counter()
    stats = asyncio.run(Crawler(Bench, settings).run())
    return {"items": stats["item_scraped_count"], "seconds": time.perf_counter() - started}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def count(database: str, table: str) -> int:
    import psycopg

    async with await psycopg.AsyncConnection.connect(database) as conn:
        cur = await conn.execute(f'SELECT count(*) FROM "{table}"'.encode())
        row = await cur.fetchone()
    return int(row[0]) if row else 0


async def admin(uri: str, statement: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        await conn.execute(statement.encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres")
    parser.add_argument("--variants", default="feed,postgres,postgres+feed",
                        help=f"a comma-separated choice of {', '.join(VARIANTS)}")  # fmt: skip
    parser.add_argument("--child", nargs=4, metavar=("VARIANT", "BASE", "DB", "TABLE"))
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child, Path(args.work))))
        return
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown or "feed" not in variants:
        raise SystemExit(f"--variants: choose from {', '.join(VARIANTS)}, with feed")
    port = free_port()
    server = multiprocessing.Process(target=serve, args=(port, args.pages, args.items), daemon=True)
    server.start()
    name = f"sink_bench_{secrets.token_hex(4)}"
    database = args.postgres.rsplit("/", 1)[0] + f"/{name}"
    asyncio.run(admin(args.postgres, f'CREATE DATABASE "{name}"'))
    results: dict[str, list[float]] = {v: [] for v in variants}
    try:
        with tempfile.TemporaryDirectory() as work:
            time.sleep(1.0)  # the site's process is listening
            expected = args.pages * args.items
            for run in range(args.runs):
                for variant in variants:
                    table = f"{variant.replace('-', '_').replace('+', '_')}_{run}"
                    out = subprocess.run(
                        [sys.executable, __file__, "--work", work, "--child", variant,
                         f"http://127.0.0.1:{port}", database, table],
                        capture_output=True, text=True,
                    )  # fmt: skip
                    if out.returncode:
                        raise SystemExit(f"{variant} failed:\n{out.stdout}{out.stderr}")
                    result = json.loads(out.stdout.strip().splitlines()[-1])
                    if result["items"] != expected:
                        raise SystemExit(f"{variant}: {result['items']} items, not {expected}")
                    if "postgres" in variant and asyncio.run(count(database, table)) != expected:
                        raise SystemExit(f"{variant}: the table does not hold {expected} rows")
                    results[variant].append(expected / result["seconds"])
                    print(f"run {run + 1} {variant:16} {expected / result['seconds']:8.0f} items/s")
    finally:
        asyncio.run(admin(args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        server.terminate()
    feed = statistics.median(results["feed"])
    print(f"\n{args.pages} pages x {args.items} items, median of {args.runs} runs")
    print(f"{'variant':16} {'items/s':>8} {'vs feed':>8}")
    for variant in variants:
        median = statistics.median(results[variant])
        print(f"{variant:16} {median:8.0f} {median / feed:8.2f}")


if __name__ == "__main__":
    main()
