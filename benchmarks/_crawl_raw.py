"""The ceiling: the least a crawler can do, by hand, with aiohttp and parsel.

One ClientSession, N worker tasks on an asyncio.Queue, a ``seen`` set of absolute URLs
(fragments dropped), one parsel Selector per page and the same extraction as the
framework crawlers. No retries, no politeness, no pipelines: what is left is the cost
of HTTP and HTML parsing in Python, which no framework can beat.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from urllib.parse import urldefrag, urljoin

import aiohttp
from _report import Meter, child_args, host_of, run_on
from parsel import Selector


async def crawl(start_url: str, concurrency: int) -> tuple[int, int, Counter[str], Counter[str]]:
    queue: asyncio.Queue[str] = asyncio.Queue()
    seen = {start_url}
    queue.put_nowait(start_url)
    pages = items = 0
    errors: Counter[str] = Counter()
    hosts: Counter[str] = Counter()
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal pages, items
            while True:
                url = await queue.get()
                try:
                    async with session.get(url) as response:
                        text = await response.text()
                        ok = response.status == 200
                    if not ok:
                        errors[f"HTTP {response.status}"] += 1
                        continue
                    pages += 1
                    hosts[host_of(url)] += 1
                    selector = Selector(text=text)
                    for item in selector.css("div.item"):
                        _ = {
                            "name": item.css(".name::text").get(),
                            "price": item.css(".price::text").get(),
                        }
                        items += 1
                    for href in selector.css("a::attr(href)").getall():
                        link = urldefrag(urljoin(url, href))[0]
                        if link not in seen:
                            seen.add(link)
                            queue.put_nowait(link)
                except aiohttp.ClientError as exc:
                    errors[repr(exc)[:120]] += 1
                finally:
                    queue.task_done()

        async with asyncio.TaskGroup() as group:
            workers = [group.create_task(worker()) for _ in range(concurrency)]
            await queue.join()
            for task in workers:
                task.cancel()
    return pages, items, errors, hosts


def main() -> None:
    args = child_args()
    meter = Meter()
    pages, items, errors, hosts = run_on(args.loop, crawl(args.start_url, args.concurrency))
    meter.report(pages, items, hosts=dict(hosts), errors=dict(errors))


if __name__ == "__main__":
    main()
