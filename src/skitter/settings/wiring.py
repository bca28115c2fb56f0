"""What the crawler (the composition root) composes from the settings package: the
spider's settings layer and the start check of names nothing reads.
"""

from skitter.settings._attributes import spider_layer
from skitter.settings._declared import check_declared

__all__ = [
    "check_declared",
    "spider_layer",
]
