"""The whole-file write (to a temporary name, then renamed) that the HTTP cache and the
files store share, so a crash never leaves half a file under the final name; and the
whole-body decompressors under a size cap behind Scrapy's ``HttpCompressionMiddleware``
API (``skitter.downloader``'s), with the error they raise past the cap.
"""

from skitter.utils._compression import (
    _DecompressionMaxSizeExceeded as DecompressionMaxSizeExceeded,
)
from skitter.utils._compression import _inflate as inflate
from skitter.utils._compression import _unbrotli as unbrotli
from skitter.utils._compression import _unzstd as unzstd
from skitter.utils._files import write_whole

__all__ = [
    "DecompressionMaxSizeExceeded",
    "inflate",
    "unbrotli",
    "unzstd",
    "write_whole",
]
