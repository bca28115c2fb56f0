"""Rules the test suite keeps, checked on its own source so that a new test keeps them too.

- A non-zero ``sleep()`` is a guess at how long something takes: too short on a loaded
  machine (a flake), too long everywhere else (a slow suite). One stays only where it is
  the point (time on a ``VirtualTimeLoop``, a server's own slowness) or waits on a real
  process or socket, and it says why in a comment on its line or the line above. Anything
  else waits on an event, on ``skitter.testing.wait_until`` or on virtual time.
- No assertion compares a wall-clock measurement (``time.monotonic()``,
  ``time.perf_counter()``, ``time.time()``) with a bound: it holds only within a
  tolerance a loaded machine breaks. Rates are measured in ``benchmarks/``; a test asserts
  exact behaviour on virtual time or a ``FakeClock``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
WALL_CLOCKS = frozenset({"monotonic", "perf_counter", "time", "monotonic_ns", "perf_counter_ns"})
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _sources() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def _says_why(comment: str) -> bool:
    """A comment with words in it: a bare ``# noqa: ASYNC110`` or ``# type: ignore[...]``
    silences a tool, it does not give a reason."""
    return (
        re.fullmatch(r"#\s*(noqa(: *[A-Z0-9, ]+)?|type: *ignore(\[[a-z-, ]+\])?)\s*", comment)
        is None
    )


def _comment_lines(source: str) -> set[int]:
    """The lines that hold a comment that says why (on their own or after code)."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {
        token.start[0]
        for token in tokens
        if token.type == tokenize.COMMENT and _says_why(token.string)
    }


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0


def _is_sleep(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "sleep" and bool(node.args) and not _is_zero(node.args[0])


def uncommented_sleeps(source: str) -> Iterator[int]:
    """The lines of non-zero ``sleep()`` calls with no comment on that line or above."""
    if "sleep(" not in source:  # most files: no need to parse them
        return
    comments = _comment_lines(source)
    for node in ast.walk(ast.parse(source)):
        if _is_sleep(node):
            line = node.lineno  # type: ignore[attr-defined]
            if not {line, line - 1} & comments:
                yield line


def _is_wall_clock_call(node: ast.AST) -> bool:
    """``time.monotonic()`` and its kind; ``clock.monotonic()`` (a FakeClock, a
    VirtualClock) and ``loop.time()`` are not the wall clock."""
    if not isinstance(node, ast.Call) or node.args:
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value
        return func.attr in WALL_CLOCKS and isinstance(owner, ast.Name) and owner.id == "time"
    return isinstance(func, ast.Name) and func.id in WALL_CLOCKS - {"time"}


def _reads_wall_clock(node: ast.AST, timed: set[str]) -> bool:
    return any(
        _is_wall_clock_call(part) or (isinstance(part, ast.Name) and part.id in timed)
        for part in ast.walk(node)
    )


def _measures(node: ast.AST, timed: set[str], elapsed: set[str]) -> bool:
    """``node`` holds a wall-clock measurement: a difference with a wall-clock reading on
    one side, or a name bound to one. A reading used as a timestamp is not one."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id in elapsed:
            return True
        if (
            isinstance(part, ast.BinOp)
            and isinstance(part.op, ast.Sub)
            and (_reads_wall_clock(part.left, timed) or _reads_wall_clock(part.right, timed))
        ):
            return True
    return False


def _names(targets: list[ast.expr]) -> set[str]:
    return {t.id for t in targets if isinstance(t, ast.Name)}


def wall_clock_asserts(source: str) -> Iterator[int]:
    """The lines of asserts that order a wall-clock measurement (``time.monotonic() -
    started < 30``, or ``elapsed > 0.5`` with ``elapsed`` measured so)."""
    if not any(name in source for name in ("monotonic", "perf_counter", "time(")):
        return
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        timed: set[str] = set()
        elapsed: set[str] = set()
        assigns = [n for n in ast.walk(function) if isinstance(n, ast.Assign)]
        for node in assigns:  # readings first: a measurement may come before in the walk
            if _reads_wall_clock(node.value, set()):
                timed |= _names(node.targets)
        for node in assigns:
            if _measures(node.value, timed, elapsed):
                elapsed |= _names(node.targets)
        for node in ast.walk(function):
            if not isinstance(node, ast.Assert):
                continue
            for compare in ast.walk(node.test):
                if (
                    isinstance(compare, ast.Compare)
                    and any(isinstance(op, ORDERINGS) for op in compare.ops)
                    and _measures(compare, timed, elapsed)
                ):
                    yield node.lineno
                    break


def _violations(check: Callable[[str], Iterator[int]]) -> list[str]:
    found = []
    for path in _sources():
        for line in check(path.read_text()):
            found.append(f"{path.relative_to(TESTS.parent)}:{line}")
    return found


def test_every_non_zero_sleep_in_tests_says_why() -> None:
    assert _violations(uncommented_sleeps) == []


def test_no_assertion_bounds_a_wall_clock_measurement() -> None:
    assert _violations(wall_clock_asserts) == []


# -- the checks themselves can fail --------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("async def f():\n    await asyncio.sleep(0.1)\n", [2]),
        ("def f():\n    time.sleep(1)\n", [2]),
        ("async def f():\n    await asyncio.sleep(0.1)  # virtual\n", []),
        ("async def f():\n    # the server's own pace\n    await asyncio.sleep(d)\n", []),
        ("async def f():\n    await asyncio.sleep(0)\n    await asyncio.sleep(0.0)\n", []),
        ("async def f():\n    while x:  # noqa: ASYNC110\n        await asyncio.sleep(1)\n", [3]),
    ],
)
def test_the_sleep_check_finds_an_uncommented_sleep(source: str, lines: list[int]) -> None:
    assert list(uncommented_sleeps(source)) == lines


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("def f():\n    s = time.monotonic()\n    g()\n    assert time.monotonic() - s < 1\n", [4]),
        (
            "def f():\n    s = time.perf_counter()\n    e = time.perf_counter() - s\n"
            "    assert e >= 0.5\n",
            [4],
        ),
        ("def f():\n    e = time.time() - s\n    r = n / e\n    assert r > 0.6 * expected\n", [4]),
        ("def f():\n    assert deadline(time.time() + 30) > 0\n", []),
        ("def f():\n    s = clock.monotonic()\n    assert clock.monotonic() - s < 1\n", []),
        ("def f():\n    s = loop.time()\n    assert loop.time() - s == 30.0\n", []),
        ("def f():\n    now = time.time()\n    assert push(now) == 1\n", []),
    ],
)
def test_the_assert_check_finds_a_wall_clock_bound(source: str, lines: list[int]) -> None:
    assert list(wall_clock_asserts(source)) == lines
