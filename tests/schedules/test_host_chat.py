"""On a running ``bothost run``: a reminder asked for in the web chat (the fake OpenAI calls
``schedule``) fires at its time on the web page; the dashboard lists jobs and cancels one."""

from __future__ import annotations

import aiohttp
import pytest
import yaml

from tests.fakes.llm import FakeLlm, last_tool_result
from tests.helpers import free_port
from tests.schedules.test_host_schedules import Running, wait_for

pytestmark = pytest.mark.timeout(180)


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo(body):
    return {"text": last_tool_result(body)}


@pytest.fixture
async def running(home, tmp_path):
    fake = await FakeLlm().start()
    port = free_port()
    config = tmp_path / "bothost.yaml"
    data = {
        "llm": fake.openai_config("fake-model"),
        "tick": {"enabled": False, "timezone": "UTC"},
        "platforms": {"web": {"host": "127.0.0.1", "port": port}, "console": {"enabled": False}},
    }
    config.write_text(yaml.safe_dump(data))
    host = Running(home, config, port)
    await host.start()
    yield host, fake
    await host.stop()
    await fake.stop()


async def post(host: Running, path: str, body: dict) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as client:
        async with client.post(f"http://127.0.0.1:{host.port}{path}", json=body) as response:
            return response.status, await response.json()


async def get(host: Running, path: str) -> dict:
    async with aiohttp.ClientSession() as client:
        async with client.get(f"http://127.0.0.1:{host.port}{path}") as response:
            assert response.status == 200
            return await response.json()


async def test_a_reminder_made_in_the_web_chat_fires_on_the_web_page(running):
    host, fake = running
    fake.script = [call("schedule", when="in 3s", text="call Ana"), echo]
    status, answer = await post(host, "/api/chat", {"session": "ana", "text": "remind me"})
    assert status == 200, answer
    assert answer["reply"].startswith("Reminder set for ") and answer["reply"].endswith(
        " UTC (job 1)."
    )

    async def fired() -> bool:
        return "Reminder: call Ana" in await host.web_briefings()

    await wait_for(fired, "the reminder on the web page")
    assert (await get(host, "/api/schedules"))["jobs"] == []  # a done job leaves the list


async def test_the_dashboard_lists_jobs_and_cancels_one(running):
    host, fake = running
    fake.script = [call("schedule", when="in 1h", text="first"), echo]
    fake.script += [call("schedule", when="in 2h", text="second"), echo]
    await post(host, "/api/chat", {"session": "ana", "text": "one"})
    await host.cli("schedule", "add", "--in", "3h", "--to", "web:ops", "from the terminal")
    await post(host, "/api/chat", {"session": "ana", "text": "two"})
    listed = (await get(host, "/api/schedules"))["jobs"]
    assert [(j["id"], j["owner"], j["target"], j["text"]) for j in listed] == [
        (1, "web:web", "web:ana", "first"),
        (2, listed[1]["owner"], "web:ops", "from the terminal"),
        (3, "web:web", "web:ana", "second"),
    ]
    assert listed[1]["owner"].startswith("console:")
    status, body = await post(host, "/api/schedules/cancel", {"id": 2})
    assert status == 200 and body["job"]["text"] == "from the terminal"
    assert [j["id"] for j in (await get(host, "/api/schedules"))["jobs"]] == [1, 3]
    status, body = await post(host, "/api/schedules/cancel", {"id": 2})
    assert (status, body) == (404, {"error": "job #2 is cancelled already"})
    status, body = await post(host, "/api/schedules/cancel", {"id": 99})
    assert (status, body) == (404, {"error": "no job #99"})
    status, body = await post(host, "/api/schedules/cancel", {"id": "2"})
    assert status == 400
    assert "cancelled" in await host.cli("schedule", "list", "--all")
