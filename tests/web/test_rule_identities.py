"""Permission rules and remembered answers name people and channels with their platform.

A webhook's ``user`` and ``channel`` are names its sender chose: a rule written for a Slack
id, or an answer a Slack user asked to remember, never covers a signed webhook message that
claims the same id. Each test drives a real signed ``POST /webhook/message`` through the host,
with the fake OpenAI model calling the destructive ``wipe_disk``; the webhook platform has
nobody to ask, so without a rule that allows it the call is refused.
"""

from __future__ import annotations

import aiohttp
import pytest

from bothost.models import Address, IncomingMessage
from bothost.platform import ALLOW_ALWAYS
from bothost.rules import store as rule_store
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result
from tests.helpers import make_host
from tests.web.conftest import base_url, host_config, signed

WIPE = {"tool_calls": [{"name": "wipe_disk", "arguments": {"target": "db-1"}}]}


def echo(body):
    return {"text": last_tool_result(body)}


@pytest.fixture
async def start(home, tmp_path, secret, fake_llm):
    """Start a host with webhooks on, the fake model and these ``permissions``."""
    hosts = []

    async def started(permissions):
        data = host_config(tmp_path, secret, llm=fake_llm.openai_config())
        host = make_host(home, {**data, "permissions": permissions})
        await host.start(mcp=False, tick=False)
        hosts.append(host)
        return host

    yield started
    for host in hosts:
        await host.stop()


async def webhook_turn(host, fake_llm, secret, user, channel=None):
    """One signed webhook message whose turn calls wipe_disk; the reply's text."""
    fake_llm.script = [WIPE, echo]
    data = {"text": "wipe it", "user": user}
    if channel is not None:
        data["channel"] = channel
    body, headers = signed(secret, data)
    async with aiohttp.ClientSession() as client:
        async with client.post(
            base_url(host) + "/webhook/message", data=body, headers=headers
        ) as response:
            assert response.status == 200, await response.text()
            return (await response.json())["reply"]


REFUSED = "Not allowed: nobody answered."


@pytest.mark.parametrize(
    "who",
    [
        {"users": ["U0123ANA"]},  # a bare id of Slack's shape is a Slack id
        {"users": ["slack:U0123ANA"]},
        {"channels": ["C0OPS0001"]},
        {"channels": ["slack:C0OPS0001"]},
    ],
)
async def test_a_slack_rule_does_not_cover_a_webhook_claiming_the_same_id(
    start, fake_llm, secret, who
):
    host = await start([{"tool": "wipe_disk", "action": "allow", "who": who}])
    reply = await webhook_turn(host, fake_llm, secret, "U0123ANA", channel="C0OPS0001")
    assert reply == REFUSED


async def test_a_webhook_qualified_rule_covers_that_sender_only(start, fake_llm, secret):
    host = await start(
        [
            {"tool": "wipe_disk", "action": "allow", "who": {"users": ["webhook:ci-bot"]}},
            {"tool": "wipe_disk", "action": "allow", "who": {"channels": ["webhook:deploys"]}},
        ]
    )
    assert await webhook_turn(host, fake_llm, secret, "ci-bot") == "wiped db-1"
    assert await webhook_turn(host, fake_llm, secret, "ci-bot2") == REFUSED
    assert await webhook_turn(host, fake_llm, secret, "other", "deploys") == "wiped db-1"
    # a sender cannot name itself into another platform's identity
    assert await webhook_turn(host, fake_llm, secret, "webhook:ci-bot") == REFUSED


async def test_a_remembered_answer_from_slack_does_not_cover_a_webhook(start, fake_llm, secret):
    host = await start([])
    # a Slack user (not an admin) answers "always allow this exact call"
    asking = AskingPlatform((ALLOW_ALWAYS, "U0123ANA"))
    fake_llm.script = [WIPE, echo]
    slack = IncomingMessage(
        address=Address("slack", "C0OPS0001", "1.2"), text="wipe it", user="U0123ANA"
    )
    assert (await host.handle_message(slack, platform=asking)).text == "wiped db-1"
    _, answers = host.store.call(rule_store.load)
    assert answers[0].to_dict()["who"] == {"users": ["slack:U0123ANA"]}
    assert answers[0].created_by == "slack:U0123ANA"
    # the same exact call from a webhook sender who claims that id is not covered
    assert await webhook_turn(host, fake_llm, secret, "U0123ANA", "C0OPS0001") == REFUSED
    # while the same person on Slack is not asked again
    asking.answer = False
    fake_llm.script = [WIPE, echo]
    slack.address = Address("slack", "C0OPS0001", "9.9")
    assert (await host.handle_message(slack, platform=asking)).text == "wiped db-1"
    assert len(asking.questions) == 1
