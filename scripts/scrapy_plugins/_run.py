"""Run one plug-in's spider (``spider_<module>.py`` here) and write what happened as JSON.

Plain Scrapy code: ``scripts/scrapy_plugins.py`` runs it under ``python -m
skitter.scrapy_alias``. A spider module gives ``Spider``, ``settings()`` and, if it has
more to say than the items and stats, ``report(crawler)``.
"""

import importlib
import json
import os
import sys
import traceback


def _write(result):
    with open(os.environ["PLUGIN_OUT"], "w", encoding="utf-8") as out:
        json.dump(result, out, default=str)


def main(name):
    try:
        module = importlib.import_module(f"spider_{name}")
    except Exception as error:  # the plug-in (or what it imports) did not load
        traceback.print_exc()
        _write({"loaded": False, "error": f"{type(error).__name__}: {error}"})
        return
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    items = []

    def collect(item, **kwargs):
        items.append(dict(item))

    result = {"loaded": True, "items": items, "stats": {}}
    try:
        process = CrawlerProcess(module.settings())
        crawler = process.create_crawler(module.Spider)
        crawler.signals.connect(collect, signal=signals.item_scraped)
        process.crawl(crawler)
        process.start()
        result["stats"] = dict(crawler.stats.get_stats())
        failures = getattr(process, "failures", None)
        if failures:
            result["error"] = f"{type(failures[0]).__name__}: {failures[0]}"
        if hasattr(module, "report"):
            result.update(module.report(crawler))
    except Exception as error:
        traceback.print_exc()
        result["error"] = f"{type(error).__name__}: {error}"
    _write(result)


if __name__ == "__main__":
    main(sys.argv[1])
