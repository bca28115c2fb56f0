"""The practice site that ``skitter practice`` (the CLI) serves."""

from skitter.testing._practice import serve_practice_site

__all__ = [
    "serve_practice_site",
]
