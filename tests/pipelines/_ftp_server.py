"""A real FTP server (pyftpdlib) on 127.0.0.1, for the tests of the ftp:// media store."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

with warnings.catch_warnings():  # pyftpdlib runs on asyncore before Python 3.12
    warnings.simplefilter("ignore", DeprecationWarning)
    from pyftpdlib.authorizers import DummyAuthorizer
    from pyftpdlib.handlers import FTPHandler
    from pyftpdlib.servers import FTPServer

SECRET = "ftp-secret-42"


@contextmanager
def ftp_server(home: Path) -> Iterator[int]:
    """A server whose user ``user`` (password SECRET) owns ``home``; yields its port."""
    home.mkdir(exist_ok=True)
    authorizer = DummyAuthorizer()
    authorizer.add_user("user", SECRET, str(home), perm="elradfmwMT")
    handler = type("Handler", (FTPHandler,), {"authorizer": authorizer})
    server = FTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"timeout": 0.1}, daemon=True)
    thread.start()
    try:
        yield server.address[1]
    finally:
        server.close_all()
        thread.join(5)
