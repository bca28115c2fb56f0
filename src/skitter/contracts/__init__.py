"""Scrapy's spider contracts (``scrapy.contracts``): checks written in a callback's
docstring, run by ``skitter check``::

    def parse(self, response):
        '''
        @url https://example.com/books
        @returns items 1 20
        @returns requests 0 0
        @scrapes title price
        '''

Built-ins are in ``skitter.contracts.default``; custom ones subclass ``Contract`` and are
named in SPIDER_CONTRACTS.
"""

from skitter.contracts._contract import Contract
from skitter.contracts._manager import ContractProbe, ContractsManager

__all__ = ["Contract", "ContractProbe", "ContractsManager"]
