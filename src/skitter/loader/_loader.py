"""Scrapy's ``ItemLoader``: the ``itemloaders`` library, fed from a response.

Scrapy's loader is ``itemloaders.ItemLoader`` plus two things a spider relies on:
``response=`` (the selector is the response's own, so a callback that also calls
``response.css`` parses the page once) and items of ``skitter.item.Item`` by default.
Field metadata ``input_processor``/``output_processor`` is read by itemloaders through
itemadapter, which knows ``Item`` once ``skitter.item`` is imported (it is, here).
"""

from __future__ import annotations

from typing import Any

import itemloaders
from parsel import Selector

from skitter.http import Response
from skitter.item import Item

__all__ = ["ItemLoader"]


class ItemLoader(itemloaders.ItemLoader):
    """``ItemLoader(item=None, selector=None, response=None, parent=None, **context)``.

    With only ``response`` given, ``selector`` is the response's selector (or, when a
    subclass sets another ``default_selector_class``, one of that class built from the
    response's text). ``response`` is kept in the loader's context, as in Scrapy.
    """

    default_item_class: type = Item
    default_selector_class: type[Selector] = Selector

    def __init__(
        self,
        item: Any = None,
        selector: Selector | None = None,
        response: Response | None = None,
        parent: itemloaders.ItemLoader | None = None,
        **context: Any,
    ) -> None:
        if selector is None and response is not None:
            selector = _selector_of(response, self.default_selector_class)
        context.update(response=response)
        super().__init__(item=item, selector=selector, parent=parent, **context)


def _selector_of(response: Response, selector_class: type[Selector]) -> Selector:
    if selector_class is Selector:
        return response.selector
    return selector_class(text=response.text, base_url=response.url)
