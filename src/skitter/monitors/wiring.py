"""What the dashboard shares with the run report: the hash of the report's inline style,
for the dashboard's Content-Security-Policy.
"""

from skitter.monitors._report import STYLE_HASH

__all__ = [
    "STYLE_HASH",
]
