"""How the page shows things, in headless Chromium: a briefing's items once with their
buttons, dashboard cells whole, a failed call as an error, the approval card before the
reply it led to, and a stopped reply kept."""

from __future__ import annotations

import time

import pytest

from bothost.host.wiring import tick_once
from tests.web.conftest import base_url
from tests.web.test_page import Page, driver, mcp_host, page  # noqa: F401  (the browser fixtures)
from tests.web.test_turn_display import HalfSaid

# lines a cell's own text takes: several when the cell broke inside a word or a number
LINES_OF = """
const range = document.createRange();
range.selectNodeContents(arguments[0]);
return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
"""


async def test_a_briefing_shows_each_item_once_with_its_buttons(page, web_host):  # noqa: F811
    await web_host.ingest_event(
        "ops", "alert", {"id": "d1", "summary": "db-1 disk at 95%", "severity": "critical"}
    )
    await tick_once(web_host, "test")
    await page.open("p-once")
    briefing = await page.wait_for("#briefings .briefing", "db-1 disk at 95%")
    text = await page.run(lambda: briefing.text)
    assert text.count("db-1 disk at 95%") == 1, text
    assert "[Ack]" not in text and "[Snooze]" not in text, text
    row = await page.wait_for("#briefings .item-actions li.item", "db-1 disk at 95%")
    buttons = await page.run(lambda: [b.text for b in row.find_elements("tag name", "button")])
    assert buttons[:2] == ["Ack", "Snooze 1h"]
    heading = await page.wait_for("#briefings .item-actions li.heading")
    assert await page.run(lambda: heading.text) == "URGENT"


@pytest.fixture
def narrow(driver):  # noqa: F811
    """A window whose dashboard column is about 300 px wide."""
    size = driver.get_window_size()
    driver.set_window_size(820, 900)
    yield
    driver.set_window_size(size["width"], size["height"])


async def test_dashboard_cells_do_not_break_words_or_numbers(page, web_host, client, narrow):  # noqa: F811
    row = {
        "session_id": "web:p-narrow",
        "tool": "mcp__ssh__exec",
        "arguments": "{}",
        "result": "connection refused by host db-1",
        "is_error": 1,
        "status": "ok",
        "duration_ms": 5263.0,
        "started_at": time.time(),
    }
    await web_host.store.run(lambda db: db.insert("tool_calls", row))
    async with client.post(
        base_url(web_host) + "/api/rules", json={"tool": "mcp__ssh__exec", "action": "ask"}
    ) as response:
        assert response.status == 200
    await page.open("p-narrow")
    call = await page.wait_for("#tool-calls tr.is-error", "mcp__ssh__exec")
    cells = await page.run(lambda: call.find_elements("tag name", "td"))
    assert await page.run(lambda: [c.text for c in cells[:3]]) == [
        "mcp__ssh__exec",
        "error",  # it ran and failed: not "ok" in red
        "5263",
    ]
    remove = await page.wait_for("#rules .remove-rule", "Remove")
    tool = await page.wait_for("#rules td", "mcp__ssh__exec")
    for element in (*cells[:3], remove, tool):
        lines = await page.run(page.driver.execute_script, LINES_OF, element)
        assert lines == 1, await page.run(lambda e=element: e.text)


async def test_the_approval_card_comes_before_the_reply_it_led_to(page):  # noqa: F811
    await page.open("p-order")
    await page.say('call wipe_disk {"target": "sdf"}')
    await page.click(".question .approve")
    reply = await page.wait_for(".msg.bot.done", "wiped sdf")
    card = await page.wait_for(".question.closed", "Approved.")
    after = await page.run(
        page.driver.execute_script,
        "return arguments[0].compareDocumentPosition(arguments[1])"
        " & Node.DOCUMENT_POSITION_FOLLOWING;",
        card,
        reply,
    )
    assert after, "the reply is above the card that asked for it"


async def test_stop_keeps_the_streamed_words_and_marks_them_stopped(page, web_host):  # noqa: F811
    web_host.llm.complete = HalfSaid("The first half of a long answer").complete
    await page.open("p-stop")
    await page.say("write me an essay")
    await page.wait_for(".msg.bot.streaming", "The first half of a long answer")
    await page.click("#stop")
    bubble = await page.wait_for(".msg.bot.stopped", "Stopped.")
    assert "The first half of a long answer" in await page.run(lambda: bubble.text)
    await page.open("p-stop")  # a reload shows what was shown live
    again = await page.wait_for(".msg.bot.stopped", "The first half of a long answer")
    assert "Stopped." in await page.run(lambda: again.text)


@pytest.fixture
def desktop(driver):  # noqa: F811
    """A 1280 px wide window, the width the screenshots in docs/screenshots are taken at."""
    size = driver.get_window_size()
    driver.set_window_size(1280, 900)
    yield
    driver.set_window_size(size["width"], size["height"])


async def test_the_mcp_table_fits_its_panel_when_no_server_has_an_error(
    mcp_host,  # noqa: F811
    driver,  # noqa: F811
    desktop,
):
    # seen in the screenshots: the empty error column kept a text column's width, so the
    # table scrolled sideways at 1280 px with nothing to show there
    web = Page(driver, base_url(mcp_host))
    await web.open("p-mcp-width")
    await web.wait_for("#mcp td", "ready")
    table = await web.wait_for("#mcp")
    widths = await web.run(
        driver.execute_script,
        "const panel = arguments[0].parentElement;return [panel.scrollWidth, panel.clientWidth];",
        table,
    )
    assert widths[0] <= widths[1], widths
