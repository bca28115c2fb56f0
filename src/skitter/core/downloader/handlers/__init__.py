"""Scrapy's built-in download handlers by their Scrapy paths, with Scrapy's API.

A handler is built with ``from_crawler(crawler)`` and answers ``await
download_request(request)`` with a Response. ``file.FileDownloadHandler`` and
``datauri.DataURIDownloadHandler`` are skitter's local handler (the one a crawl uses for
``file:`` and ``data:``), so a project's ``DOWNLOAD_HANDLERS`` naming them, or a test
building one, gets what a crawl does.
"""
