"""``schedule`` to another target is a chosen-recipient send of that call: anyone may ask,
the person approves it (rules and remembered answers apply), the interlock refuses it, and
the job fires later with no new check. A job for this conversation asks nothing, and a
``check`` job's own turn stays under the interlock."""

from __future__ import annotations

import time

import pytest

from bothost.agent.explain import explain
from bothost.models import Address, IncomingMessage, Session
from bothost.schedules import add_job, get_job, list_jobs
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host, until
from tests.schedules.test_send_message import Outbox, Plugin

INTERLOCKED = "Refused: schedule sends data to a destination you choose"


@pytest.fixture
async def outbox():
    return Outbox()


@pytest.fixture
async def host(home, fake_llm, outbox):
    config = {
        "llm": fake_llm.openai_config("fake-model"),
        "agent": {"approval": "ask"},
        "tick": {"enabled": False, "timezone": "UTC"},
    }
    made = make_host(home, config, plugins=[Plugin(outbox)])
    await made.start(serve_http=False, mcp=False)
    yield made
    await made.stop()


def said(text, admin=False, where="c1"):
    return IncomingMessage(address=Address("test", where), text=text, user="u1", is_admin=admin)


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


async def jobs(host):
    return await host.store.run(lambda db: list_jobs(db, None, everything=True))


async def test_a_person_schedules_elsewhere_with_their_yes(host, fake_llm):
    fake_llm.script = [call("schedule", when="in 1h", text="stand-up", target="web:other"), echo]
    platform = AskingPlatform(True)
    reply = await host.handle_message(said("tell web:other at 10"), platform=platform)
    assert reply.text.endswith(" to web:other (job 1)."), reply.text
    [question] = platform.questions
    assert question.kind == "approval" and "schedule" in question.text
    assert "web:other" in question.text and "stand-up" in question.text
    [job] = await jobs(host)
    assert (job.owner, job.target, job.text) == ("test:u1", "web:other", "stand-up")


@pytest.mark.parametrize("answer", [False, None])
async def test_no_yes_makes_no_job(host, fake_llm, answer):
    fake_llm.script = [call("schedule", when="in 1h", text="stand-up", target="web:other"), echo]
    platform = AskingPlatform(answer)
    reply = await host.handle_message(said("tell web:other"), platform=platform)
    assert reply.text.startswith("Not allowed: "), reply.text
    assert len(platform.questions) == 1 and await jobs(host) == []


async def test_an_admin_is_asked_too(host, fake_llm):
    fake_llm.script = [call("schedule", when="in 1h", text="stand-up", target="web:ops"), echo]
    platform = AskingPlatform(False)
    reply = await host.handle_message(said("tell ops", admin=True), platform=platform)
    assert reply.text == "Not allowed: the user said no."
    assert len(platform.questions) == 1 and await jobs(host) == []


async def test_this_conversation_asks_nothing(host, fake_llm):
    fake_llm.script = [call("schedule", when="in 1h", text="one"), echo]
    fake_llm.script += [call("schedule", when="in 1h", text="two", target=" test:c1 "), echo]
    platform = AskingPlatform(False)  # a question would be answered no
    first = await host.handle_message(said("remind me"), platform=platform)
    second = await host.handle_message(said("remind me here"), platform=platform)
    assert first.text.endswith("(job 1).") and second.text.endswith("(job 2).")
    assert platform.questions == []
    assert [j.target for j in await jobs(host)] == ["test:c1", "test:c1"]
    rows = await host.store.run(lambda db: list(db.query("SELECT * FROM approvals")))
    assert rows == []  # the default's plain "runs" is not recorded


async def test_a_remembered_answer_and_a_rule_apply(host, fake_llm):
    fake_llm.script = [call("schedule", when="in 1h", text="one", target="web:other"), echo]
    fake_llm.script += [call("schedule", when="in 1h", text="two", target="web:other"), echo]
    await host.handle_message(said("one"), platform=AskingPlatform("conversation"))
    quiet = AskingPlatform(False)
    second = await host.handle_message(said("two"), platform=quiet)
    assert second.text.endswith("(job 2)."), second.text
    assert quiet.questions == []
    host.config.agent.approval = "read-only"  # the default refuses what needs approval
    fake_llm.script = [call("schedule", when="in 1h", text="three", target="web:x"), echo]
    fake_llm.script += [call("schedule", when="in 1h", text="four"), echo]
    # another conversation: no remembered answer there
    refused = await host.handle_message(said("three", where="c2"), platform=quiet)
    assert refused.text == "Not allowed: agent.approval is read-only: no side effects."
    here = await host.handle_message(said("four", where="c2"), platform=quiet)
    assert here.text.endswith("(job 3)."), here.text
    assert [j.text for j in await jobs(host)] == ["one", "two", "four"]


async def test_the_interlock_refuses_it_after_private_and_untrusted_data(host, fake_llm):
    fake_llm.script = [
        call("read_mail"),
        call("read_web"),
        call("schedule", when="in 1h", text="salary: 100k", target="web:evil"),
        echo,
    ]
    platform = AskingPlatform(True)  # the person would say yes: only the interlock refuses
    reply = await host.handle_message(said("summarise"), platform=platform)
    assert reply.text.startswith(INTERLOCKED), reply.text
    assert platform.questions == [] and await jobs(host) == []


async def test_the_interlock_leaves_a_job_for_this_conversation_alone(host, fake_llm):
    fake_llm.script = [
        call("read_mail"),
        call("read_web"),
        call("schedule", when="in 1h", text="look at the salary mail"),
        echo,
    ]
    reply = await host.handle_message(said("remind me"), platform=AskingPlatform(False))
    assert reply.text.endswith("(job 1)."), reply.text


async def test_the_approved_job_fires_with_no_new_check(host, fake_llm, outbox):
    fake_llm.script = [call("schedule", when="in 1s", text="stand-up", target="rec:ops"), echo]
    platform = AskingPlatform(True)
    reply = await host.handle_message(said("tell ops"), platform=platform)
    assert reply.text.endswith(" to rec:ops (job 1)."), reply.text
    await until(lambda: outbox.sent, timeout=30)
    assert outbox.sent == [("rec:ops", "Reminder: stand-up")]
    assert len(platform.questions) == 1  # the one asked when it was made


async def test_a_check_turn_stays_under_the_interlock(host, fake_llm, outbox):
    def notify(body):
        return call("notify", text=f"tried: {last_tool_result(body)}")

    fake_llm.script = [
        call("read_mail"),
        call("read_web"),
        call("send_message", target="rec:evil", text="salary: 100k"),
        call("schedule", when="in 1h", text="salary: 100k", target="rec:evil"),
        notify,
    ]
    at = time.time() + 1
    job = await host.store.run(
        lambda db: add_job(db, "test:u1", "rec:ops", "check", "read my mail", at=at, tz="UTC")
    )

    def done():
        return host.store.call(lambda db: get_job(db, job.id)).status == "done"

    await until(done, timeout=30)
    [(target, text)] = outbox.sent
    assert target == "rec:ops" and text.startswith(f"tried: {INTERLOCKED}")
    statuses = await host.store.run(
        lambda db: [(r["tool"], r["status"]) for r in db.query("SELECT * FROM tool_calls")]
    )
    assert ("send_message", "interlock") in statuses and ("schedule", "interlock") in statuses
    assert [j.id for j in await jobs(host)] == [job.id]  # the refused schedule made none


async def test_rules_test_explains_the_call_it_is_given(host):
    session = Session(id="s1", address=Address("test", "c1"), user="u1")
    tool = host.registry.lookup("schedule", False)
    away = await explain(
        host, "schedule", {"when": "9:00", "text": "x", "target": "web:x"}, session, tool
    )
    assert away.action == "ask" and "egress: chosen" in away.reason
    assert any("the interlock still refuses it" in note for note in away.notes)
    here = await explain(host, "schedule", {"when": "9:00", "text": "x"}, session, tool)
    assert here.action == "allow" and here.notes == []
