"""``python -m skitter.testing._practice [PORT]``: serve the practice site on 127.0.0.1
(port 8000 unless given), the address the corpus spiders default to."""

import sys

from aiohttp import web

from skitter.testing._practice import make_practice_app

web.run_app(
    make_practice_app(), host="127.0.0.1", port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000
)
