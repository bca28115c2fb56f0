"""What the crawler (the composition root) composes from the settings package: the
spider's settings layer and the start check of names nothing reads; and the suffixes of
the media pipelines' per-class settings, which the media pipeline matches its own names
by; and how a package hands over its built-in components table, which Scrapy code reads
as a ``*_BASE`` setting.
"""

from skitter.settings._attributes import spider_layer
from skitter.settings._declared import check_declared
from skitter.settings._media import PER_CLASS
from skitter.settings._settings import register_base_table

__all__ = [
    "PER_CLASS",
    "check_declared",
    "register_base_table",
    "spider_layer",
]
