"""What each corpus spider must scrape, computed from the practice site's data set (never
copied from a crawl's output): one ``Case`` per file in ``spiders/``.

``items(data, base)`` is the expected item list (compared as a multiset: every item,
as often as expected); ``args`` are the spider arguments besides ``base_url``;
``stats`` are statistics the spider's own components must have set; ``needs`` names
what the spider needs that skitter does not do yet (the test is then a strict xfail);
``scrapy_differs`` says why Scrapy itself scrapes something else, when it does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skitter.testing._practice import PracticeData

from ._expect_components import (
    busy,
    errback,
    extension,
    extension_stats,
    pipelines,
    retry_meta,
    signal_counts,
    signal_counts_stats,
    signals,
)
from ._expect_feeds import (
    authors_csv,
    quotes_csv,
    rss,
    rss_dc,
    selector,
    sitemap_alternates,
    sitemap_filter,
    sitemap_robots,
)
from ._expect_forms import (
    css_login,
    json_search,
    login,
    response_types,
    scroll,
    token_login,
    viewstate,
)
from ._expect_pages import (
    Items,
    async_start,
    authors,
    authors_crawl,
    broken_links,
    by_tag,
    declared_items,
    depth,
    link_options,
    loader,
    middlewares,
    pager,
    polite,
    quote_author,
    script_quotes,
    serializer,
    status_404,
    tag_links,
    tags_crawl,
    tutorial,
    whole_site,
    xpath,
)


@dataclass(frozen=True)
class Case:
    items: Callable[[PracticeData, str], Items]
    args: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    needs: str | None = None
    scrapy_differs: str = ""


CASES: dict[str, Case] = {
    "quotes_tutorial": Case(tutorial),
    "authors_follow_all": Case(authors),
    "quotes_async_start": Case(async_start),
    "quotes_by_tag": Case(
        by_tag("humor"),
        args={"tag": "humor"},
        scrapy_differs="Scrapy 2.19 no longer calls start_requests() (skitter does)",
    ),
    "quotes_with_authors": Case(quote_author),
    "quotes_xpath": Case(xpath),
    "quotes_pager_links": Case(pager),
    "quotes_depth_limit": Case(depth),
    "quotes_status_404": Case(status_404),
    "robots_obey": Case(polite),
    "api_scroll": Case(scroll),
    "whole_site": Case(whole_site),
    "script_crawler_process": Case(script_quotes),
    "middlewares_custom": Case(middlewares),
    "quotes_items": Case(declared_items),
    "quotes_loader": Case(loader),
    "crawl_authors": Case(authors_crawl),
    "crawl_tags": Case(tags_crawl),
    "crawl_errback": Case(broken_links),
    "link_extractor_tags": Case(tag_links),
    "sitemap_robots": Case(sitemap_robots),
    "sitemap_filter": Case(sitemap_filter),
    "sitemap_alternates": Case(sitemap_alternates),
    "xml_feed": Case(rss),
    "xml_feed_namespaces": Case(rss_dc),
    "selector_xml": Case(selector),
    "csv_feed": Case(quotes_csv),
    "csv_feed_headers": Case(authors_csv),
    "login": Case(login),
    "login_formrequest": Case(token_login),
    "login_formcss": Case(css_login),
    "link_extractor_options": Case(link_options),
    "item_serializer": Case(serializer),
    "viewstate_search": Case(viewstate),
    "api_json_request": Case(json_search),
    "response_types": Case(response_types),
    "errback_httperror": Case(errback),
    "retry_busy": Case(busy),
    "retry_meta": Case(
        retry_meta,
        # default: 2 retries, then gives up; once: 1, then gives up; never: none
        stats={"retry/count": 3, "retry/max_reached": 2},
    ),
    "pipelines_from_crawler": Case(pipelines),
    "extension_signals": Case(extension, stats=extension_stats()),
    "extension_signal_counts": Case(signal_counts, stats=signal_counts_stats()),
    "spider_signals": Case(signals, stats={"signals/responses": 2}),
}
