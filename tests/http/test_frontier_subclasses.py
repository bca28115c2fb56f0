"""Request subclasses through the durable frontiers: a FormRequest, a JsonRequest and a
spider's own subclass pushed into SQLite (reopened from disk) and into a real Redis
come back leased as their classes, with their bodies, callbacks and attributes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skitter import FormRequest
from skitter.frontier import RedisFrontier, SqliteFrontier
from skitter.http import JsonRequest, Request
from skitter.testing._redis import redis_server_fixture, redis_url_fixture

redis_server = redis_server_fixture()
redis_url = redis_url_fixture()

T0 = 1_700_000_000.0


class Tagged(Request):
    attributes = (*Request.attributes, "tag")

    def __init__(self, *args: Any, tag: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tag = tag


class Spider:
    def parse_login(self, response: Any) -> None:
        pass


def requests(spider: Spider) -> list[Request]:
    return [
        FormRequest(
            "http://e.com/login",
            formdata={"user": "a", "csrf": "t"},
            callback=spider.parse_login,
            encoding="latin-1",
        ),
        JsonRequest("http://e.com/api", data={"page": 2}, dumps_kwargs={"indent": 1}),
        Tagged("http://e.com/t", tag="x", meta={"m": 1}),
    ]


def check(leased: list[Any], spider: Spider) -> None:
    got = {lease.request.url: lease.request for lease in leased}
    for sent in requests(spider):
        back = got[sent.url]
        assert type(back) is type(sent)
        assert (back.method, back.body, back.encoding) == (sent.method, sent.body, sent.encoding)
        assert back.callback == sent.callback
        assert back.headers.get("Content-Type") == sent.headers.get("Content-Type")
        for name in type(sent).extra_attributes:
            assert getattr(back, name) == getattr(sent, name), name


async def test_sqlite_frontier_gives_back_the_subclasses(tmp_path: Path) -> None:
    spider = Spider()
    db = tmp_path / "job" / "tasks.db"
    frontier = SqliteFrontier(db, spider=spider)
    await frontier.push(requests(spider), T0)
    await frontier.close()
    frontier = SqliteFrontier(db, spider=spider)  # from disk, not from memory
    try:
        check(await frontier.lease(10, T0, 30.0), spider)
    finally:
        await frontier.close()


async def test_redis_frontier_gives_back_the_subclasses(redis_url: str) -> None:
    spider = Spider()
    frontier = RedisFrontier(redis_url, project="p", job="j", time_source="caller", spider=spider)
    try:
        await frontier.push(requests(spider), T0)
        check(await frontier.lease(10, T0, 30.0), spider)
    finally:
        await frontier.close()
