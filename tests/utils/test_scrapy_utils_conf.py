"""Scrapy's ``scrapy.utils.conf`` helpers: ``build_component_list`` and
``feed_complete_default_values_from_settings``."""

from __future__ import annotations

import pytest

from skitter.settings import Settings
from skitter.utils.conf import build_component_list, feed_complete_default_values_from_settings


def test_components_come_lowest_order_first_and_none_is_left_out() -> None:
    assert build_component_list({"c": 3, "a": 1, "off": None, "b": 2}) == ["a", "b", "c"]


def test_keys_are_converted_and_two_that_convert_to_one_are_refused() -> None:
    assert build_component_list({"a": 1, "b": 2}, convert=str.upper) == ["A", "B"]
    with pytest.raises(ValueError, match="convert to the same object"):
        build_component_list({"a": 1, "A": 2}, convert=str.upper)


@pytest.mark.parametrize("order", ["1", True, [1]])
def test_an_order_that_is_no_number_is_refused(order: object) -> None:
    with pytest.raises(ValueError, match="Invalid value"):
        build_component_list({"a": order})


def test_a_feed_takes_the_feed_settings_for_what_it_leaves_out() -> None:
    settings = Settings({"FEED_EXPORT_INDENT": None, "FEED_STORE_EMPTY": False})
    options = feed_complete_default_values_from_settings(
        {"format": "csv", "fields": ["a"]}, settings
    )
    assert options == {
        "format": "csv",
        "fields": ["a"],
        "batch_item_count": 0,
        "encoding": None,
        "store_empty": False,
        "uri_params": None,
        "item_export_kwargs": {},
        "indent": None,
    }
