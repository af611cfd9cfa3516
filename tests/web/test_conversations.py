"""The web page's conversations over HTTP: ``GET /api/conversations`` lists every web
session's conversations (cut at each ``/new``), and ``/api/history?start=`` reads one."""

from __future__ import annotations

from tests.web.conftest import base_url


async def chat(client, url, session, text):
    async with client.post(url + "/api/chat", json={"session": session, "text": text}) as r:
        assert r.status == 200
        return (await r.json())["reply"]


async def test_the_page_lists_conversations_and_reads_an_earlier_one(web_host, client):
    url = base_url(web_host)
    await chat(client, url, "one", "help")
    assert await chat(client, url, "one", "/new") == "Started a new conversation."
    await chat(client, url, "one", "tools")
    await chat(client, url, "two", "help")
    async with client.get(url + "/api/conversations") as response:
        assert response.status == 200
        listed = (await response.json())["conversations"]
    assert [(c["session"], c["current"], c["first"], c["messages"]) for c in listed] == [
        ("two", True, "help", 2),
        ("one", True, "tools", 2),
        ("one", False, "help", 2),
    ]
    assert all(c["started_at"] <= c["updated_at"] for c in listed)
    earlier = listed[2]
    async with client.get(
        url + "/api/history", params={"session": "one", "start": str(earlier["start"])}
    ) as response:
        shown = (await response.json())["messages"]
    assert [m["role"] for m in shown] == ["user", "assistant"] and shown[0]["text"] == "help"
    async with client.get(url + "/api/history", params={"session": "one"}) as response:
        assert (await response.json())["messages"][0]["text"] == "tools"


async def test_a_bad_start_is_400(web_host, client):
    for start in ("-1", "x", "1.5", "٣", "9" * 19):
        params = {"session": "one", "start": start}
        async with client.get(base_url(web_host) + "/api/history", params=params) as response:
            assert response.status == 400, start
            assert "start must be" in (await response.json())["error"]
