"""The frontier served to other processes (``--processes``): ``RemoteFrontier`` and the
frames it speaks, for the multiprocess coordinator and its workers.
"""

from skitter.frontier._remote import (
    FrameChannel,
    Outbox,
    RemoteFrontier,
    answer_calls,
    read_frame,
    write_frame,
)

__all__ = [
    "FrameChannel",
    "Outbox",
    "RemoteFrontier",
    "answer_calls",
    "read_frame",
    "write_frame",
]
