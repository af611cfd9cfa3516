"""Permission rules from the page: remembered answers, and the dashboard's rule API."""

from __future__ import annotations

import asyncio

from tests.web.conftest import base_url
from tests.web.test_chat import next_event, sse_events


async def chat(client, url, session, text):
    async with client.post(url + "/api/chat", json={"session": session, "text": text}) as r:
        return (await r.json())["reply"]


async def test_always_allow_this_exact_call_from_the_page(web_host, client):
    url = base_url(web_host)
    wipe = 'call wipe_disk {"target": "sdb"}'
    async with client.get(url + "/api/events?session=ops") as page:
        stream = sse_events(page)
        await next_event(stream, "hello")
        turn = asyncio.ensure_future(chat(client, url, "ops", wipe))
        question = await next_event(stream, "question")
        assert [c["value"] for c in question["choices"]] == ["conversation", "always"]
        answer = {"session": "ops", "id": question["id"], "answer": "always"}
        async with client.post(url + "/api/answer", json=answer) as response:
            assert response.status == 200
        async with asyncio.timeout(10):
            assert "wiped sdb" in await turn
    # the same call, in a session with no page open (nobody to ask): the answer stands
    assert "wiped sdb" in await chat(client, url, "other", wipe)
    assert "Not allowed" in await chat(client, url, "other", 'call wipe_disk {"target": "sda"}')
    async with client.get(url + "/api/rules") as response:
        listed = await response.json()
    assert listed["rules"] == []
    (remembered,) = listed["remembered"]
    assert remembered["origin"] == "remembered" and remembered["created_by"] == "web:web"
    assert (remembered["tool"], remembered["args"], remembered["exact"]) == (
        "wipe_disk",
        {"target": "sdb"},
        True,
    )


async def test_the_dashboard_adds_tests_and_removes_rules(web_host, client):
    url = base_url(web_host)
    rule = {"tool": "wipe_*", "action": "allow", "args": {"target": "re:scratch-[0-9]+"}}
    async with client.post(url + "/api/rules", json=rule) as response:
        assert response.status == 200
        added = await response.json()
    # nobody can be asked in this session, yet the rule lets the call run
    assert "wiped scratch-1" in await chat(
        client, url, "dash", 'call wipe_disk {"target": "scratch-1"}'
    )
    test = {"tool": "wipe_disk", "arguments": {"target": "scratch-2"}}
    async with client.post(url + "/api/rules/test", json=test) as response:
        explained = await response.json()
    assert explained["action"] == "allow" and explained["rule"]["ref"] == added["ref"]
    assert explained["matched"][1] == "args.target 're:scratch-[0-9]+' matched 'scratch-2'"
    async with client.get(url + "/api/rules") as response:
        listed = await response.json()
    assert [r["ref"] for r in listed["rules"]] == [added["ref"]]
    assert "a deny that matches too beats an ask above it" in listed["precedence"]
    # a deny added below that allow: the answer names the allow, which still decides first
    deny = {"tool": "wipe_disk", "action": "deny"}
    async with client.post(url + "/api/rules", json=deny) as response:
        notes = (await response.json())["notes"]
    assert notes == [
        f"rule {added['ref']} (allow wipe_*, with arguments) comes before it and still "
        "decides the calls it matches"
    ]
    assert "wiped scratch-3" in await chat(
        client, url, "dash", 'call wipe_disk {"target": "scratch-3"}'
    )
    for bad, says in (
        ({"tool": "x", "action": "maybe"}, "action: expected one of allow, ask, deny"),
        ({"tool": "x", "action": "deny", "args": {"a": "re:("}}, "args.a: not a regular"),
        ({"tool": "x", "action": "deny", "who": {"user": []}}, "did you mean 'users'"),
    ):
        async with client.post(url + "/api/rules", json=bad) as response:
            assert response.status == 400 and says in (await response.json())["error"]
    async with client.post(url + "/api/rules/remove", json={"id": added["id"]}) as response:
        assert response.status == 200
    for gone in (added["id"], 2**64, -1):  # a number past SQLite's integers names no row too
        async with client.post(url + "/api/rules/remove", json={"id": gone}) as response:
            assert response.status == 404
    assert "Not allowed" in await chat(
        client, url, "dash", 'call wipe_disk {"target": "scratch-1"}'
    )


async def test_the_rule_api_refuses_wrong_types_floods_and_control_characters(web_host, client):
    """JSON says what type a value is: a number where a pattern belongs is a mistake or a
    probe, not text. Each refusal is a 400 naming the field, and nothing is stored."""
    url = base_url(web_host)
    many = {f"a{i}": "x" for i in range(1000)}
    for bad, says in (
        ({"tool": 5, "action": "deny"}, "tool: expected a string, got 5"),
        ({"tool": "x", "action": "deny", "args": {"n": 5}}, "args.n: expected a string, got 5"),
        ({"tool": "x", "action": "deny", "exact": "yes"}, "exact: expected true or false"),
        ({"tool": "x", "action": "deny", "who": {"users": [7]}}, "who.users[0]: expected a str"),
        ({"tool": "x", "action": "deny", "args": many}, "args: at most 100 patterns, got 1000"),
        ({"tool": "x" * 5000, "action": "deny"}, "tool: at most 1000 characters, got 5000"),
        ({"tool": "x", "action": "deny", "args": {"a": "b\x00c"}}, "args.a: a control character"),
        ({"tool": "x\ty", "action": "deny"}, "tool: a control character"),
    ):
        async with client.post(url + "/api/rules", json=bad) as response:
            assert response.status == 400, bad
            assert says in (await response.json())["error"], bad
    async with client.get(url + "/api/rules") as response:
        assert (await response.json())["rules"] == []
