"""Scrapy's ``scrapy.core`` paths that a project names in its settings.

skitter's engine, scheduler and downloader are its own (``skitter.engine``,
``skitter.scheduler``, ``skitter.downloader``); what lives here is only what a Scrapy
project or plug-in refers to by Scrapy's path: the built-in download handlers
(``DOWNLOAD_HANDLERS``), with Scrapy's handler API.
"""
