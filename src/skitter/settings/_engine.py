"""The engine and the crawl as a whole: concurrency, when to stop, the job's name and home."""

from __future__ import annotations

from skitter.settings._setting import Setting

__all__ = ["GROUP"]

GROUP: list[Setting] = [
    Setting("CONCURRENT_REQUESTS", 16, int, "Downloads in flight at once, over all hosts."),
    Setting(
        "CONCURRENT_ITEMS",
        100,
        int,
        "Items of one response in the item pipelines at once (Scrapy's), when a pipeline "
        "awaits (async def process_item, media); the feeds then get them in the order they "
        "get through, 1 = the order the callback yields them.",
    ),
    Setting(
        "BOT_NAME",
        "skitter",
        str,
        "The project's name (Scrapy's), in the log line each crawl starts with.",
    ),
    Setting(
        "SPIDER_MODULES",
        [],
        list,
        "The modules (and packages, walked) where `skitter crawl NAME` and `skitter list` "
        "find a project's spiders; a spider file run by path needs none.",
    ),
    Setting(
        "COMMANDS_MODULE",
        "",
        str,
        "A package of the project's own commands (one ScrapyCommand subclass per module, "
        "run as `skitter MODULE`); '' = none.",
    ),
    Setting(
        "TEMPLATES_DIR",
        None,
        str,
        "A folder of templates for startproject (project/) and genspider (spiders/), "
        "as Scrapy's; None = skitter's own.",
    ),
    Setting(
        "NEWSPIDER_MODULE",
        "",
        str,
        "The package `skitter genspider` writes new spiders into (default: the first of "
        "SPIDER_MODULES).",
    ),
    Setting(
        "DECLARED_SETTINGS",
        [],
        list,
        "Names of the project's own settings that its code reads outside of the spider and "
        "the components settings name ('API_KEY'; 'MYPROJECT_*' for every name with that "
        "prefix). A name nothing declares is refused at start (see Settings).",
    ),
    Setting(
        "SPIDER_LOADER_WARN_ONLY",
        False,
        bool,
        "A spider module that fails to import is logged and skipped, not an error.",
    ),
    Setting(
        "JOBDIR",
        "",
        str,
        "Keep the crawl's state in this directory, as --job-dir does (Scrapy's name).",
    ),
    Setting(
        "ASYNCIO_EVENT_LOOP",
        "auto",
        str,
        "The event loop the CLI, crawl() and CrawlerProcess start: auto (uvloop when "
        "installed, skitter[speed]), asyncio, or uvloop (Scrapy's uvloop.Loop too). "
        "A crawl awaited in your own loop keeps that loop.",
    ),
    Setting("CLOSESPIDER_ITEMCOUNT", 0, int, "Stop after this many items; 0 = never."),
    Setting("CLOSESPIDER_PAGECOUNT", 0, int, "Stop after this many responses; 0 = never."),
    Setting("CLOSESPIDER_ERRORCOUNT", 0, int, "Stop after this many errors; 0 = never."),
    Setting("CLOSESPIDER_TIMEOUT", 0.0, float, "Stop after this many seconds; 0 = never."),
    Setting(
        "FAIL_WHEN_NO_START_SUCCEEDS",
        True,
        bool,
        "A crawl that ends with not one start request answered by a response the spider "
        "accepted (every one unreachable, refused, 404...; a failure the request's errback "
        "handles counts as handled) fails: exit 1. A WARNING names them and their causes "
        "either way; False ends such a crawl as finished.",
    ),
    Setting(
        "SHUTDOWN_TIMEOUT",
        30.0,
        float,
        "After the first Ctrl-C, seconds in-flight requests may take before they are cut.",
    ),
]
