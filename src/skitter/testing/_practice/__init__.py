"""A quotes.toscrape.com-like practice site, for crawling Scrapy spiders with skitter.

``serve_practice_site()`` runs it on a free loopback port; ``practice_data()`` is the data
set it is rendered from, the ground truth of every crawl of it. To try a spider by hand,
``skitter practice`` serves it on http://127.0.0.1:8000.
"""

from skitter.testing._practice._data import PAGE_SIZE, Author, PracticeData, Quote, practice_data
from skitter.testing._practice._site import make_practice_app, serve_practice_site

__all__ = [
    "PAGE_SIZE",
    "Author",
    "PracticeData",
    "Quote",
    "make_practice_app",
    "practice_data",
    "serve_practice_site",
]
