"""The bundled demo: a small shop served on localhost and the spider that crawls it.

``serve_demo_site()`` starts the shop, ``DemoSpider`` crawls it, and ``expected_items()``
says what a correct crawl must extract, so a new user (or a test) can check a crawl end
to end without touching the network.
"""

from skitter.demo._expected import expected_items
from skitter.demo._site import make_app, serve_demo_site
from skitter.demo._spider import DemoSpider

__all__ = ["DemoSpider", "expected_items", "make_app", "serve_demo_site"]
