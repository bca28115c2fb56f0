"""``skitter parse`` and ``skitter check`` as subprocesses against a local site, and a
project laid out as Scrapy's whose spiders crawl and whose contracts pass."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

Cli = Any  # the ``cli`` fixture (tests/cli/conftest.py)


def _site() -> web.Application:
    """/cat/N lists products /item/N-1 (twice) and /item/N-2 and links the next category."""

    async def category(request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        links = f'<a class="item" href="/item/{n}-1">1</a><a class="item" href="/item/{n}-2">2</a>'
        links += f'<a class="item" href="/item/{n}-1">1 again</a>'
        links += f'<a class="next" href="/cat/{n + 1}">next</a>'
        return web.Response(text=f"<html><h1>Cat {n}</h1>{links}</html>", content_type="text/html")

    async def item(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        body = f'<html><h1>Item {name}</h1><span class="price">{len(name)}</span></html>'
        return web.Response(text=body, content_type="text/html")

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="gone")

    app = web.Application()
    app.router.add_get("/cat/{n}", category)
    app.router.add_get("/item/{name}", item)
    app.router.add_get("/missing", missing)
    return app


@pytest.fixture
async def base(serve: Any) -> str:
    return str(await serve(_site()))


SHOP = """
from skitter import Spider
from skitter.linkextractors import LinkExtractor
from skitter.spiders import CrawlSpider, Rule


class Shop(Spider):
    name = "shop"
    allowed_domains = ["127.0.0.1"]

    def parse(self, response, tag="none"):
        yield {"category": response.css("h1::text").get(), "tag": tag,
               "flag": response.meta.get("flag")}
        yield from response.follow_all(css="a.item", callback=self.parse_item)

    def parse_item(self, response):
        yield {"name": response.css("h1::text").get(),
               "price": int(response.css(".price::text").get())}


class RuleShop(CrawlSpider):
    name = "ruleshop"
    rules = [
        Rule(LinkExtractor(allow=r"/item/"), callback="parse_item"),
        Rule(LinkExtractor(allow=r"/cat/")),
    ]

    def parse_item(self, response):
        yield {"rule_item": response.css("h1::text").get()}
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop.py").write_text(textwrap.dedent(SHOP))
    return tmp_path / "shop.py"


async def test_parse_prints_items_and_requests_of_each_level(
    cli: Cli, base: str, shop: Path
) -> None:
    run = await cli("parse", "--nolog", "--spider", f"{shop}:Shop", "-d", "2", base + "/cat/1")
    assert run.code == 0, run.err
    head, items, requests = run.out.split("# ")
    assert head == "\n>>> STATUS DEPTH LEVEL 2 <<<\n"
    assert items.startswith("Scraped Items  " + "-" * 60)
    found = [line.strip(" [],") for line in items.splitlines()[1:]]
    assert "{'category': 'Cat 1', 'flag': None, 'tag': 'none'}" in found[0]
    assert "'name': 'Item 1-1', 'price': 3" in items and "'name': 'Item 1-2'" in items
    assert items.count("Item 1-1") == 1  # linked twice, downloaded and parsed once
    assert requests.startswith("Requests  " + "-" * 65)
    assert "[]" in requests  # the item pages link nowhere: level 2 yields no requests


async def test_parse_verbose_prints_level_by_level(cli: Cli, base: str, shop: Path) -> None:
    run = await cli(
        "parse", "--nolog", "--spider", f"{shop}:Shop", "-d", "2", "-v", base + "/cat/3"
    )
    assert run.code == 0, run.err
    level1, level2 = run.out.split(">>> DEPTH LEVEL: 2 <<<")
    assert ">>> DEPTH LEVEL: 1 <<<" in level1
    assert f"<GET {base}/item/3-1>" in level1 and f"<GET {base}/cat/4>" not in level1
    assert "'category': 'Cat 3'" in level1 and "Item 3-1" not in level1
    assert "Item 3-1" in level2 and "Item 3-2" in level2


async def test_parse_callback_meta_and_cbkwargs(cli: Cli, base: str, shop: Path) -> None:
    run = await cli(
        "parse", "--nolog", "--spider", f"{shop}:Shop", "--meta", '{"flag": 5}',
        "--cbkwargs", '{"tag": "cli"}', "--nolinks", base + "/cat/2",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "'flag': 5" in run.out and "'tag': 'cli'" in run.out
    assert "# Requests" not in run.out
    run = await cli("parse", "--nolog", "--spider", f"{shop}:Shop", "-c", "parse_item",
                    "--noitems", base + "/item/x")  # fmt: skip
    assert run.code == 0, run.err
    assert "# Scraped Items" not in run.out and "# Requests" in run.out


async def test_parse_rules_pick_the_matching_rules_callback(
    cli: Cli, base: str, shop: Path
) -> None:
    run = await cli("parse", "--nolog", "--spider", f"{shop}:RuleShop", "--rules", base + "/item/7")
    assert run.code == 0, run.err
    assert "{'rule_item': 'Item 7'}" in run.out


async def test_parse_pipelines_and_output(cli: Cli, base: str, shop: Path, tmp_path: Path) -> None:
    pipeline = tmp_path / "marking.py"
    pipeline.write_text(
        "class Mark:\n    def process_item(self, item, spider):\n"
        "        return {**item, 'marked': True}\n"
    )
    args = ["parse", "--nolog", "--spider", f"{shop}:Shop", "-c", "parse_item", base + "/item/ab"]
    settings = ["-s", 'ITEM_PIPELINES={"marking.Mark": 100}']
    run = await cli(*args, *settings, "-O", "plain.jsonl")
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "plain.jsonl").read_text()) == {"name": "Item ab", "price": 2}
    run = await cli(*args, *settings, "--pipelines", "-O", "piped.jsonl")
    assert run.code == 0, run.err
    assert json.loads((tmp_path / "piped.jsonl").read_text())["marked"] is True


async def test_parse_exit_codes(cli: Cli, base: str, shop: Path) -> None:
    spider = ["--spider", f"{shop}:Shop"]
    run = await cli("parse", *spider, "--meta", "{oops", base + "/cat/1")
    assert run.code == 2 and "--meta takes a JSON object" in run.err
    run = await cli("parse", *spider, "-c", "nonesuch", base + "/cat/1")
    assert run.code == 2 and "Cannot find callback 'nonesuch'" in run.err
    run = await cli("parse", *spider, base + "/missing")
    assert run.code == 1 and "HTTP status code is not handled" in run.err
    run = await cli("parse", *spider, base.replace("127.0.0.1", "localhost") + "/cat/1")
    assert run.code == 1 and "No response downloaded" in run.err


CONTRACTS = """
from skitter import Spider
from skitter.contracts import Contract
from skitter.exceptions import ContractFail


class PriceIsPositive(Contract):
    name = "positive_price"

    def post_process(self, output):
        for item in output:
            if item.get("price", 1) <= 0:
                raise ContractFail("price is not positive")


class Checked(Spider):
    name = "checked"
    start_urls = ["{base}/cat/1"]
    custom_settings = {{"SPIDER_CONTRACTS": {{PriceIsPositive: 10}}}}

    def parse(self, response):
        \"\"\"
        @url {base}/cat/1
        @returns items 1 1
        @returns requests 3 3
        @scrapes category
        \"\"\"
        yield {{"category": response.css("h1::text").get()}}
        yield from response.follow_all(css="a.item")

    def parse_item(self, response):
        \"\"\"
        @url {base}/item/{item}
        @returns items 1
        @scrapes name price
        @positive_price
        \"\"\"
        price = int(response.css(".price::text").get()) - {discount}
        yield {{"name": response.css("h1::text").get(), "price": price}}
"""


def _contracts(tmp_path: Path, base: str, item: str = "abc", discount: int = 0) -> Path:
    path = tmp_path / "checked.py"
    path.write_text(textwrap.dedent(CONTRACTS.format(base=base, item=item, discount=discount)))
    return path


async def test_check_passes(cli: Cli, base: str, tmp_path: Path) -> None:
    run = await cli("check", str(_contracts(tmp_path, base)))
    assert run.code == 0, run.err
    assert "Ran 6 contracts in " in run.err
    assert run.err.rstrip().endswith("OK")


async def test_check_fails_with_scrapys_report(cli: Cli, base: str, tmp_path: Path) -> None:
    run = await cli("check", str(_contracts(tmp_path, base, discount=10)), "-v")
    assert run.code == 1
    assert "[checked] parse (@returns post-hook) ... ok" in run.err
    assert "FAIL: [checked] parse_item (@positive_price post-hook)" in run.err
    assert "ContractFail: price is not positive" in run.err
    assert run.err.rstrip().endswith("FAILED (failures=1)")
    run = await cli("check", str(_contracts(tmp_path, base, item="../missing")))
    assert run.code == 1
    assert "ERROR: [checked] parse_item (errback)" in run.err
    assert run.err.rstrip().endswith("FAILED (errors=1)")


async def test_check_list(cli: Cli, base: str, tmp_path: Path) -> None:
    run = await cli("check", "-l", str(_contracts(tmp_path, base)))
    assert (run.code, run.out) == (0, "checked\n  * parse\n  * parse_item\n")


async def test_check_reports_a_spider_that_cannot_start(
    cli: Cli, base: str, tmp_path: Path
) -> None:
    path = _contracts(tmp_path, base)
    path.write_text(
        path.read_text() + "\n    def __init__(self, *a, **kw):\n        raise OSError('no')\n"
    )
    run = await cli("check", str(path))
    assert run.code == 1
    assert "ERROR: [checked] crawl" in run.err and "OSError: no" in run.err
    run = await cli(
        "check", str(_contracts(tmp_path, base)), "-s", 'SPIDER_CONTRACTS={"json.JSONDecoder": 1}'
    )
    assert run.code == 2 and "not a Contract subclass" in " ".join(run.err.split())


PROJECT = {
    "scrapy.cfg": "[settings]\ndefault = shopping.settings\n",
    "shopping/__init__.py": "",
    "shopping/settings.py": (
        'BOT_NAME = "shopping"\nITEM_PIPELINES = {"shopping.pipelines.Tag": 300}\n'
        'SPIDER_MODULES = ["shopping.spiders"]\n'
    ),
    "shopping/pipelines.py": (
        "class Tag:\n    def process_item(self, item, spider):\n"
        "        return {**item, 'bot': spider.settings['BOT_NAME']}\n"
    ),
    "shopping/spiders/__init__.py": "",
}


async def test_a_projects_spiders_crawl_and_their_contracts_pass(
    cli: Cli, base: str, tmp_path: Path
) -> None:
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    spider = _contracts(tmp_path, base)
    spider.rename(tmp_path / "shopping/spiders/checked.py")
    spiders = str(tmp_path / "shopping/spiders")
    run = await cli("check", spiders)
    assert run.code == 0, run.err
    assert "Ran 6 contracts" in run.err
    run = await cli("crawl", spiders, "-O", "items.jsonl", "--no-progress")
    assert run.code == 0, run.err
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert {"category": "Cat 1", "bot": "shopping"} in items
    run = await cli("parse", "--nolog", "--spider", f"{spiders}/checked.py", "--pipelines",
                    "-c", "parse_item", "-O", "parsed.jsonl", base + "/item/q")  # fmt: skip
    assert run.code == 0, run.err
    parsed = json.loads((tmp_path / "parsed.jsonl").read_text())
    assert parsed == {"name": "Item q", "price": 1, "bot": "shopping"}


async def test_one_shot_commands_find_a_projects_spider_by_name(
    cli: Cli, base: str, tmp_path: Path
) -> None:
    for name, text in PROJECT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    _contracts(tmp_path, base).rename(tmp_path / "shopping/spiders/checked.py")
    run = await cli("check")  # no name: every spider of the project
    assert run.code == 0, run.err
    assert "Ran 6 contracts" in run.err
    run = await cli("check", "checked")
    assert run.code == 0, run.err
    run = await cli("parse", "--nolog", "--spider", "checked", "--pipelines",
                    "-c", "parse_item", "-O", "parsed.jsonl", base + "/item/q")  # fmt: skip
    assert run.code == 0, run.err
    parsed = json.loads((tmp_path / "parsed.jsonl").read_text())
    assert parsed == {"name": "Item q", "price": 1, "bot": "shopping"}
    run = await cli("fetch", "--nolog", "--spider", "nonesuch", base + "/item/q")
    assert run.code == 2
    assert "checked" in run.err  # the names there are
