"""@every and @config: marks on spider methods, read back by the engine."""

from __future__ import annotations

import pytest

from skitter.spider import Spider
from skitter.spider._decorators import callback_config, config, every, periodic_methods


class News(Spider):
    name = "news"

    @every(minutes=24 * 60)
    def refresh(self):
        yield from ()

    @every(seconds=30)
    async def poll(self):
        return None

    @config(age=10 * 24 * 3600, priority=2, itag="v1")
    def parse_detail(self, response):
        return None

    def parse(self, response):
        return None


class Local(News):
    def refresh(self):  # no longer periodic: the override says so
        yield from ()

    @every(minutes=1, seconds=30)
    def heartbeat(self):
        return None


def test_periodic_methods_are_bound_with_intervals() -> None:
    spider = News()
    methods = periodic_methods(spider)
    assert [(m.__name__, seconds) for m, seconds in methods] == [
        ("poll", 30.0),
        ("refresh", 86400.0),
    ]
    assert all(m.__self__ is spider for m, _ in methods)


def test_subclass_override_decides() -> None:
    assert [(m.__name__, s) for m, s in periodic_methods(Local())] == [
        ("heartbeat", 90.0),
        ("poll", 30.0),
    ]


def test_callback_config_reads_through_bound_methods() -> None:
    spider = News()
    assert callback_config(spider.parse_detail) == {
        "age": 864000,
        "priority": 2,
        "itag": "v1",
    }
    assert callback_config(News.parse_detail)["priority"] == 2
    assert callback_config(spider.parse) == {}
    assert callback_config(None) == {}


def test_config_is_read_only() -> None:
    with pytest.raises(TypeError):
        callback_config(News().parse_detail)["age"] = 5  # type: ignore[index]


def test_config_rejects_unknown_names_with_a_hint() -> None:
    with pytest.raises(TypeError, match=r"unknown field 'retires'; did you mean 'retries'"):
        config(retires=5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"age": "1d"},
        {"age": -5},
        {"priority": 1.5},
        {"retries": -1},
        {"itag": 3},
        {"auto_recrawl": "yes"},
        {"meta": ["x"]},
    ],
)
def test_config_checks_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(TypeError, match="@config field"):
        config(**kwargs)


def test_auto_recrawl_needs_an_age() -> None:
    with pytest.raises(ValueError, match="age"):
        config(auto_recrawl=True)
    assert callback_config(config(auto_recrawl=True, age=60)(lambda r: None))["age"] == 60


def test_every_needs_a_positive_interval() -> None:
    with pytest.raises(ValueError, match="positive interval"):
        every()
    with pytest.raises(ValueError, match="positive interval"):
        every(minutes=-1)
    with pytest.raises(TypeError, match="numbers"):
        every(minutes="5")  # type: ignore[arg-type]


def test_every_without_arguments_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="interval"):

        @every  # type: ignore[arg-type]
        def job(self):
            return None
