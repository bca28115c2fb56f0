"""The item pipeline contract (Scrapy's hooks), apart from the manager that runs it.

Every hook is optional, as in Scrapy, so ``ItemPipeline`` has no required members; the
manager (``_manager``) looks each up once and calls it plain or awaited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["ItemHook", "ItemPipeline", "SpiderHook"]

#: ``open_spider(spider)`` / ``close_spider(spider)``; may be async.
SpiderHook = Callable[[Any], Any]
#: ``process_item(item, spider)``: the item (changed or replaced), or raise ``DropItem``;
#: may be async.
ItemHook = Callable[[Any, Any], Any]


class ItemPipeline(Protocol):
    """An item pipeline: each item passes every pipeline in order, then the feeds.

    The contract, per optional hook (sync or async):

    - ``open_spider(spider)``: once, before the first item; an exception fails the
      crawl's start.
    - ``process_item(item, spider)``: return the item (possibly changed or replaced) to
      pass it on; raise ``DropItem`` to stop it (counted), ``CloseSpider`` to end the
      crawl gracefully; a ``FatalError`` fails the crawl. Any other exception is this
      pipeline's bug: logged and counted, the item stops, the crawl goes on. Returning
      None is a forgotten ``return item``: the item goes on, with a warning.
    - ``close_spider(spider)``: once, at the end, also after a failure or Ctrl-C.
    - ``from_crawler(crawler)`` (a classmethod), if defined, builds the pipeline with
      the crawl's settings and stats; raising ``NotConfigured`` leaves it out.
    """
