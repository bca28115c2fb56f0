"""``/metrics`` parses with Prometheus's own parser and says what the crawl did."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from skitter import Crawler
from skitter.dashboard._metrics import label_name, metric_name, render_metrics

from .conftest import eventually, running_crawl, tree_spider


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


async def test_metrics_expose_stats_projects_and_slots(serve: Any) -> None:
    spiders = [tree_spider("alpha", ["/broken/a"]), tree_spider("beta")]
    async with running_crawl(serve, spiders, settings={"RATE": 500}) as run:
        await eventually(lambda: run.crawler.control.monitor.counts()[1] == 1)
        # beta's first response too: its counter exists only once it has one
        await eventually(lambda: run.crawlers[1].stats.get("response_received_count", 0) > 0)
        async with run.http.get(run.url + "metrics") as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = await resp.text()
        found = samples(text)
        alpha = (("project", "alpha"),)
        responses = found[("skitter_response_received_count_total", alpha)]
        assert responses >= 1
        assert found[("skitter_downloader_response_status_count_503_total", alpha)] == 1
        assert ("skitter_response_received_count_total", (("project", "beta"),)) in found
        assert found[("skitter_project_status", (("project", "alpha"), ("status", "running")))]
        assert not found[("skitter_project_status", (("project", "alpha"), ("status", "paused")))]
        assert found[("skitter_project_rate", alpha)] == 500
        assert found[("skitter_project_burst", alpha)] == 5000
        ready = ("skitter_queue_tasks", (("project", "alpha"), ("queue", "ready")))
        assert ready in found
        slot = (("project", "alpha"), ("slot", "127.0.0.1"))
        assert found[("skitter_slot_concurrency", slot)] == 4
        assert ("skitter_slot_in_flight", slot) in found
        assert ("skitter_start_time", alpha) in found  # a value, so a gauge
        # Every family has one TYPE line, however many projects report it.
        types = [line for line in text.splitlines() if line.startswith("# TYPE ")]
        assert len(types) == len(set(types))


async def test_metric_and_label_names_are_sanitized_and_values_escaped() -> None:
    assert metric_name("downloader/response_status_count/200", "_total") == (
        "skitter_downloader_response_status_count_200_total"
    )
    assert metric_name("spider_exceptions/ValueError") == "skitter_spider_exceptions_valueerror"
    assert metric_name("a.b-c d", "_total") == "skitter_a_b_c_d_total"
    assert metric_name("x_total", "_total") == "skitter_x_total"
    assert label_name("9lives") == "_9lives"
    assert label_name("breaker state") == "breaker_state"

    class Weird(tree_spider('we"ird\\\nname')):  # type: ignore[misc]
        pass

    crawler = Crawler(Weird)
    crawler.stats.inc("odd/key with spaces")
    crawler.stats.inc("odd_key_with_spaces")  # the same name once sanitized: first wins
    crawler.stats.set("finish_reason", "not a number")
    text = await render_metrics([crawler.control])
    found = samples(text)
    assert found[("skitter_odd_key_with_spaces_total", (("project", 'we"ird\\\nname'),))] == 1
    assert not any("finish_reason" in name for name, _ in found)
    assert found[("skitter_project_status", (("project", 'we"ird\\\nname'), ("status", "new")))]
