"""The web page in a real headless Chromium (Debian's, driven by its chromedriver;
tests/web/browser.py starts it and drives the page)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from bothost.host.wiring import tick_once
from bothost.models import Address
from bothost.platform import Question
from tests.helpers import make_host
from tests.peers import missing, program
from tests.web.browser import WAIT, Page, chromium
from tests.web.conftest import base_url, host_config, signed


@pytest.fixture(scope="module")
def driver():
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing("selenium (pip install selenium)")
    with chromium(program("chromium"), program("chromedriver")) as browser:
        yield browser


@pytest.fixture
async def page(web_host, driver):
    return Page(driver, base_url(web_host))


async def test_a_message_gets_a_streamed_reply(page):
    await page.open("p-stream")
    await page.say("help")
    bubble = await page.wait_for(".msg.bot.done", "offline agent")
    assert int(await page.run(bubble.get_attribute, "data-deltas")) >= 1
    user = await page.wait_for(".msg.user", "help")
    assert user is not None


async def test_a_tool_call_is_approved_in_the_page(page, web_host):
    await page.open("p-approve")
    await page.say('call wipe_disk {"target": "sdc"}')
    question = await page.wait_for(".question", "wipe_disk")
    assert "sdc" in question.text
    await page.click(".question .approve")
    await page.wait_for(".msg.bot.done", "wiped sdc")
    await page.wait_for(".question.closed", "Approved.")
    calls = await web_host.store.run(
        lambda db: db.execute("SELECT tool, status FROM tool_calls").fetchall()
    )
    assert calls == [("wipe_disk", "ok")]
    await page.wait_for("#tool-calls td", "wiped sdc")  # the dashboard lists it


async def test_the_dashboard_shows_todays_model_usage(page, web_host):
    row = (time.time(), time.strftime("%Y-%m-%d", time.gmtime()), "slack:U1")
    await web_host.store.run(
        lambda db: db.execute(
            "INSERT INTO llm_usage (at, day, kind, provider, model, input_tokens,"
            " output_tokens, cached_tokens, estimated, user_key)"
            " VALUES (?, ?, 'turn', 'openai', 'gpt-a', 1200, 34, 1000, 1, ?)",
            row,
        )
    )
    await page.open("p-usage")
    cell = await page.wait_for("#usage td", "slack:U1")
    assert "~1,234" in (await page.run(lambda: cell.find_element("xpath", "..").text))


async def test_a_briefing_from_a_pushed_event_arrives_in_the_page(page, web_host, client, secret):
    await page.open("p-brief")
    body, headers = signed(
        secret,
        {
            "type": "alert",
            "payload": {"id": "disk-1", "summary": "db-1 disk at 95%", "severity": "critical"},
        },
    )
    async with client.post(
        base_url(web_host) + "/webhook/events/ops", data=body, headers=headers
    ) as response:
        assert response.status == 200
    result = await tick_once(web_host, "test")
    assert [b.text for b in result.briefings if "db-1 disk at 95%" in b.text]
    await page.wait_for("#briefings .briefing", "db-1 disk at 95%")
    # remind me later: the event comes back at the first tick after an hour
    await page.click("#briefings .item-actions button.snooze")
    await page.wait_for("#briefings .feedback-done", "snoozed")
    status = await web_host.store.run(
        lambda db: db.execute(
            "SELECT status, snoozed_until > ? FROM events", (time.time() + 3000,)
        ).fetchall()
    )
    assert status == [("snoozed", 1)]


async def test_less_like_this_is_proposed_and_applied_in_the_page(page, web_host):
    from bothost.events import triage_store

    await page.open("p-like")
    mail = {"id": "m1", "summary": "50% off", "from": "Deals <news@deals.example>"}
    await web_host.ingest_event("gmail", "event/new_email", mail)
    await tick_once(web_host, "test")
    await page.wait_for("#briefings .briefing", "50% off")
    await page.click("#briefings .item-actions button.less")
    said = "Less like this: mail from news@deals.example → low (was normal)."
    await page.wait_for("#briefings .like-this .proposal", said)
    assert await web_host.store.run(triage_store.load) == ([], [])
    await page.click("#briefings .like-this button.apply")
    await page.wait_for("#briefings .like-this .feedback-done", "Added triage rule #1")
    [rule] = (await web_host.store.run(triage_store.load))[0]
    assert (rule.origin, rule.added_by, rule.rule.priority) == ("button", "web:web", "low")


async def test_a_form_question_is_answered_in_the_page(page, web_host):
    await page.open("p-form")
    schema = {
        "type": "object",
        "required": ["city"],
        "properties": {
            "city": {"type": "string", "title": "City"},
            "days": {"type": "integer", "title": "Days", "default": 3},
        },
    }
    asked = asyncio.ensure_future(
        web_host.active["web"].ask(
            Address("web", "p-form"),
            Question("weather asks: which city?", kind="form", schema=schema),
        )
    )
    field = await page.wait_for(".question input[name=city]")
    await page.run(field.send_keys, "Zurich")
    await page.click(".question .submit")
    async with asyncio.timeout(WAIT):
        assert await asked == {"city": "Zurich", "days": 3}


async def test_a_form_offers_the_choices_of_mcp_elicitation_schemas(page, web_host):
    # found with server-everything's trigger-elicitation-request: its titled enums (oneOf of
    # const/title), legacy enumNames and multi-selects (type array) were plain text boxes,
    # and a multi-select's answer went back as one string, which the server refuses
    from selenium.webdriver.support.ui import Select

    await page.open("p-choices")
    titled = [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Wonder Woman"}]
    schema = {
        "type": "object",
        "properties": {
            "hero": {"type": "string", "title": "Hero", "oneOf": titled, "default": "h1"},
            "pet": {"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]},
            "tools": {
                "type": "array",
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Drums"]},
                "default": ["Guitar"],
            },
            "fish": {
                "type": "array",
                "items": {
                    "anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Salmon"}]
                },
            },
        },
    }
    asked = asyncio.ensure_future(
        web_host.active["web"].ask(
            Address("web", "p-choices"),
            Question("everything asks: your favourites?", kind="form", schema=schema),
        )
    )
    picks = {"hero": "Wonder Woman", "pet": "Dogs", "tools": "Piano", "fish": "Salmon"}
    for name, label in picks.items():
        element = await page.wait_for(f".question select[name={name}]")
        await page.run(Select(element).select_by_visible_text, label)
    await page.click(".question .submit")
    async with asyncio.timeout(WAIT):
        assert await asked == {
            "hero": "h2",
            "pet": "p2",
            "tools": ["Guitar", "Piano"],
            "fish": ["f2"],
        }


async def test_media_a_reply_names_is_shown_in_the_page(page, web_host, home):
    # found calling server-everything's get-tiny-image through a turn: the image was saved
    # and the reply named /media/<file>, but the page showed only that path as text, so a
    # person never saw the picture (nor could click it)
    import base64

    from bothost.mcp.media import save_base64

    # the PNG signature is all the page needs; importing a PNG from tests/mcp pulled in
    # its conftest's imports, which only resolve when tests/mcp runs in the same session
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode()
    picture = save_base64(home / "media", png, "image/png")
    sound = save_base64(home / "media", "UklGRg==", "audio/wav")

    def show_media() -> str:
        """Returns saved media."""
        return f"[image: /media/{picture.name}] and [audio: /media/{sound.name}]"

    web_host.registry.register(show_media)
    await page.open("p-media")
    await page.say("call show_media {}")
    image = await page.wait_for(".msg.bot.done img.media")
    assert (await page.run(image.get_attribute, "src")).endswith(f"/media/{picture.name}")
    audio = await page.wait_for(".msg.bot.done audio.media")
    assert (await page.run(audio.get_attribute, "src")).endswith(f"/media/{sound.name}")


ECHO_SERVER = Path(__file__).resolve().parent.parent / "mcp_servers" / "echo_server.py"


@pytest.fixture
async def mcp_host(home, tmp_path, secret):
    data = host_config(tmp_path, secret)
    data["mcp"] = {"servers": {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}}
    host = make_host(home, data)
    await host.start(tick=False)
    try:
        async with asyncio.timeout(WAIT):
            while not [s for s in host.mcp.status() if s.name == "echo" and s.state == "ready"]:
                await asyncio.sleep(0.05)
        yield host
    finally:
        await host.stop()


async def test_an_mcp_elicitation_is_answered_in_the_page(mcp_host, driver):
    page = Page(driver, base_url(mcp_host))
    await page.open("p-mcp")
    await page.wait_for("#mcp td", "ready")  # the dashboard lists the server and its tools
    await page.wait_for("#mcp td", "ask, echo")
    await page.say('call mcp__echo__ask {"question": "Which city?"}')
    field = await page.wait_for(".question input[name=answer]")
    assert "Which city?" in (await page.wait_for(".question", "echo")).text
    await page.run(field.send_keys, "Zurich")
    await page.click(".question .submit")
    await page.wait_for(".msg.bot.done", "answer: Zurich")


# A server that answers the handshake and its tool list, then exits: a crash loop.
FLAKY = """
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "flaky", "version": "1"}}
    elif m.get("method") == "tools/list":
        r = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
    if "tools" in r:
        sys.exit(3)
"""


async def test_the_dashboard_says_a_server_in_a_crash_loop_restarted(
    home, tmp_path, secret, driver
):
    # between its deaths the server reads "ready", its error cleared: only the count tells
    data = host_config(tmp_path, secret)
    data["mcp"] = {"servers": {"flaky": {"command": sys.executable, "args": ["-c", FLAKY]}}}
    host = make_host(home, data)
    await host.start(tick=False)
    try:
        async with asyncio.timeout(30):  # the first restart comes after the 1 s backoff
            while not [s for s in host.mcp.status() if s.name == "flaky" and s.restarts]:
                await asyncio.sleep(0.05)
        page = Page(driver, base_url(host))
        await page.open("p-flaky")
        table = await page.wait_for("#mcp", "restarted")
        row = next(
            line
            for line in (await page.run(lambda: table.text)).splitlines()
            if "restarted" in line
        )
        assert row.startswith("flaky ") and "(restarted " in row, row
    finally:
        await host.stop()


async def test_with_a_token_the_page_works_after_opening_the_token_link(
    home, tmp_path, secret, driver
):
    data = host_config(tmp_path, secret)
    data["platforms"]["web"] = {"port": 0, "token": "page-token"}
    host = make_host(home, data)
    await host.start(mcp=False, tick=False)
    try:
        page = Page(driver, base_url(host))
        await page.run(driver.get, base_url(host) + "/?token=page-token")
        assert (await page.run(lambda: driver.current_url)).endswith("/")
        await page.open("p-token")
        await page.say("help")
        await page.wait_for(".msg.bot.done", "offline agent")
    finally:
        await host.stop()


# the page's dashboard poll (3 s: POLL_MS in app.js) made this fast for one test: each poll
# renders the rules panel afresh, so an element found there goes stale soon after, as it
# did now and then at 3 s (StaleElementReferenceException in the test below)
FAST_POLL_MS = 100
FAST_POLL = f"""
const wait = window.setTimeout;
window.setTimeout = (fn, ms, ...rest) => wait(fn, ms === 3000 ? {FAST_POLL_MS} : ms, ...rest);
"""


@pytest.fixture
def fast_poll(driver):
    """The page, opened after this, polls its dashboard (and re-renders its rules panel)
    every FAST_POLL_MS."""
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": FAST_POLL})
    yield
    driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", added)


async def test_allow_for_this_conversation_and_the_rules_panel_in_the_page(
    page, web_host, fast_poll
):
    await page.open("p-rules")
    await page.say('call wipe_disk {"target": "sdd"}')
    await page.wait_for(".question", "wipe_disk")
    await page.click(".question .approve-choice")  # the first: allow for this conversation
    await page.wait_for(".msg.bot.done", "wiped sdd")
    await page.wait_for(".question.closed", "Approved: allow for this conversation.")
    await page.wait_for("#rules tr.rule-remembered", "conversation=web:p-rules")
    await page.say('call wipe_disk {"target": "sde"}')  # not asked again here
    await page.wait_for(".msg.bot.done", "wiped sde")

    def add_rule():
        form = page.driver.find_element("id", "rule-add")
        form.find_element("name", "tool").send_keys("wipe_*")
        form.find_element("name", "args").send_keys('{"target": "prod-*"}')
        form.find_element("css selector", "select[name=action] option[value=deny]").click()
        form.find_element("css selector", "button[type=submit]").click()

    await page.run(add_rule)
    await page.wait_for("#rule-add .rule-result", "Added #2.")
    await page.wait_for("#rules tr.rule-stored", "target=prod-*")
    await page.say('call wipe_disk {"target": "prod-db"}')
    await page.wait_for(".msg.bot.done", "refused by permission rule #2")
    await page.click("#rules tr.rule-stored .remove-rule")
    await page.run(
        page._wait,
        lambda d: not d.find_elements("css selector", "#rules tr.rule-stored"),
        "removal",
    )
    rules = await web_host.queries.permission_rules()
    assert rules["rules"] == [] and [r["origin"] for r in rules["remembered"]] == ["remembered"]


async def test_new_conversation_clears_the_page(page):
    await page.open("p-new")
    await page.say("help")
    await page.wait_for(".msg.bot.done", "offline agent")
    await page.click("#new")
    await page.wait_for(".msg.bot", "Started a new conversation.")
    left = await page.run(lambda: page.driver.find_elements("css selector", ".msg.user"))
    assert left == []  # the page shows the new conversation from its first line
    await page.open("p-new")  # a reload shows it so too
    await page.wait_for("#conn", "live")
    shown = await page.run(lambda: page.driver.find_element("id", "log").text)
    assert "help" not in shown
