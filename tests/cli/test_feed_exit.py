"""The exit status of a crawl whose feed cannot hold an item (issue 27): non-zero, with
the feed and field named, where it used to be 0 with a feed one item short; and an XML
feed of text with control characters is a readable file of every item."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

from .conftest import Cli

SPIDER = """
from decimal import Decimal
from skitter import Spider

class Items(Spider):
    name = "items"

    async def start(self):
        yield {"n": 1, "text": "page one\\x0cpage two"}
        yield {"n": 2, "price": Decimal("1.5"), "text": "\\x1b[0m"}
        yield {"n": 3, "text": "last"}
"""


async def test_the_exit_status_says_whether_every_item_is_in_the_feed(
    cli: Cli, tmp_path: Path
) -> None:
    """End to end, as a user runs it: XML with control characters is a readable file
    of every item, exit 0; marshal of a Decimal fails the run, exit non-zero, with the
    feed and field named, where it used to exit 0 with two items of three."""
    spider = tmp_path / "items.py"
    spider.write_text(SPIDER)
    run = await cli("crawl", str(spider), "-O", "out.xml", "--no-progress")
    assert run.code == 0, run.err
    root = ElementTree.fromstring((tmp_path / "out.xml").read_bytes())
    assert [item.findtext("n") for item in root] == ["1", "2", "3"]
    assert json.loads(root[0].findtext("text") or "") == "page one\x0cpage two"
    feeds = json.dumps({"out.marshal": {"format": "marshal"}})
    run = await cli("crawl", str(spider), "-s", f"FEEDS={feeds}", "--no-progress")
    assert run.code != 0
    assert "feed 'out.marshal': cannot write a dict item as marshal, field 'price'" in run.err
