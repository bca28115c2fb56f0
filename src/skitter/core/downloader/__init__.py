"""Scrapy's ``scrapy.core.downloader`` paths: only its ``handlers`` (see ``skitter.core``)."""
