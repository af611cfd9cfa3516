"""Model usage on the web side: /metrics counters and the dashboard's panel, after chats
with the fake OpenAI server through the web API."""

from __future__ import annotations

import pytest

from tests.fakes.llm import FakeLlm
from tests.helpers import make_host
from tests.web.conftest import base_url, host_config
from tests.web.test_ops import parse_metrics


@pytest.fixture
async def metered_host(home, tmp_path, secret):
    fake = await FakeLlm(usage={"input": 1000, "output": 100, "cached": 600}).start()
    data = host_config(
        tmp_path,
        secret,
        llm=fake.openai_config("gpt-a"),
        usage={
            "prices": {"gpt-a": {"input": 2.0, "output": 10.0, "cached": 0.5}},
            "budgets": {"user_daily": {"tokens": 1500}, "global_daily": {"tokens": 100000}},
        },
    )
    host = make_host(home, data)
    await host.start(mcp=False, tick=False)
    yield host, fake
    await host.stop()
    await fake.stop()


async def test_metrics_and_dashboard_show_model_usage(metered_host, client):
    host, fake = metered_host
    url = base_url(host)
    fake.script = [{"text": "one"}, {"text": "two"}]
    replies = []
    for text in ("hi", "again", "and again"):
        async with client.post(url + "/api/chat", json={"session": "u", "text": text}) as response:
            replies.append(await response.json())
    assert [r["outcome"] for r in replies] == ["replied", "replied", "refused"]
    assert "usage.budgets.user_daily" in replies[2]["reply"] and len(fake.requests) == 2

    async with client.get(url + "/metrics") as response:
        metrics = parse_metrics(await response.text())
    assert metrics[("bothost_llm_calls_total", '{model="gpt-a"}')] == 2
    assert metrics[("bothost_llm_calls_by_kind_total", '{kind="turn"}')] == 2
    tokens = {
        t: metrics[("bothost_llm_tokens_total", f'{{model="gpt-a",type="{t}"}}')]
        for t in ("input", "output", "cached", "cache_write")
    }
    assert tokens == {"input": 2000, "output": 200, "cached": 1200, "cache_write": 0}
    assert metrics[("bothost_llm_estimated_calls_total", '{model="gpt-a"}')] == 0
    # per call: 400 plain at 2.0, 600 cached at 0.5, 100 out at 10.0 per million = 0.0021
    cost = metrics[("bothost_llm_cost_total", '{currency="USD",model="gpt-a"}')]
    assert cost == pytest.approx(0.0042)

    async with client.get(url + "/api/dashboard") as response:
        usage = (await response.json())["usage"]
    assert usage["priced"] is True and usage["by"] == "user"
    (row,) = usage["rows"]
    assert row["key"] == "web:web" and row["calls"] == 2 and row["tokens"] == 2200
    budgets = {b["name"]: b for b in usage["budgets"]}
    assert budgets["user_daily"]["spent"] is True and budgets["user_daily"]["who"] == "web:web"
    assert budgets["global_daily"]["used"]["tokens"] == 2200
    assert budgets["global_daily"]["spent"] is False
