"""What the feed options (in the pipelines) compose from the extensions: the built-in
post-processing plugins by class name, and the short names a FEEDS entry may give them.
"""

from skitter.extensions import _postprocessing
from skitter.extensions._postprocessing import SHORT_NAMES

#: The built-in plugins by class name (``GzipPlugin``...).
BUILTIN_PLUGINS: dict[str, type] = {
    name: getattr(_postprocessing, name) for name in _postprocessing.__all__
}

__all__ = ["BUILTIN_PLUGINS", "SHORT_NAMES"]
