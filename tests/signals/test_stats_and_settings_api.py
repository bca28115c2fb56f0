"""crawler.stats and crawler.settings under Scrapy's method names and parsing rules."""

from __future__ import annotations

from typing import Any

import pytest

from skitter import Settings
from skitter.engine import Stats


def test_stats_have_scrapys_method_names() -> None:
    stats = Stats()
    assert stats.get_value("missing") is None
    assert stats.get_value("missing", 7) == 7
    stats.set_value("name", "books")
    stats.inc_value("pages")
    stats.inc_value("pages", 2)
    stats.inc_value("from_ten", 1, start=10)
    stats.inc_value("from_ten", 1, start=10)  # start only counts when the key is new
    stats.max_value("biggest", 5)
    stats.max_value("biggest", 3)
    stats.min_value("smallest", 5)
    stats.min_value("smallest", 3)
    stats.min_value("smallest", 4)
    assert stats.get_stats() == {
        "biggest": 5,
        "from_ten": 12,
        "name": "books",
        "pages": 3,
        "smallest": 3,
    }
    assert stats.get_value("pages", spider=object()) == 3  # Scrapy's spider= is accepted
    stats.set_stats({"only": 1})
    assert stats.get_stats() == {"only": 1}
    stats.clear_stats()
    assert stats.get_stats() == {}


def test_settings_getbool_follows_scrapys_rules() -> None:
    settings = Settings.resolve(
        project={
            "MY_ONE": "1",
            "MY_ZERO": "0",
            "MY_TRUE": "True",
            "MY_LOWER_FALSE": "false",
            "MY_INT": 0,
            "MY_BOOL": True,
            "MY_BAD": "maybe",
        }
    )
    assert settings.getbool("MY_ONE") is True
    assert settings.getbool("MY_ZERO") is False
    assert settings.getbool("MY_TRUE") is True
    assert settings.getbool("MY_LOWER_FALSE") is False
    assert settings.getbool("MY_INT") is False
    assert settings.getbool("MY_BOOL") is True
    assert settings.getbool("MY_UNSET") is False
    assert settings.getbool("MY_UNSET", True) is True
    assert settings.getbool("ROBOTSTXT_OBEY") is False  # a registered default
    with pytest.raises(ValueError, match=r"MY_BAD.*not a boolean"):
        settings.getbool("MY_BAD")


def test_settings_numbers_lists_and_dicts() -> None:
    settings = Settings.resolve(
        project={
            "MY_INT": "42",
            "MY_FLOAT": "0.5",
            "MY_CSV": "a,b,c",
            "MY_LIST": ("x", "y"),
            "MY_JSON": '{"a": 1}',
            "MY_DICT": {"b": 2},
            "MY_JSON_LIST": '["p", "q"]',
        },
        cli={"CONCURRENT_REQUESTS": "7"},
    )
    assert settings.getint("MY_INT") == 42
    assert settings.getint("MY_UNSET") == 0
    assert settings.getint("MY_UNSET", 5) == 5
    assert settings.getint("CONCURRENT_REQUESTS") == 7
    assert settings.getfloat("MY_FLOAT") == 0.5
    assert settings.getfloat("MY_UNSET") == 0.0
    assert settings.getlist("MY_CSV") == ["a", "b", "c"]
    assert settings.getlist("MY_LIST") == ["x", "y"]
    assert settings.getlist("MY_UNSET") == []
    assert settings.getlist("MY_UNSET", ["d"]) == ["d"]
    assert settings.getdict("MY_JSON") == {"a": 1}
    assert settings.getdict("MY_DICT") == {"b": 2}
    assert settings.getdict("MY_UNSET") == {}
    assert settings.getdictorlist("MY_JSON_LIST") == ["p", "q"]
    assert settings.getdictorlist("MY_CSV") == ["a", "b", "c"]
    assert settings.getdictorlist("MY_DICT") == {"b": 2}
    assert settings.getdictorlist("MY_UNSET") == {}
    assert settings.get("MY_UNSET") is None
    assert settings.get("MY_UNSET", "fallback") == "fallback"
    extensions: Any = {"my.Ext": 1}
    with_ext = Settings.resolve(project={"EXTENSIONS": extensions})
    assert with_ext.getwithbase("EXTENSIONS") == {"my.Ext": 1}
    copied = with_ext.copy_to_dict()
    assert copied["EXTENSIONS"] == {"my.Ext": 1} and "CONCURRENT_REQUESTS" in copied
