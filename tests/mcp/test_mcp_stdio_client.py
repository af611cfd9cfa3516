"""Our client on stdio against the raw test server: paging, events, garbage, death, limits."""

from __future__ import annotations

import asyncio
import json
import time

from mcp_helpers import wait_for

from bothost.mcp.inbound import QUEUE_HIGH
from bothost.mcp.jsonrpc import McpError
from bothost.mcp.serverlog import log_path
from bothost.mcp.session import MAX_TOOL_PAGES, MAX_TOOLS
from tests.helpers import each

MAX_TOOL_PAGES_FILL = 50  # tools a page: MAX_TOOLS + 1 tools fit in far fewer pages than allowed


async def test_tools_list_follows_every_page(open_paging):
    session, _ = await open_paging(TOOL_COUNT=23, PAGE_SIZE=5)
    tools = await session.refresh_tools()
    assert len(tools) == 23
    assert session.tools_list_requests == 5
    echo = next(t for t in tools if t["name"] == "echo")
    assert echo["annotations"] == {"readOnlyHint": True}
    assert echo["_meta"] == {"bothost/capabilities": {"private": True}}


async def test_call_returns_text(open_paging):
    session, _ = await open_paging()
    result = await session.call_tool("echo", {"text": "hello"})
    assert (result.text, result.is_error) == ("hello", False)


async def test_unknown_tool_is_an_error_result(open_paging):
    session, _ = await open_paging()
    result = await session.call_tool("nope", {})
    assert result.is_error and "unknown tool nope" in result.text
    assert "32602" not in result.text  # codes are for programs (issue 15)


async def test_event_notifications_reach_the_callback_in_order(open_paging):
    session, recorder = await open_paging()
    await session.call_tool("push", {"count": 3, "type": "event/new_email"})
    await wait_for(lambda: len(recorder.events) == 3)
    assert [e[2]["id"] for e in recorder.events] == ["e0", "e1", "e2"]
    assert {(e[0], e[1]) for e in recorder.events} == {("paging", "event/new_email")}


async def test_garbage_lines_are_logged_and_skipped(open_paging, home):
    session, _ = await open_paging()
    result = await session.call_tool("garbage")
    assert result.text == "after garbage"
    assert (await session.call_tool("echo", {"text": "still fine"})).text == "still fine"
    log = log_path(home, "paging").read_text()
    assert "skipped a stdout line" in log and "this is not json" in log


async def test_death_mid_call_wakes_every_pending_call_at_once(open_paging):
    session, recorder = await open_paging()
    slow = [
        asyncio.create_task(session.call_tool("slow", {"seconds": 30}, timeout=60))
        for _ in range(3)
    ]
    await wait_for(lambda: len(session.pending) == 3)
    started = time.monotonic()
    died = await session.call_tool("die", timeout=60)
    results = await asyncio.gather(*slow)
    assert time.monotonic() - started < 5
    assert died.is_error and "exited with code 3" in died.text
    assert all(r.is_error and "exited with code 3" in r.text for r in results)
    assert recorder.closed == ["exited with code 3: dying on purpose"]  # with its last stderr
    assert (await session.call_tool("echo")).is_error  # no waiting on a dead server


async def test_timeout_sends_cancelled_and_returns_an_error(open_paging, home):
    session, _ = await open_paging()
    result = await session.call_tool("slow", {"seconds": 30}, timeout=0.3)
    assert result.is_error and "timed out after 0.3 s" in result.text
    await wait_for(lambda: "cancelled " in log_path(home, "paging").read_text())


async def test_over_long_line_is_refused_and_the_call_fails_fast(open_paging, home):
    session, _ = await open_paging(max_line=100_000)
    result = await session.call_tool("long_line", {"size": 300_000}, timeout=20)
    assert result.is_error and "longer than 100000 bytes" in result.text
    assert (await session.call_tool("echo", {"text": "ok"})).text == "ok"
    assert "refused a stdout line" in log_path(home, "paging").read_text()


async def test_over_long_answer_with_result_first_fails_fast_too(open_paging):
    session, _ = await open_paging(max_line=100_000)
    args = {"size": 300_000, "result_first": True}
    result = await session.call_tool("long_line", args, timeout=600)
    assert result.is_error and "longer than 100000 bytes" in result.text
    assert (await session.call_tool("echo", {"text": "ok"})).text == "ok"


async def test_progress_reaches_the_callback_while_the_call_runs(open_paging):
    session, _ = await open_paging()
    seen = []
    result = await session.call_tool("progress", on_progress=lambda p, t, m: seen.append((p, t, m)))
    assert result.text == "done"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_structured_content_wins_over_its_text_mirror(open_paging):
    session, _ = await open_paging()
    await session.refresh_tools()  # its outputSchema is checked, and the value matches it
    result = await session.call_tool("structured")
    assert result.structured == {"temperature": 21.5, "unit": "C"}
    assert json.loads(result.text) == result.structured  # one copy, not two
    assert not result.is_error


async def test_structured_content_that_breaks_its_output_schema_is_an_error(open_paging):
    # the spec: a server MUST send structured content matching the tool's outputSchema, and a
    # client SHOULD check it; a caller reading result.structured must get the declared shape
    session, _ = await open_paging(STRUCTURED="wrong")
    await session.refresh_tools()  # as the runner does at start: the call knows the schema
    result = await session.call_tool("structured")
    assert result.is_error
    assert "output schema" in result.text and "temperature: expected number" in result.text
    assert '"warm"' in result.text  # what the server wrote for people is still shown
    session, _ = await open_paging(name="paging2", STRUCTURED="missing")
    await session.refresh_tools()
    result = await session.call_tool("structured")
    assert result.is_error and "no structured content" in result.text


async def test_image_is_saved_under_media_and_linked(open_paging, home):
    session, _ = await open_paging()
    result = await session.call_tool("image")
    assert len(result.media) == 1 and result.media[0].parent == home / "media"
    assert result.media[0].read_bytes().startswith(b"\x89PNG")
    assert f"/media/{result.media[0].name}" in result.text and "a pixel" in result.text


async def test_elicitation_goes_to_ask_and_defaults_fill_the_rest(open_paging):
    questions = []

    async def ask(question):
        questions.append(question)
        return {"name": "Ana"}

    session, _ = await open_paging(ask=ask)
    result = await session.call_tool("elicit")
    assert json.loads(result.text) == {
        "action": "accept",
        "content": {"name": "Ana", "color": "blue"},
    }
    assert questions[0].kind == "form" and "Your name?" in questions[0].text


async def test_per_call_ask_wins_and_nobody_means_cancel(open_paging):
    session, _ = await open_paging()
    nobody = await session.call_tool("elicit")
    assert json.loads(nobody.text) == {"action": "cancel"}

    async def decline(question):
        return False

    declined = await session.call_tool("elicit", ask=decline)
    assert json.loads(declined.text) == {"action": "decline"}


async def test_roots_list_and_unknown_server_requests(open_paging):
    roots = [{"uri": "file:///srv/data", "name": "data"}]
    session, _ = await open_paging(roots=roots)
    assert json.loads((await session.call_tool("ask_roots")).text) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"roots": roots},
    }
    unknown = json.loads((await session.call_tool("ask_unknown")).text)
    assert unknown["id"] == "str-id-7" and unknown["error"]["code"] == -32601


async def test_log_notifications_and_stderr_go_to_the_server_log(open_paging, home):
    session, _ = await open_paging()
    await session.call_tool("log")
    await session.call_tool("flood_stderr", {"lines": 3})
    path = log_path(home, "paging")
    await wait_for(lambda: "stderr line 2" in path.read_text())
    text = path.read_text()
    assert "WARNING [message test] logged through MCP" in text


async def test_older_protocol_revision_is_accepted_and_logged(open_paging, home):
    session, _ = await open_paging(PROTOCOL="2025-03-26")
    assert session.protocol_version == "2025-03-26"
    assert (await session.call_tool("echo", {"text": "x"})).text == "x"
    assert "older protocol revision 2025-03-26" in log_path(home, "paging").read_text()


async def test_unsupported_protocol_revision_fails_the_start(home, open_paging):
    from bothost.mcp.jsonrpc import McpError

    # the error says what the server spoke and what bothost speaks: a person then knows
    # whether to pin the server back or upgrade bothost
    try:
        await open_paging(PROTOCOL="1999-01-01")
    except McpError as exc:
        assert str(exc) == (
            "the server answered with protocol revision '1999-01-01', which bothost does not "
            "speak (it speaks 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05)"
        )
    else:
        raise AssertionError("expected the start to fail")


async def test_a_cursor_that_comes_round_again_ends_the_listing(open_paging):
    # the last page names the second page's cursor: followed, it would page for ever
    session, _ = await open_paging(TOOL_COUNT=23, PAGE_SIZE=5, CURSORS="loop")
    tools = await session.refresh_tools()
    assert len(tools) == 23
    assert session.tools_list_requests == 5  # the cursor seen before is not asked again


async def test_a_server_that_pages_for_ever_is_refused(open_paging):
    session, _ = await open_paging(TOOL_COUNT=23, PAGE_SIZE=5, CURSORS="endless")
    try:
        await session.refresh_tools()
    except McpError as exc:
        assert exc.message == f"tools/list refused: still paging after {MAX_TOOL_PAGES} pages"
    else:
        raise AssertionError("expected the listing to be refused")
    assert session.tools_list_requests == MAX_TOOL_PAGES


async def test_a_list_that_changes_while_paged_is_listed_again_not_failed(open_paging):
    # the server's list changed between two pages: it said list_changed and refused the
    # cursor; the listing failed with "invalid cursor", and a server starting so was failed
    session, _ = await open_paging(TOOL_COUNT=23, PAGE_SIZE=5, CHANGE_WHILE_PAGING=1)
    tools = await session.refresh_tools()
    assert len(tools) == 23


async def test_a_list_that_changes_under_every_listing_fails_the_second(open_paging):
    session, _ = await open_paging(TOOL_COUNT=23, PAGE_SIZE=5, CHANGE_WHILE_PAGING=100)
    before = session.tools_list_requests
    try:
        async with asyncio.timeout(30):  # a bound: waiting listing after listing would hang
            await session.refresh_tools()
    except McpError as exc:
        assert exc.message == "invalid cursor: the tool list changed"
    else:
        raise AssertionError("expected the listing to fail")
    assert session.tools_list_requests - before == 4  # two listings of two pages each


async def test_list_changed_burst_is_coalesced(open_paging):
    session, recorder = await open_paging()
    await session.refresh_tools()
    before = session.tools_list_requests
    await session.call_tool("push", {"count": 5, "type": "notifications/tools/list_changed"})
    await wait_for(lambda: recorder.tool_changes and not session.inbound.relisting)
    pages = -(-len(session.tools) // 4)
    assert session.tools_list_requests - before <= 2 * pages


async def test_a_list_changed_flood_makes_no_task_per_notification(open_paging):
    session, recorder = await open_paging()
    await session.refresh_tools()
    before = session.tools_list_requests
    tasks_before = len(asyncio.all_tasks())
    await session.call_tool("push", {"count": 5000, "type": "notifications/tools/list_changed"})
    # a task per notification would show here; coalescing keeps one re-list (and its waiter)
    assert len(asyncio.all_tasks()) - tasks_before < 10
    await wait_for(lambda: recorder.tool_changes and not session.inbound.relisting)
    pages = -(-len(session.tools) // 4)
    assert session.tools_list_requests - before <= 2 * pages


async def test_a_tool_list_over_the_bounds_is_refused_as_a_whole(open_paging):
    session, _ = await open_paging(TOOL_COUNT=MAX_TOOLS + 1, PAGE_SIZE=MAX_TOOL_PAGES_FILL)
    try:
        await session.refresh_tools()
    except McpError as exc:
        assert "tools/list refused" in exc.message
    else:
        raise AssertionError("expected the listing to be refused")


async def test_an_event_flood_waits_in_the_pipe_instead_of_being_dropped(open_paging):
    session, _ = await open_paging()
    gate, seen = asyncio.Event(), []

    async def slow_store(source, type, payload):  # a store that has stalled for a moment
        await gate.wait()
        seen.append(payload["id"])

    session.on_events = each(slow_store)
    call = asyncio.ensure_future(session.call_tool("push", {"count": 20_000}, timeout=60))
    await wait_for(lambda: not session.inbound._room.is_set())  # the reader has paused
    gate.set()
    assert (await call).text == "pushed"
    await wait_for(lambda: len(seen) == 20_000, 30)
    assert seen[:3] == ["e0", "e1", "e2"]


async def test_an_event_burst_reaches_on_events_in_batches_with_no_task_per_event(open_paging):
    session, _ = await open_paging()
    batches: list[list[str]] = []
    tasks: list[int] = []

    gate = asyncio.Event()

    async def store(events):
        assert {e.source for e in events} == {"paging"}
        tasks.append(len(asyncio.all_tasks()))
        batches.append([e.payload["id"] for e in events])
        if len(batches) == 1:
            await gate.wait()  # the first batch is slow to store: a backlog builds meanwhile

    session.on_events = store
    call = asyncio.ensure_future(session.call_tool("push", {"count": 3000}, timeout=60))
    # how big a batch is depends on how fast the server writes, so the test makes the
    # backlog itself: it holds the first batch until the reader has paused at the high mark
    # (a loaded CI machine, where the server wrote slowly, averaged 10 events a batch)
    await wait_for(lambda: not session.inbound._room.is_set())
    gate.set()
    assert (await call).text == "pushed"
    await wait_for(lambda: sum(map(len, batches)) == 3000, 30)
    assert [i for batch in batches for i in batch] == [f"e{n}" for n in range(3000)]
    assert len(batches[1]) == QUEUE_HIGH  # the backlog is handed over whole, not event by event
    assert max(tasks) < 20  # a task per event would show here


async def test_a_stalled_on_events_pauses_the_reader_and_loses_nothing(open_paging):
    session, _ = await open_paging()
    gate, seen = asyncio.Event(), []

    async def slow_store(events):  # a store that has stalled for a moment
        await gate.wait()
        seen.extend(e.payload["id"] for e in events)

    session.on_events = slow_store
    call = asyncio.ensure_future(session.call_tool("push", {"count": 20_000}, timeout=60))
    await wait_for(lambda: not session.inbound._room.is_set())  # the reader has paused
    gate.set()
    assert (await call).text == "pushed"
    await wait_for(lambda: len(seen) == 20_000, 30)
    assert seen == [f"e{n}" for n in range(20_000)]


async def test_answers_with_a_wrong_or_no_id_are_skipped_and_the_call_times_out(open_paging, home):
    session, _ = await open_paging()
    for how in ("wrong_id", "no_id", "null_id"):
        result = await session.call_tool("misanswer", {"how": how}, timeout=0.5)
        assert result.is_error and result.text.startswith("paging/misanswer failed: "), how
        assert "timed out after 0.5 s" in result.text, result.text
    assert (await session.call_tool("echo", {"text": "still fine"})).text == "still fine"
    assert session.pending == {}  # nothing a misanswer left behind
    log = log_path(home, "paging").read_text()
    assert "answer to unknown request 'x" in log  # the wrong id, named
    assert "skipped a stdout line (an answer without an id)" in log


async def test_an_answer_with_both_result_and_error_is_an_error(open_paging):
    session, _ = await open_paging()
    result = await session.call_tool("misanswer", {"how": "both"})
    assert result.is_error and result.text == "paging/misanswer failed: and an error"
    assert (await session.call_tool("echo", {"text": "still fine"})).text == "still fine"


async def test_a_stderr_flood_is_logged_within_the_budget_and_the_rest_counted(home):
    # a server that writes stderr without end once cost ~80 µs of host CPU a line, every
    # line written to its log: past the log budget (1,000 at once, then 200 a second; the
    # clock here stands still, so exactly the burst) lines are counted, not written, and the
    # last ones still say why it exited
    import sys

    from bothost.mcp.serverlog import close_server_logger, server_logger
    from bothost.mcp.stdio import STDERR_BURST, StdioTransport

    flood = 5_000
    script = (
        "import sys\n"
        f"for i in range({flood}): sys.stderr.write(f'noise {{i}}\\n')\n"
        "sys.stderr.write('fatal: the database is locked\\n'); sys.exit(3)\n"
    )
    log = server_logger(home, "noisy")
    closed: list[str] = []
    transport = StdioTransport(sys.executable, ["-c", script], {}, log=log, clock=lambda: 0.0)
    try:
        await transport.start(lambda *a: None, closed.append)
        await wait_for(lambda: closed)
        await transport.close()
    finally:
        close_server_logger("noisy")
    text = log_path(home, "noisy").read_text()
    written = text.count("[stderr] ")
    assert written == STDERR_BURST, written
    dropped = flood + 1 - STDERR_BURST
    assert transport.stderr_dropped == dropped
    assert f"{dropped} stderr lines of process {transport.pid} were dropped in all" in text
    assert "stderr flood control: 1 × stderr lines beyond 200 a second dropped" in text
    assert closed == ["exited with code 3: noise 4998 / noise 4999 / fatal: the database is locked"]
