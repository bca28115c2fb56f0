"""skitter with a session pool: issue 17's contender.

The same spider and settings as ``_crawl_skitter`` with SESSION_POOL_SIZE=8 (the site
never blocks), so the ratio to the plain skitter run is what sessions cost per request:
one more middleware, a session taken and stamped, a cookie jar per session, and every
response checked for a block.
"""

from __future__ import annotations

import _crawl_skitter as plain

if __name__ == "__main__":
    plain.main({"SESSION_POOL_SIZE": 8}, require="sessions/created")
