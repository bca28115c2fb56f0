"""``skitter fetch``, ``view`` and ``shell`` as subprocesses against a local site; the
shell also through a pseudo-terminal, as a person types into it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import select
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

Cli = Any  # the ``cli`` fixture (tests/cli/conftest.py)
Env = Any  # the ``cli_environ`` fixture

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pty is POSIX")


class Site:
    def __init__(self) -> None:
        self.hits: list[tuple[str, str]] = []  # (path, User-Agent)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits.append((request.path, request.headers.get("User-Agent", "")))
        if request.path == "/moved":
            raise web.HTTPFound("/page/1")
        if request.path == "/cookie":
            response = web.Response(text="<html>c</html>", content_type="text/html")
            response.set_cookie("session", "s3cr3t-value")
            return response
        if request.path == "/missing":
            return web.Response(status=404, text="no such page")
        n = request.path.rsplit("/", 1)[-1]
        body = (
            f"<!DOCTYPE html><html><head><title>Page {n}</title></head>"
            f'<body><h1>Page {n}</h1><a href="/page/{n}1">more</a></body></html>'
        )
        return web.Response(text=body, content_type="text/html")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self.handle)
        return app


@pytest.fixture
async def site(serve: Any) -> tuple[Site, str]:
    site = Site()
    return site, await serve(site.app())


SPIDER = """
from skitter import Spider

class Scoped(Spider):
    name = "scoped"
    allowed_domains = ["127.0.0.1"]
    custom_settings = {"USER_AGENT": "scoped-bot/1.0"}
"""


@pytest.fixture
def spider_file(tmp_path: Path) -> Path:
    path = tmp_path / "scoped.py"
    path.write_text(textwrap.dedent(SPIDER))
    return path


async def test_fetch_writes_the_body_downloaded_with_the_spiders_settings(
    cli: Cli, site: tuple[Site, str], spider_file: Path
) -> None:
    server, base = site
    run = await cli("fetch", "--nolog", "--spider", str(spider_file), base + "/moved")
    assert run.code == 0, run.err
    assert run.out.startswith("<!DOCTYPE html><html><head><title>Page 1</title>")
    assert server.hits == [("/moved", "scoped-bot/1.0"), ("/page/1", "scoped-bot/1.0")]
    assert run.err == ""  # --nolog


async def test_fetch_logs_to_the_logfile_and_not_to_stderr(
    cli: Cli, site: tuple[Site, str], spider_file: Path, tmp_path: Path
) -> None:
    _, base = site
    run = await cli(
        "fetch", "-L", "DEBUG", "--logfile", "fetch.log", "--spider", str(spider_file),
        base + "/moved",
    )  # fmt: skip
    assert run.code == 0, run.err
    assert run.err == ""
    log = (tmp_path / "fetch.log").read_text()
    assert " DEBUG: " in log  # -L DEBUG, into the file


async def test_fetch_headers_shows_both_sides_with_cookies_masked(
    cli: Cli, site: tuple[Site, str]
) -> None:
    _, base = site
    run = await cli("fetch", "--headers", base + "/cookie")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    assert "> User-Agent: skitter/0.1" in lines
    assert ">" in lines
    assert "< Set-Cookie: ***" in lines
    assert "s3cr3t" not in run.out


async def test_fetch_no_redirect_prints_the_3xx(cli: Cli, site: tuple[Site, str]) -> None:
    server, base = site
    run = await cli("fetch", "--headers", "--no-redirect", "--nolog", base + "/moved")
    assert run.code == 0, run.err
    assert "< Location: /page/1" in run.out.splitlines()
    assert [path for path, _ in server.hits] == ["/moved"]


async def test_fetch_refuses_a_url_outside_the_spiders_domains(
    cli: Cli, site: tuple[Site, str], spider_file: Path
) -> None:
    server, base = site
    offsite = base.replace("127.0.0.1", "localhost")
    run = await cli("fetch", "--spider", str(spider_file), offsite + "/page/1")
    assert run.code == 1
    assert "outside allowed_domains" in run.err and "'scoped'" in run.err
    assert server.hits == []


async def test_view_opens_the_page_with_a_base_tag(
    cli: Cli, site: tuple[Site, str], tmp_path: Path
) -> None:
    _, base = site
    record = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > "{record}"\n')
    browser.chmod(0o755)
    run = await cli("view", "--nolog", base + "/page/2", env={"BROWSER": str(browser)})
    assert run.code == 0, run.err
    opened = record.read_text()
    assert opened.startswith("file://")
    page = await asyncio.to_thread(Path(opened.removeprefix("file://")).read_text)
    assert page.startswith(f'<!DOCTYPE html><base href="{base}/page/2"><html>')
    assert "<h1>Page 2</h1>" in page


async def test_shell_c_prints_the_value_and_exits(cli: Cli, site: tuple[Site, str]) -> None:
    _, base = site
    run = await cli("shell", base + "/page/3", "-c", "response.css('h1::text').get()", "--nolog")
    assert (run.code, run.out) == (0, "Page 3\n"), run.err
    run = await cli("shell", base + "/page/3", "-c", "response.status", "--nolog")
    assert (run.code, run.out) == (0, "200\n"), run.err


async def test_shell_c_fails_when_the_page_cannot_be_had(
    cli: Cli, site: tuple[Site, str], spider_file: Path
) -> None:
    _, base = site
    offsite = base.replace("127.0.0.1", "localhost")
    run = await cli("shell", "--spider", str(spider_file), offsite, "-c", "response")
    assert run.code == 1
    assert "outside allowed_domains" in run.err
    run = await cli("shell", base + "/page/1", "-c", "1/0", "--nolog")
    assert run.code == 1
    assert "ZeroDivisionError" in run.err


async def test_shell_reads_a_local_file(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "saved.html").write_text("<html><title>Saved</title></html>")
    run = await cli("shell", "./saved.html", "-c", "response.css('title::text').get()")
    assert (run.code, run.out) == (0, "Saved\n"), run.err


class Terminal:
    """A child process on a pseudo-terminal: type lines, read until a prompt."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: become the command
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        self.seen = b""

    def read_until(self, token: bytes, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while token not in self.seen:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"no {token!r} in {self.seen.decode(errors='replace')!r}")
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:  # the child closed the terminal
                chunk = b""
            if not chunk:
                raise EOFError(self.seen.decode(errors="replace"))
            self.seen += chunk
        before, _, self.seen = self.seen.partition(token)
        return before.decode(errors="replace")

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")  # Enter, in raw mode (IPython) or not

    def finish(self) -> int:
        with contextlib.suppress(OSError):  # it may have left already (IPython's exit)
            os.write(self.fd, b"\x04")  # Ctrl-D: leave the REPL
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def _terminal(args: list[str], cwd: Path, env: dict[str, str], console: str = "python") -> Terminal:
    env = {**env, "SCRAPY_PYTHON_SHELL": console, "TERM": "dumb"}
    return Terminal([sys.executable, "-m", "skitter", *args], env, cwd)


#: Each console's prompts, in the order they appear.
PROMPTS = {"python": [b">>> "] * 3, "ipython": [b"In [1]: ", b"In [2]: ", b"In [3]: "]}


def _drive_shell(base: str, cwd: Path, env: dict[str, str], console: str) -> tuple[str, str, int]:
    term = _terminal(["shell", "--nolog"], cwd, env, console)
    first, second, third = PROMPTS[console]
    banner = term.read_until(first)
    term.type(f"fetch('{base}/page/7')")
    term.read_until(second)
    term.type("print('STATUS', response.status, response.css('h1::text').get())")
    answer = term.read_until(third)
    if console == "ipython":
        term.type("exit")
    return banner, answer, term.finish()


@pytest.mark.parametrize("console", ["python", "ipython"])
async def test_the_shell_through_a_terminal(
    site: tuple[Site, str], tmp_path: Path, cli_environ: Env, console: str
) -> None:
    _, base = site
    banner, answer, code = await asyncio.to_thread(
        _drive_shell, base, tmp_path, cli_environ(), console
    )
    assert "fetch(url[, redirect=True])" in banner and "<DefaultSpider 'default'>" in banner
    assert "STATUS 200 Page 7" in answer
    assert code == 0


INSPECTING = """
from skitter import Spider
from skitter.shell import inspect_response

class Inspecting(Spider):
    name = "inspecting"

    def start_requests(self):
        from skitter import Request
        yield Request(self.settings["BASE"] + "/page/1")

    def parse(self, response):
        inspect_response(response, self)
        yield {"after_shell": response.url}
"""


def _drive_inspect(base: str, cwd: Path, env: dict[str, str], console: str) -> tuple[str, int]:
    args = ["crawl", "inspecting.py", "-s", f"BASE={base}", "-O", "out.jsonl", "--no-progress"]
    term = _terminal(args, cwd, env, console)
    first, second, _ = PROMPTS[console]
    term.read_until(first)
    term.type("print('SEEN', response.status, spider.name, 'fetch' in dir())")
    answer = term.read_until(second)
    if console == "ipython":
        term.type("exit")
    return answer, term.finish()


@pytest.mark.parametrize("console", ["python", "ipython"])
async def test_inspect_response_opens_a_shell_mid_crawl(
    site: tuple[Site, str], tmp_path: Path, cli_environ: Env, console: str
) -> None:
    _, base = site
    (tmp_path / "inspecting.py").write_text(textwrap.dedent(INSPECTING))
    answer, code = await asyncio.to_thread(_drive_inspect, base, tmp_path, cli_environ(), console)
    assert "SEEN 200 inspecting False" in answer  # no fetch(): the crawl's loop waits
    assert code == 0
    assert f'"after_shell":"{base}/page/1"' in (tmp_path / "out.jsonl").read_text()


def test_command_line_urls_and_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skitter.cli._oneshot import guess_url

    monkeypatch.chdir(tmp_path)
    (tmp_path / "saved.html").write_text("<html></html>")
    file_url = (tmp_path / "saved.html").as_uri()
    assert guess_url("https://example.com/a") == ("https://example.com/a", False)
    assert guess_url("data:text/html,<p>x</p>") == ("data:text/html,<p>x</p>", False)
    assert guess_url("./saved.html") == (file_url, True)
    assert guess_url("saved.html") == (file_url, True)
    assert guess_url("example.com/page") == ("http://example.com/page", False)


def test_several_spiders_in_a_file_need_a_name(tmp_path: Path) -> None:
    from skitter.cli._oneshot import spider_classes
    from skitter.exceptions import ConfigError

    path = tmp_path / "two.py"
    path.write_text("from skitter import Spider\nclass A(Spider): pass\nclass B(Spider): pass\n")
    with pytest.raises(ConfigError, match="several spiders"):
        spider_classes(str(path), {}, several=False)
    assert spider_classes(f"{path}:B", {}, several=False)[1][0].__name__ == "B"
