"""Run nginx (unprivileged, in the foreground) over a directory, and read its CPU time.

The benchmark serves the synthetic site with nginx so the server costs next to nothing;
``NginxServer.cpu_seconds()`` (master plus workers, from ``/proc/<pid>/stat``) lets
each run show that the crawler, not nginx, was the bottleneck. Every path nginx writes
(pid, error log, temp dirs) is inside the work directory, so no root is needed.

A multi-host site is served on several ports by one ``server`` block with one
``listen`` per port: the same worker and root for all, so the number of hosts changes
nothing on the server side but the ports the crawler connects to.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "NginxMissing",
    "NginxServer",
    "find_nginx",
    "ports_free",
    "reserve_ports",
    "serve_with_nginx",
]

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_CONF = """\
{user}worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; application/json json; }}
    default_type application/octet-stream;
    charset utf-8;
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    client_body_temp_path {work}/client_body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
    server {{
{listen}
        root {root};
        location / {{ try_files $uri =404; }}
    }}
}}
"""


class NginxMissing(RuntimeError):
    """nginx is not installed."""


def find_nginx() -> str:
    """The nginx binary (also looked for in the sbin directories PATH often lacks)."""
    path = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])
    found = shutil.which("nginx", path=path)
    if found is None:
        raise NginxMissing(
            "nginx is not installed; on Debian/Ubuntu install it with: apt-get install -y nginx"
        )
    return found


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as nginx does
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def ports_free(ports: Sequence[int]) -> bool:
    """Whether nginx could listen on all of ``ports`` now."""
    return all(_bindable(port) for port in ports)


def _ephemeral_floor() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def reserve_ports(count: int) -> list[int]:
    """``count`` distinct free five-digit ports below the ephemeral range.

    A multi-host site has its ports written into its links, so they are chosen before
    the site is generated and must stay free until nginx starts (and, for a reused
    site, across invocations). Ports below the range the kernel hands out for port 0
    are not taken by the test servers and clients other people run meanwhile.
    """
    floor = min(_ephemeral_floor(), 65_536)
    candidates = list(range(20_000, max(floor, 20_000 + 10 * count)))
    random.shuffle(candidates)
    found: list[int] = []
    for port in candidates:
        if _bindable(port):
            found.append(port)
            if len(found) == count:
                return found
    raise RuntimeError(f"no {count} free ports on 127.0.0.1 between 20000 and {floor}")


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of one process (0 if it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK  # utime, stime


def _children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (nginx's workers), from ``/proc/*/stat``."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # exited while we looked
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


class NginxServer:
    """A running nginx: ``base_url`` (the first port's) to crawl, ``cpu_seconds()`` to
    account for it."""

    def __init__(
        self, process: subprocess.Popen[bytes], ports: Sequence[int], error_log: Path
    ) -> None:
        self.process = process
        self.ports = tuple(ports)
        self.base_url = f"http://127.0.0.1:{ports[0]}"
        self.error_log = error_log

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of nginx's error log: why pages failed, if they did."""
        try:
            return "\n".join(self.error_log.read_text().splitlines()[-lines:])
        except OSError:
            return ""

    def cpu_seconds(self) -> float:
        """CPU time used so far by the master and its live workers."""
        pids = [self.process.pid, *_children(self.process.pid)]
        return sum(_proc_cpu(pid) for pid in pids)


@contextmanager
def serve_with_nginx(root: Path, work: Path, ports: Sequence[int] = ()) -> Iterator[NginxServer]:
    """Serve ``root`` on 127.0.0.1 until the block ends: on each of ``ports``, or on one
    free port if none is given."""
    binary = find_nginx()
    work.mkdir(parents=True, exist_ok=True)
    ports = list(ports) or reserve_ports(1)
    listen = "\n".join(f"        listen 127.0.0.1:{port};" for port in ports)
    # As root, nginx drops its workers to "nobody", who may not read a private temp
    # dir; unprivileged, the user directive is ignored, so only set it for root.
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = work / "nginx.conf"
    conf.write_text(_CONF.format(user=user, work=work, listen=listen, root=root.resolve()))
    log = work / "error.log"
    process = subprocess.Popen(
        [binary, "-p", str(work), "-c", str(conf), "-e", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for port in ports:
            _wait_listening(process, port, log)
        yield NginxServer(process, ports, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            errors = log.read_text() if log.exists() else ""
            raise RuntimeError(f"nginx exited with status {process.returncode}:\n{errors}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nginx did not listen on 127.0.0.1:{port} within 10 s")
