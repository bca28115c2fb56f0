"""Scrapy's ``scrapy.core.downloader`` paths: its ``handlers`` (see ``skitter.core``), and
``Downloader`` and ``Slot``, the download-slot API plug-ins read.

``Downloader(crawler)`` answers slot keys (``get_slot_key``, ``_get_slot_key``) and
slots (``_get_slot``) from the crawler's settings; the running crawl's is
``crawler.engine.downloader``, whose slots are the scheduler's live ones. skitter's own
downloader is ``skitter.downloader.Downloader``: this is Scrapy's face over it.
"""

from skitter.engine import DownloadSlot as Slot
from skitter.engine import ScrapyDownloader as Downloader

__all__ = ["Downloader", "Slot"]
