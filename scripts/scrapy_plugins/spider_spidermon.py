"""spidermon: a close-monitor suite (its getting-started way); an action records results."""

import json
import os

from _common import WORK, ProductSpider, base_settings
from spidermon import Monitor, MonitorSuite, monitors
from spidermon.core.actions import Action

Spider = ProductSpider  # the runner's name for the spider to run

RESULTS = os.path.join(WORK, "monitors.json")


@monitors.name("Item count")
class ItemCountMonitor(Monitor):
    @monitors.name("At least four items")
    def test_item_count(self):
        scraped = getattr(self.data.stats, "item_scraped_count", 0)
        self.assertGreaterEqual(scraped, 4, msg="fewer than four items")  # noqa: PT009


@monitors.name("Prices")
class PriceMonitor(Monitor):
    @monitors.name("Every item has a price")
    def test_all_have_price(self):
        scraped = getattr(self.data.stats, "item_scraped_count", 0)
        priced = self.data.stats.get("custom/priced_items", 0)
        self.assertEqual(priced, scraped, msg=f"{priced} of {scraped} priced")  # noqa: PT009


class RecordResults(Action):
    """Writes which monitor passed and which failed, for the runner to check."""

    def run_action(self):
        def name(result):
            return getattr(result.monitor, "_testMethodName", str(result.monitor))

        results = {name(r): "passed" for r in self.result.monitors_passed_results}
        results.update({name(r): "failed" for r in self.result.monitors_failed_results})
        with open(RESULTS, "w", encoding="utf-8") as out:
            json.dump(results, out)


class SpiderCloseMonitorSuite(MonitorSuite):
    monitors = [ItemCountMonitor, PriceMonitor]
    monitors_finished_actions = [RecordResults]


class PricedItems:
    """A pipeline counting the items with a price, for the price monitor."""

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_item(self, item, spider):
        if item.get("price"):
            self.stats.inc_value("custom/priced_items")
        return item


def settings():
    return base_settings(
        SPIDERMON_ENABLED=True,
        EXTENSIONS={"spidermon.contrib.scrapy.extensions.Spidermon": 500},
        ITEM_PIPELINES={"spider_spidermon.PricedItems": 100},
        SPIDERMON_SPIDER_CLOSE_MONITORS=("spider_spidermon.SpiderCloseMonitorSuite",),
    )


def report(crawler):
    if not os.path.exists(RESULTS):
        return {"monitors": None}
    with open(RESULTS, encoding="utf-8") as handle:
        return {"monitors": json.load(handle)}
