"""Scheduled jobs made in chat: the model's ``schedule``/``schedules`` calls, the offline
agent's ``remind``/``reminders``/``cancel N``, and whose jobs a person sees and cancels."""

from __future__ import annotations

import re
import time

import pytest

from bothost.models import Address, IncomingMessage
from bothost.schedules import add_job, list_jobs
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host


def said(address, text, user="u1", admin=False):
    return IncomingMessage(address=Address.parse(address), text=text, user=user, is_admin=admin)


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


@pytest.fixture
async def model_host(home, fake_llm):
    host = make_host(
        home,
        {"llm": fake_llm.openai_config("fake-model"), "tick": {"timezone": "Europe/Zurich"}},
    )
    await host.start(serve_http=False, mcp=False, tick=False)
    yield host
    await host.stop()


@pytest.fixture
async def offline_host(home):
    host = make_host(home, {"llm": {"provider": "offline"}, "tick": {"timezone": "UTC"}})
    await host.start(serve_http=False, mcp=False, tick=False)
    yield host
    await host.stop()


async def jobs(host, owner=None):
    return await host.store.run(lambda db: list_jobs(db, owner))


async def test_the_model_schedules_a_reminder_and_the_tool_echoes_the_time_in_the_zone(
    model_host, fake_llm
):
    fake_llm.script = [call("schedule", when="in 2h", text="call Ana"), echo]
    reply = await model_host.handle_message(said("test:c1", "remind me in 2 hours to call Ana"))
    assert re.fullmatch(
        r"Reminder set for (\d\d:\d\d|\w{3} \d{4}-\d\d-\d\d \d\d:\d\d) Europe/Zurich \(job 1\)\.",
        reply.text,
    ), reply.text
    [job] = await jobs(model_host)
    assert (job.owner, job.target, job.kind, job.text) == (
        "test:u1",
        "test:c1",
        "message",
        "call Ana",
    )
    assert job.tz == "Europe/Zurich" and abs(job.at - (time.time() + 7200)) < 60


async def test_a_check_on_a_cron_and_a_refused_time(model_host, fake_llm):
    fake_llm.script = [
        call("schedule", when="", text="disk over 90%?", kind="check", repeat="0 22 * * *"),
        echo,
        call("schedule", when="2020-01-01T00:00", text="too late"),
        echo,
    ]
    first = await model_host.handle_message(said("test:c1", "every night at 10"))
    assert first.text.startswith("Check set on cron '0 22 * * *' (Europe/Zurich), next ")
    second = await model_host.handle_message(said("test:c1", "in 2020"))
    assert second.text == "'2020-01-01T00:00' is in the past"
    assert [j.kind for j in await jobs(model_host)] == ["check"]


async def test_another_target_needs_a_yes_from_anyone(model_host, fake_llm):
    # approval by asking (test_schedule_elsewhere.py); here nobody can be asked, so no job
    fake_llm.script = [call("schedule", when="in 1h", text="stand-up", target="web:ops"), echo]
    fake_llm.script += [call("schedule", when="in 1h", text="stand-up", target="web:ops"), echo]
    refused = await model_host.handle_message(said("test:c1", "tell ops"))
    assert refused.text == "Not allowed: nobody to ask for approval."
    admin = await model_host.handle_message(said("test:c1", "tell ops", admin=True))
    assert admin.text == "Not allowed: nobody to ask for approval."
    assert await jobs(model_host) == []


async def test_a_person_sees_and_cancels_only_their_own_jobs_an_admin_all(model_host, fake_llm):
    def add(owner, text):
        return lambda db: add_job(
            db, owner, "test:c1", "message", text, at=time.time() + 3600, tz="UTC"
        )

    await model_host.store.run(add("test:u1", "mine"))
    await model_host.store.run(add("test:u2", "theirs"))
    fake_llm.script = [
        call("schedules", action="list"),
        echo,
        call("schedules", action="cancel", id=2),
        echo,
        call("schedules", action="list"),
        echo,
        call("schedules", action="cancel", id=2),
        echo,
    ]
    mine = await model_host.handle_message(said("test:c1", "my reminders"))
    assert "#1 reminder for " in mine.text and "mine" in mine.text and "theirs" not in mine.text
    nope = await model_host.handle_message(said("test:c1", "cancel 2"))
    assert nope.text == "no job #2 of yours"
    everyone = await model_host.handle_message(said("test:c1", "all", user="boss", admin=True))
    assert "mine" in everyone.text and "by test:u2: theirs" in everyone.text
    done = await model_host.handle_message(said("test:c1", "cancel 2", user="boss", admin=True))
    assert done.text == "Cancelled job 2: theirs"
    assert [j.text for j in await jobs(model_host)] == ["mine"]


async def test_the_offline_agent_reminds_lists_and_cancels(offline_host):
    set_ = await offline_host.handle_message(said("test:c1", "remind in 10m call Ana"))
    # 10 minutes on is today's clock, or (just before midnight) tomorrow's date and clock
    assert re.fullmatch(r"Reminder set for (\w{3} \S+ )?\d\d:\d\d UTC \(job 1\)\.", set_.text)
    at = await offline_host.handle_message(said("test:c1", "remind at tomorrow 9:00 stand-up"))
    assert re.fullmatch(r"Reminder set for \w{3} \d{4}-\d\d-\d\d 09:00 UTC \(job 2\)\.", at.text)
    listed = await offline_host.handle_message(said("test:c1", "reminders"))
    assert listed.text.splitlines()[0].startswith("#1 reminder for ")
    assert listed.text.splitlines()[1].endswith("→ test:c1: stand-up")
    other = await offline_host.handle_message(said("test:c1", "reminders", user="u2"))
    assert other.text == "You have no scheduled jobs."
    assert (await offline_host.handle_message(said("test:c1", "cancel 1"))).text == (
        "Cancelled job 1: call Ana"
    )
    assert (await offline_host.handle_message(said("test:c1", "cancel x"))).text.startswith(
        "Usage: cancel N"
    )
    assert (await offline_host.handle_message(said("test:c1", "remind call Ana"))).text.startswith(
        "Usage: remind at 09:00 TEXT"
    )
    assert [j.text for j in await jobs(offline_host)] == ["stand-up"]
