"""What other packages compose from the pipelines: the coverage counters' stat names and
the item validators (the monitors), and the adapters of Scrapy's feed storages and
exporters and the way a media store is called (the feed and media contract suites in
``skitter.testing``).
"""

from skitter.pipelines._coverage import FIELDS, ITEMS
from skitter.pipelines._feed_registry import ScrapyExporter, ScrapyStorage
from skitter.pipelines._media_store import call_store
from skitter.pipelines._validation import validator_of

__all__ = [
    "FIELDS",
    "ITEMS",
    "ScrapyExporter",
    "ScrapyStorage",
    "call_store",
    "validator_of",
]
