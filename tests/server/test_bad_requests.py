"""Requests the service cannot use are refused with 400 and the reason, never a server
error: a schedule with neither cron nor every, a form body that is not one, a page
number beyond any SQLite offset (all found by the OpenAPI test's schemathesis run)."""

from __future__ import annotations

from skitter.server import Server

from .conftest import api

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
BROKEN_MULTIPART = {"Content-Type": "multipart/form-data; boundary=b"}


async def test_a_schedule_with_no_time_is_refused_not_a_crash(server: Server) -> None:
    data = {"name": "nightly", "project": "shop", "spider": "products"}
    status, answer = await api(server.url, "addschedule.json", data=data)
    assert (status, answer["status"]) == (400, "error")
    assert "cron or every" in answer["message"]
    status, page = await api(server.url, "schedules", data=data)
    assert status == 400 and "cron or every" in page


async def test_a_body_that_is_not_a_form_is_refused(server: Server) -> None:
    broken = b"--b\r\nnot a header--b--\r\n"
    for path in ("addversion.json", "schedule.json", "addschedule.json", "delschedule.json"):
        status, answer = await api(server.url, path, data=broken, headers=BROKEN_MULTIPART)
        assert status == 400, path
        assert "not a readable form" in answer["message"], path


async def test_a_page_number_beyond_any_history_is_refused(server: Server) -> None:
    status, text = await api(server.url, "?page=10838863919352367104")
    assert status == 400 and "page must be a number from 1" in text
    status, _ = await api(server.url, "?page=2")
    assert status == 200
