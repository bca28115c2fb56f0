"""The whole-file write (to a temporary name, then renamed) that the HTTP cache and the
files store share, so a crash never leaves half a file under the final name.
"""

from skitter.utils._files import write_whole

__all__ = [
    "write_whole",
]
