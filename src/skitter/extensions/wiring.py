"""What other packages compose from the extensions: the built-in post-processing
plugins by class name and the short names a FEEDS entry may give them (the feed
options), and the AutoThrottle policy (the scheduler's slots run it; Scrapy's
extension of that name, ``skitter.extensions.throttle``, shares it).
"""

from skitter.extensions import _postprocessing
from skitter.extensions._postprocessing import SHORT_NAMES
from skitter.extensions._throttle_policy import AutoThrottle

#: The built-in plugins by class name (``GzipPlugin``...).
BUILTIN_PLUGINS: dict[str, type] = {
    name: getattr(_postprocessing, name) for name in _postprocessing.__all__
}

__all__ = ["BUILTIN_PLUGINS", "SHORT_NAMES", "AutoThrottle"]
