"""The processors of ``itemloaders.processors``, where Scrapy 2.x projects once imported
them from (``scrapy.loader.processors``)."""

from itemloaders.processors import Compose, Identity, Join, MapCompose, SelectJmes, TakeFirst

__all__ = ["Compose", "Identity", "Join", "MapCompose", "SelectJmes", "TakeFirst"]
