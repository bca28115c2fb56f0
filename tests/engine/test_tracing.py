"""OpenTelemetry traces (TRACING_ENABLED): a span per task and a child span per
callback arrive at the SDK's in-memory exporter with the slot, status, retries and
transport, timed on the crawl's clock; the console exporter prints them; and a crawl
without tracing never imports OpenTelemetry."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from skitter import ConfigError, Crawler, Request, Spider
from skitter.engine import ProjectMonitor
from skitter.testing import virtual_clock

SRC = str(Path(__file__).resolve().parents[2] / "src")


def site() -> web.Application:
    hits: dict[str, int] = {}

    async def page(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        hits[name] = hits.get(name, 0) + 1
        await asyncio.sleep(2)  # virtual seconds
        if name == "flaky" and hits[name] == 1:
            return web.Response(status=503, text="busy")
        return web.Response(text=f"<html><h1>{name}</h1></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    return app


def spider_for(base: str) -> type[Spider]:
    class Traced(Spider):
        name = "traced"
        custom_settings = {"RETRY_DELAYS": [1], "CONCURRENT_REQUESTS": 1}

        async def start(self) -> Any:
            yield Request(f"{base}/one", callback=self.parse_page)
            yield Request(f"{base}/flaky", callback=self.parse_page)

        def parse_page(self, response: Any) -> Any:
            yield {"title": response.css("h1::text").get()}
            yield response.follow("/one", callback=self.parse_page)  # a duplicate: merged

    return Traced


@pytest.mark.virtual_time
async def test_spans_per_request_and_callback_reach_the_exporter(serve: Any) -> None:
    base = await serve(site())
    exporter = InMemorySpanExporter()
    settings = {"TRACING_ENABLED": True, "TRACING_EXPORTER": exporter}
    crawler = Crawler(spider_for(base), settings, clock=virtual_clock())
    await crawler.run()
    spans = exporter.get_finished_spans()
    requests = sorted(
        (s for s in spans if s.name == "skitter.request"),
        key=lambda s: (s.attributes["url.full"], s.attributes["skitter.attempt"]),  # type: ignore[index]
    )
    callbacks = [s for s in spans if s.name == "skitter.callback"]
    rows = [
        (
            s.attributes["url.full"],  # type: ignore[index]
            s.attributes["http.response.status_code"],  # type: ignore[index]
            s.attributes["skitter.retries"],  # type: ignore[index]
            s.status.status_code,
        )
        for s in requests
    ]
    assert rows == [
        (f"{base}/flaky", 503, 0, StatusCode.ERROR),
        (f"{base}/flaky", 200, 1, StatusCode.UNSET),
        (f"{base}/one", 200, 0, StatusCode.UNSET),
    ]
    for span in requests:
        assert span.attributes["skitter.transport"] == "aiohttp"  # type: ignore[index]
        assert span.attributes["http.request.method"] == "GET"  # type: ignore[index]
        assert span.attributes["skitter.slot"] == "127.0.0.1"  # type: ignore[index]
        assert span.end_time - span.start_time == 2_000_000_000  # type: ignore[operator]
        assert span.resource.attributes["service.name"] == "skitter"
    assert len(callbacks) == 2  # the 503 was retried before any callback
    parents = {s.context.span_id: s for s in requests}  # type: ignore[union-attr]
    for callback in callbacks:
        assert callback.attributes["skitter.callback"].endswith("parse_page")  # type: ignore[index, union-attr]
        assert callback.attributes["skitter.items"] == 1  # type: ignore[index]
        assert callback.attributes["skitter.requests"] == 1  # type: ignore[index]
        parent = parents[callback.parent.span_id]  # type: ignore[union-attr]
        assert parent.context.trace_id == callback.context.trace_id  # type: ignore[union-attr]


async def test_the_console_exporter_prints_spans_to_stderr(
    serve: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    base = await serve(app)

    class One(Spider):
        name = "one"
        start_urls = [f"{base}/"]

        def parse(self, response: Any) -> None:
            return None

    await Crawler(One, {"TRACING_ENABLED": True, "TRACING_EXPORTER": "console"}).run()
    captured = capsys.readouterr()
    assert '"name": "skitter.request"' in captured.err
    assert '"name": "skitter.callback"' in captured.err
    assert captured.out == ""  # stdout may carry a feed


def test_an_unknown_exporter_is_refused_at_start() -> None:
    class One(Spider):
        name = "one"

    crawler = Crawler(One, {"TRACING_ENABLED": True, "TRACING_EXPORTER": "zipkin"})
    with pytest.raises(ConfigError, match="TRACING_EXPORTER 'zipkin': use 'otlp', 'console'"):
        crawler.build()


def test_a_crawl_without_tracing_neither_imports_nor_calls_opentelemetry() -> None:
    class One(Spider):
        name = "one"

    project = Crawler(One).build()
    assert type(project.monitor) is ProjectMonitor
    assert not any("Callback" in type(mw).__name__ for mw in project.spider_mw.middlewares)
    script = (
        "import sys, skitter\n"
        "from skitter import Crawler, Spider\n"
        "class One(Spider):\n"
        "    name = 'one'\n"
        "    async def start(self):\n"
        "        yield {'n': 1}\n"
        "skitter.crawl(One, {'LOG_ENABLED': False})\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": SRC},
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "[]"


async def test_spans_reach_a_collector_over_otlp(serve: Any) -> None:
    """A collector on 127.0.0.1 (an aiohttp app standing in for one) receives the spans
    as OTLP/HTTP protobuf at TRACING_OTLP_ENDPOINT, with the service's name."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    received: list[ExportTraceServiceRequest] = []

    async def collect(request: web.Request) -> web.Response:
        assert request.content_type == "application/x-protobuf"
        message = ExportTraceServiceRequest()
        message.ParseFromString(await request.read())
        received.append(message)
        return web.Response(body=b"", content_type="application/x-protobuf")

    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html>ok</html>", content_type="text/html")

    app = web.Application()
    app.router.add_post("/v1/traces", collect)
    app.router.add_get("/page", page)
    base = await serve(app)

    class One(Spider):
        name = "one"
        start_urls = [f"{base}/page"]

        def parse(self, response: Any) -> None:
            return None

    settings = {
        "TRACING_ENABLED": True,
        "TRACING_OTLP_ENDPOINT": f"{base}/v1/traces",
        "TRACING_SERVICE_NAME": "shop-crawler",
    }
    await Crawler(One, settings).run()
    spans = [
        (resource.resource, span)
        for message in received
        for resource in message.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert sorted(span.name for _, span in spans) == ["skitter.callback", "skitter.request"]
    resource = spans[0][0]
    names = {a.key: a.value.string_value for a in resource.attributes}
    assert names["service.name"] == "shop-crawler"
