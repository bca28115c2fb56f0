"""Feed post-processing plugins at Scrapy's import path (``scrapy.extensions.postprocessing``)."""

from skitter.extensions._postprocessing import (
    Bz2Plugin,
    GzipPlugin,
    LZMAPlugin,
    PostProcessingManager,
    ZstdPlugin,
)

__all__ = ["Bz2Plugin", "GzipPlugin", "LZMAPlugin", "PostProcessingManager", "ZstdPlugin"]
