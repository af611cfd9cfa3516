"""Takes the web page's screenshots in docs/screenshots/ (described in its README.md).

Run by hand, from the repository: ``.venv/bin/python docs/screenshots/take.py``. It starts
a real host in a throwaway home — the fake OpenAI model of tests/fakes/llm.py so replies
have words, two real MCP servers (mcp-server-time, mcp-server-git), the test plugin's
destructive ``wipe_disk`` — and drives Debian's headless Chromium through it as a person
would, with the page tests' own helpers (tests/web/browser.py). Not a test: pytest collects
only tests/.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))  # the tests' helpers are imported, not copied

import aiohttp  # noqa: E402
import pytest  # noqa: E402
from bothost.plugins.web.signing import new_secret  # noqa: E402

from bothost.host.wiring import tick_once  # noqa: E402
from tests.fakes.llm import FakeLlm  # noqa: E402
from tests.helpers import make_host  # noqa: E402
from tests.peers import program, python_script  # noqa: E402
from tests.web.browser import Page, chromium  # noqa: E402
from tests.web.conftest import base_url, host_config, signed  # noqa: E402

DESKTOP = (1280, 900)
PHONE = (390, 844)
LIMIT = 250_000  # bytes: a picture the docs can carry without weighing the repository down
SESSION = "screenshots"

# what the ops team's webhook and the mail and code plugins would have pushed before a tick
EVENTS = [
    ("ops", "alert", {"id": "d1", "summary": "db-1 disk at 95%", "severity": "critical"}),
    (
        "ops",
        "alert",
        {
            "id": "c7",
            "summary": "TLS certificate of api.example.com expires in 6 days",
            "severity": "warning",
        },
    ),
    (
        "github",
        "pull_request",
        {
            "id": "pr-412",
            "summary": "Review requested: retry uploads on 503 (#412)",
            "severity": "info",
        },
    ),
    (
        "gmail",
        "event/new_email",
        {
            "id": "m1",
            "summary": "Quarterly figures for Thursday's board meeting",
            "from": "Ana Ruiz <ana@corp.example>",
            "labels": ["INBOX", "IMPORTANT"],
        },
    ),
    (
        "gmail",
        "event/new_email",
        {
            "id": "m2",
            "summary": "Your weekly digest: 12 new posts",
            "from": "News <digest@news.example>",
            "labels": ["INBOX", "CATEGORY_UPDATES"],
        },
    ),
]

DISKS = [
    {"host": "db-1", "mount": "/var/lib/postgresql", "used_pct": 95, "free_gb": 12},
    {"host": "web-2", "mount": "/var/log", "used_pct": 83, "free_gb": 7},
    {"host": "build-3", "mount": "/scratch", "used_pct": 41, "free_gb": 280},
]


def disk_usage(min_pct: int = 0) -> list[dict[str, Any]]:
    """Disks of the fleet filled to at least ``min_pct`` percent."""
    return [d for d in DISKS if d["used_pct"] >= min_pct]


# how the tick agent's model sorts each event (by the payload's id): priority, summary, why
TRIAGE = {
    "d1": ("urgent", "db-1 disk at 95%: full in about two days", "Postgres stops when it fills."),
    "c7": ("high", "api.example.com certificate expires in 6 days", "Renewal needs a deploy."),
    "m1": ("high", "Ana wants the quarterly figures before Thursday", "Board meeting."),
    "pr-412": ("normal", "Review requested on #412: retry uploads on 503", ""),
    "m2": ("low", "Weekly news digest", ""),
}
ACTIONS = {"urgent": ["ack", "snooze"], "high": ["ack"]}


def triage(prompt: str) -> dict[str, Any]:
    """The tick agent's answer: one ``notify`` call with an item per event shown."""
    items = []
    for event_id, payload in re.findall(r'<event id="(\d+)"[^>]*>\n(.*)', prompt):
        key = json.loads(payload).get("id")
        priority, summary, why = TRIAGE.get(key, ("normal", key or "an event", ""))
        item = {"priority": priority, "summary": summary, "event_ids": [int(event_id)]}
        item.update({"why": why} if why else {})
        item.update({"actions": ACTIONS[priority]} if priority in ACTIONS else {})
        items.append(item)
    return call("notify", {"items": items})


def model(body: dict[str, Any]) -> dict[str, Any]:
    """The fake model's next step: what a capable model would do with this conversation."""
    messages = body["messages"]
    last = messages[-1]
    asked = next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if "notify" in tools:  # the tick agent, not the chat
        return triage(asked) if last["role"] == "user" else {"text": "Reported."}
    if last["role"] == "tool":
        return after_tool(messages)
    if "Tokyo" in asked:
        return wanted("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}, tools, "time")
    if "disk" in asked.lower() and "wipe" not in asked.lower():
        return call("disk_usage", {"min_pct": 80})
    if "wipe" in asked.lower():
        return call("wipe_disk", {"target": "build-3:/scratch"})
    return {"text": "Sure. What would you like to know?"}


def wanted(name: str, arguments: dict[str, Any], tools: set[str], group: str) -> dict[str, Any]:
    """Call ``name``, first activating its server's tools when they are not offered yet."""
    if name in tools:
        return call(name, arguments)
    return call("activate_tools", {"groups": [group]})


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def after_tool(messages: list[dict[str, Any]]) -> dict[str, Any]:
    called = messages[-2]["tool_calls"][0]["function"]["name"]
    result = str(messages[-1]["content"])
    if called == "activate_tools":  # the time server's tools are offered now: the call itself
        return call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
    if called == "mcp__time__get_current_time":
        found = re.search(r'"datetime":\s*"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)', result)
        day, clock = found.groups() if found else ("today", "—")
        return {"text": f"It is {clock} in Tokyo (JST, UTC+9), on {day}."}
    if called == "disk_usage":
        return {
            "text": "Two disks are above 80 %:\n"
            "• db-1 /var/lib/postgresql — 95 % used, 12 GB free\n"
            "• web-2 /var/log — 83 % used, 7 GB free\n"
            "db-1 needs attention first: at this rate it is full in about two days."
        }
    if called == "wipe_disk":
        return {"text": "Done: build-3:/scratch is wiped."}
    return {"text": "Done."}


async def push_events(host, secret: str) -> None:
    """The events through the real intake: signed webhooks, as producers send them."""
    async with aiohttp.ClientSession() as client:
        for source, kind, payload in EVENTS:
            body, headers = signed(secret, {"type": kind, "payload": payload})
            url = f"{base_url(host)}/webhook/events/{source}"
            async with client.post(url, data=body, headers=headers) as response:
                response.raise_for_status()
    await tick_once(host, "screenshots")


async def wait_ready(host, names: set[str], seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while {s.name for s in host.mcp.status() if s.state == "ready"} < names:
            await asyncio.sleep(0.1)


def viewport(driver, size: tuple[int, int], mobile: bool = False) -> None:
    """The page's own size, whatever the headless window adds around it."""
    width, height = size
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)


def save(png: bytes, name: str) -> None:
    path = HERE / name
    path.write_bytes(png)
    note = "" if len(png) <= LIMIT else f"  (over {LIMIT // 1000} KB: make the window smaller)"
    print(f"{path.relative_to(ROOT)}: {len(png) // 1000} KB{note}")


async def shoot(page: Page, host, secret: str) -> None:
    driver = page.driver
    await page.run(viewport, driver, DESKTOP)
    await page.open(SESSION)
    await page.say("What time is it in Tokyo right now?")
    await page.wait_for(".msg.bot.done", "in Tokyo")
    await page.say("Which disks are filling up?")
    await page.wait_for(".msg.bot.done", "Two disks")
    await page.wait_for("#tool-calls td", "disk_usage")
    save(await page.run(driver.get_screenshot_as_png), "chat.png")

    await page.run(viewport, driver, PHONE, True)
    await page.open(SESSION)
    await page.wait_for(".msg.bot", "Two disks")
    save(await page.run(driver.get_screenshot_as_png), "chat-phone.png")

    await page.run(viewport, driver, DESKTOP)
    await push_events(host, secret)
    await page.open(SESSION)
    briefing = await page.wait_for("#briefings .briefing", "db-1 disk at 95%")
    section = await page.run(lambda: briefing.find_element("xpath", "ancestor::section"))
    save(await page.run(lambda: section.screenshot_as_png), "briefing.png")

    await page.say("Wipe the scratch disk on build-3, the old builds are not needed.")
    await page.wait_for(".question", "wipe_disk")
    save(await page.run(driver.get_screenshot_as_png), "approval.png")

    await page.click(".question .approve")
    await page.wait_for(".msg.bot.done", "is wiped")
    await page.wait_for("#tool-calls td", "wipe_disk")
    # the whole column at once: a page as tall as it is, so no panel is cut off by scrolling
    dashboard = await page.wait_for("#dashboard")
    tall = await page.run(driver.execute_script, "return arguments[0].scrollHeight;", dashboard)
    await page.run(viewport, driver, (DESKTOP[0], tall + 80))
    dashboard = await page.wait_for("#dashboard")
    save(await page.run(lambda: dashboard.screenshot_as_png), "dashboard.png")


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bothost-shots-") as tmp:
        tmp_path = Path(tmp)
        home = tmp_path / "home"
        home.mkdir(mode=0o700)
        os.environ["BOTHOST_HOME"] = str(home)
        os.environ.pop("BOTHOST_CONFIG", None)
        secret = new_secret()
        llm = await FakeLlm([model] * 50).start()
        data = host_config(tmp_path, secret)
        data["llm"] = llm.openai_config("gpt-4.1-mini")
        data["mcp"] = {
            "servers": {
                "time": {
                    "command": python_script("mcp-server-time"),
                    "args": ["--local-timezone", "Europe/Zurich"],
                },
                "git": {
                    "command": python_script("mcp-server-git"),
                    "args": ["--repository", str(ROOT)],
                },
            }
        }
        host = make_host(home, data)
        host.registry.register(disk_usage)
        await host.start(tick=False)
        try:
            await wait_ready(host, {"time", "git"})
            binary, chromedriver = program("chromium"), program("chromedriver")
            with chromium(binary, chromedriver) as driver:
                await shoot(Page(driver, base_url(host)), host, secret)
        finally:
            await host.stop()
            await llm.stop()


if __name__ == "__main__":
    started = time.monotonic()
    try:
        asyncio.run(main())
    except pytest.skip.Exception as missing:  # tests/peers.py names what to install
        sys.exit(f"take.py: {missing}")
    print(f"done in {time.monotonic() - started:.0f} s")
