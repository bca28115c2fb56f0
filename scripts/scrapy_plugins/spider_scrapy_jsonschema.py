"""scrapy-jsonschema: a JsonSchemaItem and the validation pipeline (the README's way)."""

from _common import ProductSpider, base_settings, product
from scrapy_jsonschema.item import JsonSchemaItem


class ProductItem(JsonSchemaItem):
    jsonschema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "price": {"type": "string", "pattern": "^[0-9]+[.][0-9]+$"},
            "url": {"type": "string"},
        },
        "required": ["name", "price", "url"],
    }


class Spider(ProductSpider):
    def parse_product(self, response):
        yield ProductItem(product(response))


def settings():
    return base_settings(ITEM_PIPELINES={"scrapy_jsonschema.JsonSchemaValidatePipeline": 100})
