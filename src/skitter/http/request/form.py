"""Scrapy's ``scrapy.http.request.form``."""

from skitter.http._form import FormRequest

__all__ = ["FormRequest"]
