"""An event loop on a thread of its own, for synchronous code that needs the async crawl.

The shell's user types ``fetch(url)`` and waits for the answer: the download runs on this
loop (where the probe's connections, cookies and robots.txt live) while the REPL's
thread blocks on the result. Ctrl-C while waiting cancels the download, not the shell.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """A running event loop on a daemon thread; ``run`` blocks on a coroutine there."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="skitter-shell-loop", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """The result of ``coro``, run on the loop (its exception is raised here)."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def close(self) -> None:
        """Stop the loop and wait for its thread; the loop's tasks must be done."""
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join()
            self.loop.close()
