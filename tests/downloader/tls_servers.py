"""Servers for the transport tests: HTTP/2 over TLS (hypercorn), and a relay in front of
it that reads each connection's TLS ClientHello, records its fingerprint, and may refuse
the clients whose fingerprint is not a browser's, as bot walls do.

Everything listens on 127.0.0.1 and stops with the test.
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
from hypercorn.asyncio import serve
from hypercorn.config import Config

Scope = dict[str, Any]

# GREASE values (RFC 8701): 0x0a0a, 0x1a1a, ... 0xfafa; browsers send them, libraries don't.
GREASE = frozenset((b << 8) | b for b in range(0x0A, 0x100, 0x10))


@dataclass(frozen=True)
class Hello:
    """What a ClientHello says (GREASE values removed)."""

    version: int
    ciphers: tuple[int, ...]
    extensions: tuple[int, ...]
    groups: tuple[int, ...]
    point_formats: tuple[int, ...]
    greased: bool

    @property
    def ja3(self) -> str:
        """The JA3 string (before its MD5): version, ciphers, extensions, groups, formats."""
        return ",".join(
            [str(self.version)]
            + ["-".join(map(str, part)) for part in (self.ciphers, self.extensions)]
            + ["-".join(map(str, part)) for part in (self.groups, self.point_formats)]
        )

    @property
    def stable(self) -> tuple[object, ...]:
        """The fingerprint with the extension order left out: Chrome shuffles its
        extensions on every connection (JA4 sorts them for the same reason)."""
        return (self.version, self.ciphers, tuple(sorted(self.extensions)), self.groups)


def parse_hello(record: bytes) -> Hello:
    """The fingerprint of a TLS record holding a ClientHello (RFC 8446 4.1.2)."""
    assert record[0] == 0x16 and record[5] == 0x01, "not a ClientHello"
    pos = 9  # record header (5), handshake type (1) and length (3)
    version = struct.unpack_from("!H", record, pos)[0]
    pos += 2 + 32  # version, random
    pos += 1 + record[pos]  # session id
    (length,) = struct.unpack_from("!H", record, pos)
    ciphers = struct.unpack_from(f"!{length // 2}H", record, pos + 2)
    pos += 2 + length
    pos += 1 + record[pos]  # compression methods
    (length,) = struct.unpack_from("!H", record, pos)
    pos += 2
    end = pos + length
    extensions: list[int] = []
    groups: tuple[int, ...] = ()
    formats: tuple[int, ...] = ()
    while pos < end:
        kind, size = struct.unpack_from("!HH", record, pos)
        data = record[pos + 4 : pos + 4 + size]
        pos += 4 + size
        extensions.append(kind)
        if kind == 10:  # supported_groups
            groups = struct.unpack_from(f"!{(len(data) - 2) // 2}H", data, 2)
        elif kind == 11:  # ec_point_formats
            formats = tuple(data[1 : 1 + data[0]])
    every = (*ciphers, *extensions, *groups)
    return Hello(
        version=version,
        ciphers=tuple(c for c in ciphers if c not in GREASE),
        extensions=tuple(e for e in extensions if e not in GREASE),
        groups=tuple(g for g in groups if g not in GREASE),
        point_formats=formats,
        greased=any(value in GREASE for value in every),
    )


@dataclass
class Relay:
    """A TCP relay that records each ClientHello; ``refuse`` drops the ones it matches."""

    backend_port: int
    refuse: Callable[[Hello], bool] | None = None
    hellos: list[Hello] = field(default_factory=list)
    port: int = 0
    open: set[asyncio.StreamWriter] = field(default_factory=set)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open.add(writer)
        try:
            head = await reader.readexactly(5)
            record = head + await reader.readexactly(struct.unpack_from("!H", head, 3)[0])
            hello = parse_hello(record)
            self.hellos.append(hello)
            if self.refuse is not None and self.refuse(hello):
                return  # closed without a word, as bot walls do
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.backend_port)
            self.open.add(up_writer)
            up_writer.write(record)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            self.open.discard(writer)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


@asynccontextmanager
async def relay(
    backend_port: int, refuse: Callable[[Hello], bool] | None = None
) -> AsyncIterator[Relay]:
    found = Relay(backend_port, refuse)
    server = await asyncio.start_server(found.handle, "127.0.0.1", 0)
    found.port = server.sockets[0].getsockname()[1]
    try:
        yield found
    finally:
        server.close()
        for writer in list(found.open):  # the clients' pooled connections too
            writer.close()
        await server.wait_closed()


@asynccontextmanager
async def h2_server(app: Any, tmp: Path, ca: trustme.CA | None = None) -> AsyncIterator[int]:
    """``app`` (ASGI) served over TLS with HTTP/2 and HTTP/1.1 offered, its certificate
    issued by ``ca`` (a new one if None); its port."""
    certificate = (ca or trustme.CA()).issue_cert("127.0.0.1", "localhost")
    certificate.cert_chain_pems[0].write_to_path(str(tmp / "cert.pem"))
    certificate.private_key_pem.write_to_path(str(tmp / "key.pem"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]
    config.certfile = str(tmp / "cert.pem")
    config.keyfile = str(tmp / "key.pem")
    config.alpn_protocols = ["h2", "http/1.1"]
    config.graceful_timeout = 0.5
    config.loglevel = "WARNING"
    stop = asyncio.Event()
    task = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
    try:
        for _ in range(100):  # until it accepts
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                # polls a real socket: the server in another process is not listening yet
                await asyncio.sleep(0.02)
                continue
            writer.close()
            break
        yield port
    finally:
        stop.set()
        await task
