"""The page's conversations and ``/prompt`` completion, in headless Chromium: the list of
conversations (an earlier one opens read only, another session's opens to continue it), and
Tab in the message box completing a ``/prompt`` line from what the host suggests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import make_host, until
from tests.web.conftest import base_url, host_config
from tests.web.test_page import Page, driver, page  # noqa: F401  (the browser fixtures)

COMPLETING = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "completing_server.py"


def said(shown: Page) -> list[str]:
    """What the person's messages on the page read."""
    return [e.text for e in shown.driver.find_elements("css selector", "#log .msg.user")]


async def test_an_earlier_conversation_opens_read_only(page):  # noqa: F811
    await page.open("pc-a")
    await page.say("help")
    await page.wait_for(".msg.bot.done", "offline agent")
    await page.click("#new")
    await page.wait_for(".msg.bot", "Started a new conversation.")
    await page.say("zebra crossing")
    await page.wait_for(".msg.bot.done", "")
    await page.click("#conversations summary")
    await page.wait_for("#conversation-list a[aria-current]", "zebra crossing")
    await page.click("#conversation-list li.earlier a")  # the one /new ended: "help"
    await page.wait_for("#viewing", "read only")
    await page.wait_for(".msg.bot", "offline agent")
    assert await page.run(said, page) == ["help"]
    box = await page.wait_for("#chat-input")
    assert not await page.run(box.is_enabled)  # nothing is sent to an ended conversation
    await page.click("#back")
    await page.wait_for("#conn", "live")
    await page.wait_for(".msg.user", "zebra crossing")
    assert await page.run(said, page) == ["zebra crossing"]


async def test_another_sessions_conversation_is_continued_there(page):  # noqa: F811
    await page.open("pc-b")
    await page.say("tools")
    await page.wait_for(".msg.bot.done")
    await page.open("pc-c")
    await page.click("#conversations summary")
    await page.click('#conversation-list a[href="?session=pc-b"]')
    await page.wait_for("#conn", "live")
    await page.wait_for(".msg.user", "tools")
    url = await page.run(lambda: page.driver.current_url)
    assert url.endswith("?session=pc-b")
    await page.say("help")  # the page now speaks in pc-b
    await page.wait_for(".msg.bot.done", "offline agent")


@pytest.fixture
async def prompt_host(home, tmp_path, secret):
    data = host_config(tmp_path, secret)
    data["mcp"] = {"servers": {"wx": {"command": sys.executable, "args": [str(COMPLETING)]}}}
    host = make_host(home, data)
    await host.start(tick=False)
    try:
        await until(lambda: any(s.name == "wx" and s.state == "ready" for s in host.mcp.status()))
        yield host
    finally:
        await host.stop()


async def test_tab_completes_a_prompt_line(prompt_host, driver):  # noqa: F811
    from selenium.webdriver.common.keys import Keys

    page = Page(driver, base_url(prompt_host))  # noqa: F811  (this host's, not the fixture)
    await page.open("pc-prompt")
    box = await page.wait_for("#chat-input")

    def value():
        return box.get_attribute("value")

    await page.run(box.send_keys, "/prompt w" + Keys.TAB)  # one server: taken at once
    await page.run(page._wait, lambda d: value() == "/prompt wx/", "wx/")
    await page.run(box.send_keys, "fo" + Keys.TAB)
    await page.run(page._wait, lambda d: value() == "/prompt wx/forecast ", "the prompt")
    await page.run(box.send_keys, "city=Zu" + Keys.TAB)  # several: offered to pick from
    await page.wait_for("#suggestions button", "city='Zurich West'")
    await page.click("#suggestions li:nth-child(2) button")
    await page.run(page._wait, lambda d: value() == "/prompt wx/forecast city=Zug ", "Zug")
    shown = await page.run(lambda: page.driver.find_element("id", "suggestions").is_displayed())
    assert not shown  # a pick closes the list
