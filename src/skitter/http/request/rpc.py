"""Scrapy's ``scrapy.http.request.rpc``."""

from skitter.http._xmlrpc import XmlRpcRequest

__all__ = ["XmlRpcRequest"]
