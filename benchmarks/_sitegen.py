"""A synthetic static site for the crawl benchmark, written to a directory from a seed.

Page ``i`` lives at ``/p/<i // 1000>/<i>.html`` (zero-padded) and holds 2-6
``<div class="item">`` blocks (a name and a price) and ``links`` links (15 unless
told): the next page (so every page is reachable from page 0), random pages other than
page 0 (start URLs bypass Scrapy's and skitter's dupe filters, so a link back to the
start page would be crawled twice; 11 of 15), and repeats (a fifth: 3 of 15, 5 of 27)
of those written another way (relative, ``./``, ``../``, root-relative, with a
``#fragment``), so a crawler's URL joining and dupe filter do real work. Filler
paragraphs bring each page to a size drawn between 5 and 15 KB.

A multi-host site is the same site spread over ``ports`` of 127.0.0.1 (a host is a
port, since only loopback is used): page ``i`` lives on ``ports[i % len(ports)]`` and
every link is absolute, ``http://<name>:<port>/p/...``, to the target page's own
port, plain or with a ``#fragment``. Every page keeps one canonical URL, so a crawl
that fetched a page through the wrong port would count it twice. The links, items and
sizes do not depend on the number of ports (all ports have five digits), so a 1-port
and an 8-port site differ only in where the pages live.

The name in the links is ``127.0.0.1`` unless ``names`` says otherwise: port ``k``'s
pages are linked as ``names[k % len(names)]``. That is for what tells hosts apart by
name and not by port, as the Redis frontier's shards do (``redis_bench.py --shards``):
``("127.0.0.1", "localhost")`` makes a two-port site two host names, both served by
the nginx on 127.0.0.1 (``localhost`` resolves there through ``/etc/hosts``). Every
name must have as many characters as ``127.0.0.1``, so the names change no page's size.

The same seed, page count and ports always give the same bytes; ``manifest.json``
records what a complete crawl must find.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from html import escape
from pathlib import Path

__all__ = ["DEFAULT_NAME", "Manifest", "generate_site", "load_manifest"]

LINKS = 15
"""Links per page by default: the next page, 11 random pages, 3 repeats."""
MIN_SIZE, MAX_SIZE = 5_000, 15_000
_VOCABULARY = (
    "crawler spider request response scheduler frontier queue priority slot domain "
    "politeness robots retry backoff timeout redirect cookie header body encoding "
    "selector parse follow item pipeline export feed json csv lease ack redis bloom "
    "filter fingerprint canonical url query fragment asyncio task group semaphore "
    "throttle bucket token burst rate window fair share breaker circuit recrawl age"
)
_WORDS = _VOCABULARY.split()
DEFAULT_NAME = "127.0.0.1"


@dataclass(frozen=True)
class Manifest:
    """What a complete crawl of a generated site finds."""

    pages: int
    items: int
    links: int
    bytes: int
    seed: int
    start_path: str
    ports: tuple[int, ...] = ()
    """The ports of a multi-host site (absolute links); empty for the relative site."""
    names: tuple[str, ...] = (DEFAULT_NAME,)
    """The host names the links of a multi-host site use, port ``k`` the ``k % len``-th."""
    links_per_page: int = LINKS
    """The links on a page (the last page has one fewer: no next page)."""

    @property
    def hosts(self) -> int:
        return max(1, len(self.ports))

    def origin(self, k: int) -> str:
        """``http://<name>:<port>`` of port ``k`` of a multi-host site, as links name it."""
        return f"http://{self.names[k % len(self.names)]}:{self.ports[k]}"

    def pages_per_host(self) -> list[int]:
        """How many pages live on each port, in the order of ``ports``."""
        return [len(range(k, self.pages, self.hosts)) for k in range(self.hosts)]


def _path(i: int, width: int) -> tuple[str, str]:
    bucket = f"{i // 1000:03d}"
    return bucket, f"{i:0{width}d}.html"


def _href(src: int, dst: int, width: int, style: int, origins: Sequence[str]) -> str:
    """A link from page ``src`` to page ``dst``, written in one of five equivalent ways
    (absolute, to the target's origin, with or without a fragment on a multi-host site)."""
    src_bucket, _ = _path(src, width)
    bucket, name = _path(dst, width)
    if origins:
        url = f"{origins[dst % len(origins)]}/p/{bucket}/{name}"
        return url + ("", "", "", "#reviews", "#top")[style]
    if style == 0:
        return f"/p/{bucket}/{name}"
    if style == 1:
        return name if bucket == src_bucket else f"../{bucket}/{name}"
    if style == 2:
        return f"./{name}" if bucket == src_bucket else f"/p/{bucket}/{name}"
    if style == 3:
        return f"../{bucket}/{name}#reviews"
    return f"/p/{bucket}/{name}#top"


def _paragraphs(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(40, 90))]
        out.append(f"<p>{' '.join(words).capitalize()}.</p>\n")
    return out


def link_mix(links: int) -> tuple[int, int]:
    """(random targets, repeats) for ``links`` links a page: besides the next page, a
    fifth of the links repeat a target written another way, the rest are random pages.
    15 gives the default 11 and 3; every count keeps about one new page per page, so
    nearly all links are duplicates whatever their number."""
    repeated = links // 5
    return links - 1 - repeated, repeated


def _page(
    rng: random.Random,
    i: int,
    n: int,
    width: int,
    filler: list[str],
    origins: Sequence[str],
    links: int = LINKS,
) -> tuple[str, int, int]:
    randoms, repeats = link_mix(links)
    targets = [rng.randrange(1, n) for _ in range(randoms)]
    if i + 1 < n:
        targets.insert(0, i + 1)
    hrefs = [_href(i, t, width, rng.randrange(5), origins) for t in targets]
    hrefs += [
        _href(i, rng.choice(targets), width, rng.randrange(5), origins) for _ in range(repeats)
    ]
    rng.shuffle(hrefs)
    nav = "".join(
        f'<li><a href="{escape(h)}">Page {h.rsplit("/", 1)[-1]}</a></li>\n' for h in hrefs
    )
    item_count = rng.randint(2, 6)
    items = "".join(
        f'<div class="item"><h3 class="name">Widget {i}-{k}</h3>'
        f'<span class="price">{rng.randrange(100, 100_000) / 100:.2f}</span></div>\n'
        for k in range(item_count)
    )
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Page {i}</title></head>\n<body>\n<h1>Page {i}</h1>\n"
        f'<nav><ul class="links">\n{nav}</ul></nav>\n<main>\n{items}'
    )
    target = rng.randint(MIN_SIZE, MAX_SIZE)
    body = [head]
    size = len(head)
    while size < target:
        para = rng.choice(filler)
        body.append(para)
        size += len(para)
    body.append("</main>\n</body></html>\n")
    return "".join(body), item_count, len(hrefs)


def generate_site(
    root: Path,
    pages: int,
    seed: int = 1,
    ports: Sequence[int] = (),
    names: Sequence[str] = (DEFAULT_NAME,),
    links: int = LINKS,
) -> Manifest:
    """Write a ``pages``-page site under ``root`` (created if needed) and its manifest:
    with relative links, or spread over ``ports`` with absolute links naming ``names``."""
    if any(not 10_000 <= port <= 65_535 for port in ports):
        # Five-digit ports keep every page's size the same whatever the ports are.
        raise ValueError(f"site ports must have five digits, got {list(ports)}")
    if not names or any(len(name) != len(DEFAULT_NAME) for name in names):
        # As the five digits: names as long as 127.0.0.1 keep the pages' sizes.
        raise ValueError(
            f"site host names must have {len(DEFAULT_NAME)} characters each, got {list(names)}"
        )
    if links < 2:
        raise ValueError(f"a page needs 2 links or more (the next page, another), got {links}")
    if len(names) > 1 and not ports:
        raise ValueError("host names are for a multi-host site: give its ports too")
    shape = Manifest(pages, 0, 0, 0, seed, "", tuple(ports), tuple(names), links)
    origins = [shape.origin(k) for k in range(len(ports))]
    rng = random.Random(seed)
    width = max(5, len(str(pages - 1)))
    filler = _paragraphs(rng, 300)
    items = link_total = total = 0
    for i in range(pages):
        html, item_count, link_count = _page(rng, i, pages, width, filler, origins, links)
        bucket, name = _path(i, width)
        directory = root / "p" / bucket
        if i % 1000 == 0:
            directory.mkdir(parents=True, exist_ok=True)
        data = html.encode()
        (directory / name).write_bytes(data)
        items += item_count
        link_total += link_count
        total += len(data)
    bucket, name = _path(0, width)
    manifest = replace(
        shape, items=items, links=link_total, bytes=total, start_path=f"/p/{bucket}/{name}"
    )
    (root / "manifest.json").write_text(json.dumps(asdict(manifest), indent=2))
    return manifest


def load_manifest(root: Path) -> Manifest | None:
    """The manifest of a site generated earlier under ``root``, if there is one."""
    try:
        fields = json.loads((root / "manifest.json").read_text())
        fields["ports"] = tuple(fields.get("ports", ()))
        fields["names"] = tuple(fields.get("names", (DEFAULT_NAME,)))
        return Manifest(**fields)
    except (OSError, ValueError, TypeError, AttributeError):
        return None
