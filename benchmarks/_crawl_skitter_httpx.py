"""skitter with DOWNLOAD_TRANSPORT = "httpx" (HTTP/1.1 here: the bench site is plain http).

The same spider and settings as ``_crawl_skitter``; only the transport differs, so the
ratio to the plain skitter row is what the transport costs per page.
"""

from __future__ import annotations

import _crawl_skitter as plain

if __name__ == "__main__":
    plain.main({"DOWNLOAD_TRANSPORT": "httpx"})
