"""The SQLite frontier: a job directory that survives Ctrl-C and SIGKILL.

Design: **an in-memory mirror, written behind: a persistence adapter on the memory
queue's public surface.** Every ``Frontier`` method runs on a ``MemoryTaskQueue`` (the
memory backend's own core, so both backends keep the contract the same way by
construction), which reports the tasks each operation changed (``on_change``); they are
*dirty*. A flush writes the current row of every dirty task, built from the queue's
``TaskView`` of it, in **one transaction** (an upsert per task; the request payload,
from ``skitter.http._codec``, only when the task got a new request). Flushes happen
``flush_interval`` seconds after the first change (50 ms by default), as soon as
``flush_ops`` tasks are dirty, on ``flush()`` and on ``close()``. Loading a job restores
its rows into a new queue (``MemoryTaskQueue.restore``).

Guarantee. The database always holds the state the mirror had at the end of some
flush: the state after a *prefix* of the operations, never a mix. A SIGKILL loses at
most the operations since the last flush, and losing a suffix loses no task: a
callback's child requests are pushed before its parent is acked, so if the children
are lost the parent's ack is lost too, the parent is still queued or in flight on disk,
and it is fetched again on resume. After ``await flush()`` returns, every earlier
operation survives a crash of the process. With ``synchronous=NORMAL`` in WAL mode a
power cut may also roll back the last transactions (never corrupt the file): the same
suffix rule holds.

On the loop thread, on purpose. A flush costs about 5 us per row (indexes included):
some 1 ms every 50 ms for a crawl of 2,000 pages/s, which changes two rows per page.
An ``asyncio.to_thread`` hop costs some 45 us, so one per operation would cost ten times
more than the writes; a writer thread could take at most the ~2 % of loop time the
writes cost, and would contend with the loop for the GIL while binding parameters. So
SQLite is called synchronously: briefly, only at flushes, and at most ``flush_ops``
rows (~5 ms) at a time. Measured in ``benchmarks/frontier_bench.py``.

On open (the first operation, or ``load()``), tasks that were in flight are put back in
the queue at once -- the process that held their leases is gone -- and ``report`` says
what was found. A task whose stored request no longer decodes (its callback was renamed
since) is marked BAD with the ``CodecError``'s message and counted, instead of stopping
the crawl; its payload is kept, so ``requeue_bad`` (``skitter job DIR --requeue-bad``)
queues it again once the code is fixed. A damaged database is refused whole
(``_db``). A lock file next to the database keeps a second process out of a job.

A write that fails (disk full, I/O error, the database locked for too long, or a
checkpoint that refuses because a feed lost items) breaks the frontier for good: every
later operation raises ``StorageError``, so the crawl stops instead of doing work it
cannot record, and ``on_error`` hears of a failure in the background at once. The
database keeps the state of the last good flush, which a resume goes on from.
``close()`` tries one last write, and raises if the frontier ever failed.

Finished tasks stay in the table: they are the dupe filter. The mirror holds them too,
as the memory backend does, so memory use is that of the memory backend.

``SqliteFrontier`` is also the ``JobStore`` (``skitter.frontier._jobstore``) that a job
directory uses. Its parts:

- ``_db``: the database file: created whole, opened with its settings, refused when
  damaged; the job's lock;
- ``_rows``: a task's row from its view, and a job's rows read back into a new queue;
- ``_writer``: the write-behind (the dirty set, the timer, one transaction per flush);
- ``_table``: counts, listings, the checkpoint and the job modes, on disk;
- ``_frontier``: ``SqliteFrontier``, which puts them together.
"""

from skitter.frontier._jobstore import JobCounts, ResumeReport
from skitter.frontier._sqlite._frontier import SqliteFrontier

__all__ = ["JobCounts", "ResumeReport", "SqliteFrontier"]
