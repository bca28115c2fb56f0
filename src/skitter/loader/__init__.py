"""Item loaders, at Scrapy's import path: ``from skitter.loader import ItemLoader``.

The processors are in ``skitter.loader.processors`` (and, as the library's own,
``itemloaders.processors``).
"""

from skitter.loader._loader import ItemLoader

__all__ = ["ItemLoader"]
