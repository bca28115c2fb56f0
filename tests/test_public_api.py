"""The public surface is deliberate: this test changes when the API does.

Every package's ``__all__`` is pinned to an explicit list; every name in it exists; and
no public (non-underscore) attribute of a package is left out of it, submodules and
``typing`` helpers aside, so a name cannot become public by accident.
"""

from __future__ import annotations
import __future__

import importlib
import types

import pytest

import skitter

PINNED = {
    "skitter": [
        "CloseSpider",
        "ConfigError",
        "CrawlFailed",
        "Crawler",
        "DropItem",
        "Field",
        "FormRequest",
        "HttpError",
        "IgnoreRequest",
        "Item",
        "Request",
        "Response",
        "RetryLater",
        "Selector",
        "Settings",
        "SkitterError",
        "Spider",
        "__version__",
        "config",
        "crawl",
        "every",
        "run_crawlers",
    ],
    "skitter.cli": [
        "main",
    ],
    "skitter.cluster": [
        "ClusterGate",
        "ClusterJob",
        "ClusterPermits",
        "ControlRecord",
        "FAILED",
        "Heartbeat",
        "JobControl",
        "OutcomeBeat",
        "PermitStore",
        "RedisPoliteness",
        "RedisStats",
        "SUCCEEDED",
        "SlotBeat",
        "StartClaim",
        "Steered",
        "TaskBeat",
        "WorkerPresence",
        "worker_id",
    ],
    "skitter.contracts": ["Contract", "ContractProbe", "ContractsManager"],
    "skitter.contracts.default": [
        "CallbackKeywordArgumentsContract",
        "MetadataContract",
        "ReturnsContract",
        "ScrapesContract",
        "UrlContract",
    ],
    "skitter.dashboard": [
        "Dashboard",
    ],
    "skitter.demo": [
        "DemoSpider",
        "expected_items",
        "make_app",
        "serve_demo_site",
    ],
    "skitter.downloader": [
        "AiohttpTransport",
        "BrowserTransport",
        "ConditionalRecrawlMiddleware",
        "CookiesMiddleware",
        "DOWNLOADER_MIDDLEWARES_BASE",
        "DefaultHeadersMiddleware",
        "DownloadHandler",
        "DownloadResult",
        "Downloader",
        "DownloaderMiddleware",
        "HttpAuthMiddleware",
        "HttpCacheMiddleware",
        "HttpCompressionMiddleware",
        "HttpProxyMiddleware",
        "MetaRefreshMiddleware",
        "OffsiteGuard",
        "OffsiteMiddleware",
        "RedirectMiddleware",
        "Resolver",
        "RetryMiddleware",
        "RobotsTxtMiddleware",
        "ThreadedResolver",
        "Transport",
        "UserAgentMiddleware",
        "compose",
        "parse_retry_after",
        "wants_render",
    ],
    "skitter.downloader.browser": [
        "BrowserTransport",
        "browser_problem",
        "wants_render",
    ],
    "skitter.downloader.middlewares": [
        "ConditionalRecrawlMiddleware",
        "CookiesMiddleware",
        "DefaultHeadersMiddleware",
        "HttpAuthMiddleware",
        "HttpCacheMiddleware",
        "HttpCompressionMiddleware",
        "HttpProxyMiddleware",
        "MetaRefreshMiddleware",
        "OffsiteGuard",
        "OffsiteMiddleware",
        "RedirectMiddleware",
        "RetryMiddleware",
        "RobotsTxtMiddleware",
        "UserAgentMiddleware",
        "parse_retry_after",
    ],
    "skitter.extensions": [],
    "skitter.extensions.httpcache": [
        "CorruptEntry",
        "DummyPolicy",
        "FilesystemCacheStorage",
        "RFC2616Policy",
        "SqliteCacheStorage",
        "build",
        "cache_dir",
        "decode_entry",
        "encode_entry",
        "parse_cache_control",
        "parse_http_date",
        "policy_class",
        "storage_class",
    ],
    "skitter.engine": [
        "ActiveTask",
        "ActivityWindows",
        "Engine",
        "ExtensionManager",
        "Outcome",
        "Probe",
        "Project",
        "ProjectControl",
        "ProjectMonitor",
        "Stats",
        "WindowCounts",
    ],
    "skitter.exceptions": [
        "CallbackError",
        "CloseSpider",
        "CodecError",
        "ConfigError",
        "ConnectError",
        "ConnectionLost",
        "ContractFail",
        "CrawlControl",
        "CrawlFailed",
        "DNSLookupError",
        "DontCloseSpider",
        "DownloadTimeout",
        "DropItem",
        "FatalError",
        "FrontierOutage",
        "FrontierUnavailable",
        "HttpError",
        "IgnoreRequest",
        "InvalidURL",
        "JobStateLost",
        "NotConfigured",
        "RedirectError",
        "RequestError",
        "ResponseTooLarge",
        "RetryLater",
        "SkitterError",
        "StorageError",
        "TCPTimedOutError",
        "TLSCertificateError",
        "TransportError",
        "UnknownCallback",
    ],
    "skitter.frontier": [
        "Frontier",
        "FrontierCounts",
        "JobCounts",
        "JobStore",
        "Lease",
        "MemoryFrontier",
        "MemoryTaskQueue",
        "PushOutcome",
        "ResumeReport",
        "SqliteFrontier",
        "TaskInfo",
        "TaskState",
        "TaskView",
    ],
    "skitter.http": [
        "FormRequest",
        "HtmlResponse",
        "JsonRequest",
        "JsonResponse",
        "Link",
        "LinkResolver",
        "ReferrerPolicies",
        "ReferrerPolicy",
        "Request",
        "Response",
        "SCHEMES",
        "Scope",
        "TextResponse",
        "XmlResponse",
        "canonicalize_url",
        "fingerprint",
        "in_domain",
        "response_class",
        "url_host",
    ],
    "skitter.linkextractors": [
        "IGNORED_EXTENSIONS",
        "LinkExtractor",
        "LxmlLinkExtractor",
    ],
    "skitter.loader": [
        "ItemLoader",
    ],
    "skitter.pipelines": [
        "CsvExporter",
        "FEED_FORMATS",
        "FeedExporter",
        "FeedOptions",
        "ItemExporter",
        "ItemPipeline",
        "ItemPipelineManager",
        "JsonExporter",
        "JsonLinesExporter",
        "RedisPipeline",
        "parse_feeds",
    ],
    "skitter.scheduler": [
        "AutoThrottle",
        "BreakerState",
        "CRAWL_RETRY_DELAYS",
        "CircuitBreaker",
        "FairShare",
        "Gate",
        "LeasePolicy",
        "LocalGate",
        "ProjectScheduler",
        "RateLimits",
        "RetryPolicy",
        "SERVICE_RETRY_DELAYS",
        "SlotPolicies",
        "SlotPolicy",
        "SlotQueues",
        "SlotStats",
        "TokenBucket",
        "own_taskid",
        "slot_by",
        "slot_key",
        "slot_key_function",
    ],
    "skitter.settings": [
        "BrowserSettings",
        "DownloaderSettings",
        "SETTINGS",
        "Setting",
        "Settings",
        "View",
    ],
    "skitter.spider": [
        "DepthMiddleware",
        "HttpErrorMiddleware",
        "OffsiteMiddleware",
        "RefererMiddleware",
        "RequestFilter",
        "SPIDER_MIDDLEWARES_BASE",
        "Spider",
        "SpiderMiddleware",
        "SpiderMiddlewareManager",
        "UrlLengthMiddleware",
        "aiter_output",
        "apply_callback_config",
        "callback_config",
        "config",
        "every",
        "has_config_callbacks",
        "periodic_methods",
    ],
    "skitter.selector": [
        "Selector",
        "SelectorList",
    ],
    "skitter.shell": ["LoopThread", "Shell", "inspect_response"],
    "skitter.signals": [
        "SignalManager",
        "bytes_received",
        "engine_started",
        "engine_stopped",
        "feed_exporter_closed",
        "feed_slot_closed",
        "headers_received",
        "item_dropped",
        "item_error",
        "item_scraped",
        "request_dropped",
        "request_left_downloader",
        "request_reached_downloader",
        "request_scheduled",
        "response_downloaded",
        "response_received",
        "spider_closed",
        "spider_error",
        "spider_idle",
        "spider_opened",
    ],
    "skitter.spidermiddlewares": [],
    "skitter.spidermiddlewares.offsite": [
        "OffsiteMiddleware",
    ],
    "skitter.spidermiddlewares.referer": [
        "DefaultReferrerPolicy",
        "NoReferrerPolicy",
        "NoReferrerWhenDowngradePolicy",
        "OriginPolicy",
        "OriginWhenCrossOriginPolicy",
        "RefererMiddleware",
        "ReferrerPolicy",
        "SameOriginPolicy",
        "StrictOriginPolicy",
        "StrictOriginWhenCrossOriginPolicy",
        "UnsafeUrlPolicy",
    ],
    "skitter.spidermiddlewares.urllength": [
        "UrlLengthMiddleware",
    ],
    "skitter.spidermiddlewares.depth": [
        "DepthMiddleware",
    ],
    "skitter.spidermiddlewares.httperror": [
        "HttpError",
        "HttpErrorMiddleware",
    ],
    "skitter.downloadermiddlewares": [],
    "skitter.downloadermiddlewares.useragent": [
        "UserAgentMiddleware",
    ],
    "skitter.downloadermiddlewares.defaultheaders": [
        "DefaultHeadersMiddleware",
    ],
    "skitter.downloadermiddlewares.httpcompression": [
        "HttpCompressionMiddleware",
    ],
    "skitter.downloadermiddlewares.redirect": [
        "MetaRefreshMiddleware",
        "RedirectMiddleware",
    ],
    "skitter.downloadermiddlewares.cookies": [
        "CookiesMiddleware",
    ],
    "skitter.downloadermiddlewares.httpproxy": [
        "HttpProxyMiddleware",
    ],
    "skitter.downloadermiddlewares.robotstxt": [
        "RobotsTxtMiddleware",
    ],
    "skitter.downloadermiddlewares.offsite": [
        "OffsiteMiddleware",
    ],
    "skitter.downloadermiddlewares.retry": [
        "RetryMiddleware",
        "get_retry_request",
        "retry_logger",
    ],
    "skitter.spiders": [
        "CSVFeedSpider",
        "CrawlSpider",
        "Rule",
        "SitemapSpider",
        "Spider",
        "XMLFeedSpider",
    ],
    "skitter.utils": [],
    "skitter.utils.request": [
        "fingerprint",
        "request_from_dict",
    ],
    "skitter.utils.response": [
        "get_base_url",
        "open_in_browser",
    ],
    "skitter.testing": [
        "DictStats",
        "FakeClock",
        "FullDisk",
        "TestCrawler",
        "serve_app",
    ],
}

#: Imported for annotations only; public-looking, never API.
_TYPING_HELPERS = {"TYPE_CHECKING", "Any"}


def test_top_level_all_is_the_lazy_exports() -> None:
    assert set(skitter.__all__) == {"__version__", *skitter._EXPORTS}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_all_is_pinned(name: str) -> None:
    module = importlib.import_module(name)
    assert sorted(module.__all__) == PINNED[name]
    assert len(set(module.__all__)) == len(module.__all__), "a name listed twice"
    for public in module.__all__:
        assert hasattr(module, public), f"{name}.{public} is in __all__ but missing"


@pytest.mark.parametrize("name", sorted(PINNED))
def test_no_public_name_is_left_out_of_all(name: str) -> None:
    module = importlib.import_module(name)
    stray = [
        attr
        for attr, value in vars(module).items()
        if not attr.startswith("_")
        and attr not in module.__all__
        and attr not in _TYPING_HELPERS
        and not isinstance(value, types.ModuleType | __future__._Feature)
    ]
    assert stray == [], f"{name}: public but not in __all__ (make them private): {stray}"
