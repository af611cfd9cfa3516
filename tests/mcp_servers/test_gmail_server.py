"""The gmail server as a subprocess, driven by the official SDK client against the fake API."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

import pytest
from bothost.mcp_servers.google.auth import SCOPES

from tests.fakes.google_api import parse_sent
from tests.helpers import until

ARGV = [sys.executable, "-m", "bothost.mcp_servers.gmail"]
EVENT = "event/new_email"
AUTH = "event/auth_required"
CAPS = "bothost/capabilities"


@pytest.fixture
def gmail(mcp_stdio, fake, home):
    """Start the server (as often as a test likes) with a token file in the default place."""
    token = home / "secrets" / "google-gmail.json"
    token.parent.mkdir(mode=0o700)
    token.write_text(json.dumps(fake.authorized_user(SCOPES["gmail"])))
    env = {
        "GOOGLE_API_ENDPOINT": fake.url,
        "GOOGLE_TOKEN_URI": f"{fake.url}/token",
        "GMAIL_POLL_SECONDS": "0.1",
    }

    def start(**extra: str):
        return mcp_stdio(ARGV, env={**env, **extra}, events=[EVENT, AUTH])

    return start


def state_of(home) -> dict:
    path = home / "secrets" / "google-gmail.state.json"
    return json.loads(path.read_text()) if path.exists() else {}


async def test_new_message_is_announced_once_even_across_restarts(gmail, fake, home):
    fake.deliver("old@example.com", "Already there", "not news")
    async with gmail() as (client, events):
        await until(lambda: "history_id" in state_of(home))
        new_id = fake.deliver("Ana <ana@corp.com>", "Budget review", "Moved to 14:00.")
        [event] = await events.wait_for(EVENT)
        polls = fake.count("GET", "/history")
        await until(lambda: fake.count("GET", "/history") >= polls + 3)
        assert len(events.of(EVENT)) == 1
    assert event["id"] == new_id and event["thread_id"] == new_id
    assert event["from"] == "Ana <ana@corp.com>" and event["subject"] == "Budget review"
    assert event["snippet"] == "Moved to 14:00." and "INBOX" in event["labels"]
    assert event["summary"] == "New email from Ana <ana@corp.com>: Budget review"
    assert event["date"] and event["occurred_at"].endswith("Z")

    async with gmail() as (client, events):
        polls = fake.count("GET", "/history")
        await until(lambda: fake.count("GET", "/history") >= polls + 2)
        later = fake.deliver("sam@corp.com", "1:1", "See you")
        [again] = await events.wait_for(EVENT)
        assert again["id"] == later
        polls = fake.count("GET", "/history")
        await until(lambda: fake.count("GET", "/history") >= polls + 2)
        assert [e["id"] for e in events.of(EVENT)] == [later]


async def test_mail_that_arrived_while_stopped_is_announced_at_start(gmail, fake, home):
    async with gmail() as (client, events):
        await until(lambda: "history_id" in state_of(home))
    missed = fake.deliver("ana@corp.com", "While you were away", "hi")
    async with gmail() as (client, events):
        [event] = await events.wait_for(EVENT)
    assert event["id"] == missed


async def test_stale_history_id_resyncs_without_flooding_old_mail(gmail, fake, home):
    week_ago = datetime.now(UTC) - timedelta(days=7)
    for n in range(3):
        fake.deliver("old@example.com", f"Old {n}", "old", received=week_ago)
    async with gmail() as (client, events):
        await until(lambda: "history_id" in state_of(home))
        fake.expire_history()
        fresh = fake.deliver("ana@corp.com", "Fresh", "new")
        [event] = await events.wait_for(EVENT)
        assert event["id"] == fresh
        assert fake.count("GET", "/messages") >= 1  # the resync listing
        after = fake.deliver("sam@corp.com", "After the resync", "history works again")
        await events.wait_for(EVENT, count=2)
        assert [e["id"] for e in events.of(EVENT)] == [fresh, after]


async def test_mail_leaving_inbox_or_not_in_inbox_is_not_announced(gmail, fake, home):
    async with gmail() as (client, events):
        await until(lambda: "history_id" in state_of(home))
        fake.deliver("me@example.com", "Sent by me", "x", labels=("SENT",))
        inbox = fake.deliver("ana@corp.com", "For you", "y")
        [event] = await events.wait_for(EVENT)
        assert event["id"] == inbox


async def test_tools_read_search_label_and_list(gmail, fake):
    first = fake.deliver(
        "Ana <ana@corp.com>",
        "Quarterly numbers",
        "Numbers attached.",
        attachments=(("q3.xlsx", b"x" * 42),),
    )
    fake.deliver("bob@example.com", "Lunch?", "Noon?")
    async with gmail() as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {
            "search",
            "get_message",
            "get_thread",
            "send",
            "create_draft",
            "modify_labels",
            "mark_read",
            "list_labels",
        }
        assert tools["get_message"].meta[CAPS] == {
            "private": True,
            "untrusted": True,
            "egress": "none",
            "destructive": False,
        }
        assert tools["send"].meta[CAPS]["egress"] == "chosen"

        found = await client.call_tool("search", {"query": "from:ana@corp.com"})
        assert [m["id"] for m in found.structured_content["messages"]] == [first]
        assert found.structured_content["messages"][0]["subject"] == "Quarterly numbers"
        page = await client.call_tool("search", {"max_results": 1})
        assert page.structured_content["next_page_token"]

        message = (await client.call_tool("get_message", {"message_id": first})).structured_content
        assert message["body"].strip() == "Numbers attached."
        assert message["headers"]["From"] == "Ana <ana@corp.com>"
        assert message["attachments"][0]["filename"] == "q3.xlsx"
        assert message["attachments"][0]["size"] == 42

        thread = (await client.call_tool("get_thread", {"thread_id": first})).structured_content
        assert [m["id"] for m in thread["messages"]] == [first]

        names = await client.call_tool("list_labels", {})
        assert {"INBOX", "Label_1"} <= {x["id"] for x in names.structured_content["labels"]}
        labelled = await client.call_tool(
            "modify_labels", {"message_id": first, "add": ["work"], "remove": ["INBOX"]}
        )
        assert labelled.structured_content["labels"] == ["UNREAD", "Label_1"]
        await client.call_tool("mark_read", {"message_id": first})
        assert fake.messages[first]["labelIds"] == ["Label_1"]

        bad = await client.call_tool("modify_labels", {"message_id": first, "add": ["Nope"]})
        assert bad.is_error and "list_labels" in bad.content[0].text
        missing = await client.call_tool("get_message", {"message_id": "doesnotexist"})
        assert missing.is_error and "404" in missing.content[0].text


async def test_reply_keeps_thread_and_threading_headers(gmail, fake):
    original = fake.deliver(
        "Ana <ana@corp.com>", "Budget", "Can you review?", headers={"References": "<root@corp.com>"}
    )
    original_id = str(parse_sent(fake.raw[original])["Message-ID"])
    async with gmail() as (client, _):
        sent = await client.call_tool(
            "send", {"body": "Looks good.", "reply_to_message_id": original}
        )
        assert not sent.is_error, sent.content[0].text
        assert sent.structured_content["thread_id"] == original
        reply = parse_sent(fake.sent[-1])
        assert reply["To"] == "Ana <ana@corp.com>" and reply["Subject"] == "Re: Budget"
        assert reply["In-Reply-To"] == original_id
        assert reply["References"] == f"<root@corp.com> {original_id}"

        fresh = await client.call_tool(
            "send", {"to": ["sam@corp.com"], "cc": ["ana@corp.com"], "subject": "Hi", "body": "Yo"}
        )
        new_mail = parse_sent(fake.sent[-1])
        assert new_mail["Cc"] == "ana@corp.com" and "In-Reply-To" not in new_mail
        assert fresh.structured_content["thread_id"] != original

        draft = await client.call_tool(
            "create_draft", {"body": "Draft reply", "reply_to_message_id": original}
        )
        assert draft.structured_content["thread_id"] == original
        assert fake.drafts and fake.drafts[-1]["id"] == draft.structured_content["draft_id"]

        nobody = await client.call_tool("send", {"subject": "x", "body": "y"})
        assert nobody.is_error and "recipient" in nobody.content[0].text


async def test_missing_or_revoked_token_names_the_auth_command(gmail, fake, home):
    async with gmail(GOOGLE_TOKEN_FILE=str(home / "nowhere.json")) as (client, events):
        result = await client.call_tool("list_labels", {})
        assert result.is_error and "bothost-mcp-gmail auth" in result.content[0].text
        # The watcher says so once (for the briefing), not at every poll.
        [notice] = await events.wait_for(AUTH)
        assert notice["severity"] == "warning"
        assert notice["command"] == "bothost-mcp-gmail auth"
        assert "No Google token" in notice["summary"]
    fake.revoke_all()
    async with gmail() as (client, events):
        result = await client.call_tool("search", {"query": "x"})
        assert result.is_error and "bothost-mcp-gmail auth" in result.content[0].text
        assert "revoked" in result.content[0].text
        await events.wait_for(AUTH)
        refreshes = fake.count("POST", "/token")
        await until(lambda: fake.count("POST", "/token") >= refreshes + 3)
        assert len(events.of(AUTH)) == 1


async def test_watcher_resumes_once_a_token_appears(gmail, fake, home):
    later = home / "later.json"
    async with gmail(GOOGLE_TOKEN_FILE=str(later)) as (client, events):
        await events.wait_for(AUTH)
        later.write_text(json.dumps(fake.authorized_user(SCOPES["gmail"])))
        state = home / "google-gmail.state.json"  # next to the token file
        await until(lambda: state.exists() and "history_id" in json.loads(state.read_text()))
        arrived = fake.deliver("ana@corp.com", "Back", "online")
        [event] = await events.wait_for(EVENT)
        assert event["id"] == arrived
