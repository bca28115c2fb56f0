"""The public surface is deliberate: this test changes when the API does."""

import skitter


def test_all_is_pinned() -> None:
    assert sorted(skitter.__all__) == sorted(
        [
            "CloseSpider",
            "ConfigError",
            "CrawlFailed",
            "Crawler",
            "DropItem",
            "HttpError",
            "IgnoreRequest",
            "Request",
            "Response",
            "RetryLater",
            "Settings",
            "SkitterError",
            "Spider",
            "__version__",
            "config",
            "crawl",
            "every",
            "run_crawlers",
        ]
    )
    assert set(skitter.__all__) == {"__version__", *skitter._EXPORTS}
    for name in skitter.__all__:
        assert hasattr(skitter, name), name
