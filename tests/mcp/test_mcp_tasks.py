"""MCP Tasks (2025-11-25): a tool that requires a task is created, polled, shown, cancelled
and its result fetched; the edge cases against a raw stdio server
(``servers/task_server.py``), the real thing against server-everything's
``simulate-research-query`` (stdio, Streamable HTTP and ``bothost mcp call``)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import ExitStack

import pytest
import yaml
from click.testing import CliRunner
from mcp_helpers import SERVERS, free_port, listening_process, wait_for
from peers import server_everything

from bothost.cli import cli
from bothost.config import load
from bothost.mcp.http import HttpTransport
from bothost.mcp.manager import McpManager
from bothost.mcp.serverlog import close_server_logger, log_path, server_logger
from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport
from bothost.mcp.transport import Transport
from bothost.store import Store, core_migrations

TASK_SERVER = SERVERS / "task_server.py"
WAIT = 15.0  # start() waits this long for the servers to be ready
SHORT = "500ms"  # a timeout well above the test server's poll interval (20 ms)


@pytest.fixture
async def tasks_of(home, tmp_path):
    """Factory: a started manager whose servers (keys given) all run the task server."""
    store = Store(home / "bothost.db", core_migrations())
    managers: list[McpManager] = []

    async def make(**servers: dict) -> McpManager:
        stdio = {"command": sys.executable, "args": [str(TASK_SERVER)]}
        data = {"mcp": {"servers": {n: {**stdio, **keys} for n, keys in servers.items()}}}
        path = tmp_path / "tasks.yaml"
        path.write_text(yaml.safe_dump(data))
        config = load(path, home)
        mine = {name: config.mcp.servers[name] for name in servers}
        manager = McpManager(mine, store, home, retry=False)
        managers.append(manager)
        await manager.start(wait=WAIT)
        assert {s.state for s in manager.status()} == {"ready"}
        return manager

    yield make
    for manager in managers:
        await manager.stop()
    store.close()


async def seen(manager: McpManager, server: str = "t") -> dict:
    return json.loads((await manager.call_tool(server, "seen")).text)


async def cancelled_tasks(manager: McpManager, count: int) -> list[str]:
    """The task ids the server was asked to cancel, once there are `count` (bounded wait:
    the client sends tasks/cancel in the background)."""
    async with asyncio.timeout(5):
        while len(ids := (await seen(manager))["cancelled"]) < count:
            await asyncio.sleep(0.02)
    return ids


async def test_a_tool_that_requires_a_task_is_created_polled_and_fetched(tasks_of, home):
    manager = await tasks_of(t={})
    shown: list[str] = []
    result = await manager.call_tool(
        "t", "research", {"steps": 3}, on_progress=lambda p, t, m: shown.append(m)
    )
    assert not result.is_error, result.text
    assert result.text == "researched in 3 steps"
    assert "step 1 of 3" in shown and "step 3 of 3" in shown  # status messages as progress
    assert list((await seen(manager))["gets"].values())[0] >= 1
    declared = log_path(home, "t").read_text()
    # the client says it knows tasks, and runs the questions it answers as tasks too
    assert '"tasks": {"list": {}, "cancel": {}, "requests": {"elicitation"' in declared


async def test_status_notifications_are_shown_and_end_the_wait(tasks_of):
    manager = await tasks_of(t={})
    shown: list[str] = []
    # a poll interval of a minute: only notifications/tasks/status can end this call soon
    call = manager.call_tool(
        "t",
        "research",
        {"steps": 2, "notify": True, "poll": 60_000},
        on_progress=lambda p, t, m: shown.append(m),
    )
    async with asyncio.timeout(10):
        result = await call
    assert result.text == "researched in 2 steps", result.text
    assert "step 2 of 2" in shown


async def test_a_failed_task_is_an_error_result_a_person_can_read(tasks_of):
    manager = await tasks_of(t={})
    tool_error = await manager.call_tool("t", "broken")
    assert tool_error.is_error and tool_error.text == "could not write the report: disk full"
    for args in ({"rpc_error": True}, {"status_only": True}):
        failed = await manager.call_tool("t", "broken", args)
        assert failed.is_error and "t/broken failed: disk full" in failed.text, failed.text
        assert "-326" not in failed.text  # no JSON-RPC codes for people


async def test_a_task_result_is_checked_against_the_output_schema_like_a_plain_call(tasks_of):
    manager = await tasks_of(t={})
    fine = await manager.call_tool("t", "measured")
    assert not fine.is_error and fine.structured == {"temperature": 21.5}, fine.text
    wrong = await manager.call_tool("t", "measured", {"shape": "wrong"})
    assert wrong.is_error, wrong.text
    assert "output schema" in wrong.text and "temperature: expected number" in wrong.text
    assert wrong.text.endswith("\nwarm")  # what the server wrote for people stays below
    missing = await manager.call_tool("t", "measured", {"shape": "missing"})
    assert missing.is_error and "no structured content" in missing.text, missing.text


async def test_input_required_asks_the_person_through_tasks_result(tasks_of):
    manager = await tasks_of(t={})
    questions = []

    async def ask(question):
        questions.append(question.text)
        return {"choice": "b"}

    result = await manager.call_tool("t", "ask", ask=ask)
    assert not result.is_error, result.text
    assert result.text == 'chose {"action": "accept", "content": {"choice": "b"}}'
    assert questions == ["t asks: Which one?"]


async def test_a_task_the_server_forgot_is_a_readable_error(tasks_of):
    manager = await tasks_of(t={})
    result = await manager.call_tool("t", "lost")
    assert result.is_error
    assert "t/lost failed" in result.text and "Task not found" in result.text, result.text


async def test_a_task_that_never_finishes_is_bounded_and_cancelled(tasks_of):
    manager = await tasks_of(t={"timeout": SHORT, "max_timeout": "1s"})
    quiet = await manager.call_tool("t", "stuck")
    assert quiet.is_error and "timed out after 0.5 s" in quiet.text, quiet.text
    # status changes are progress: they keep a task going, but only up to max_timeout
    chatty = await manager.call_tool("t", "stuck", {"chatty": True})
    assert chatty.is_error and "max_timeout" in chatty.text, chatty.text
    assert len(await cancelled_tasks(manager, 2)) == 2  # the server was told both times


async def test_stop_cancels_a_running_task(tasks_of):
    manager = await tasks_of(t={})
    shown: list[str] = []
    call = asyncio.ensure_future(
        manager.call_tool(
            "t", "stuck", {"chatty": True}, on_progress=lambda p, t, m: shown.append(m)
        )
    )
    await wait_for(lambda: shown)
    call.cancel()  # what `stop` does to a turn's tool call
    with pytest.raises(asyncio.CancelledError):
        await call
    assert len(await cancelled_tasks(manager, 1)) == 1


async def test_optional_and_plain_tools_are_called_without_a_task(tasks_of):
    manager = await tasks_of(t={})
    assert (await manager.call_tool("t", "either")).text == "either: plain call"
    assert (await manager.call_tool("t", "plain")).text == "plain: plain call"


# -- server-everything's simulate-research-query -------------------------------------------


@pytest.fixture(params=["stdio", "http"])
async def everything(home, request):
    """A session on server-everything, over stdio and over Streamable HTTP (its tasks,
    their status notifications and questions then travel on SSE streams and GETs)."""
    command = server_everything()  # may skip: before the logger is set up
    log = server_logger(home, "everything")
    with ExitStack() as stack:
        if request.param == "stdio":
            transport: Transport = StdioTransport(
                command[0], [], {"PATH": os.environ["PATH"]}, log=log
            )
        else:
            port = free_port()
            stack.enter_context(
                listening_process(
                    [*command, "streamableHttp"],
                    port,
                    home / "everything-http.log",
                    {"PORT": str(port)},
                )
            )
            transport = HttpTransport(f"http://127.0.0.1:{port}/mcp", log=log)
        session = ClientSession(transport, name="everything", log=log, media_dir=home / "media")
        await session.start()
        try:
            yield session
        finally:
            await session.close()
            close_server_logger("everything")


async def test_server_everything_research_query_runs_as_a_task(everything):
    shown: list[str] = []
    result = await everything.call_tool(
        "simulate-research-query",
        {"topic": "tides"},
        on_progress=lambda p, t, m: shown.append(m),
    )
    assert not result.is_error, result.text
    assert result.text.startswith("# Research Report: tides")
    assert "Gathering sources..." in shown and "Generating report..." in shown


async def test_server_everything_asks_through_the_task_and_uses_the_answer(everything):
    async def ask(question):
        return {"interpretation": "historical"}

    result = await everything.call_tool(
        "simulate-research-query", {"topic": "tides", "ambiguous": True}, ask=ask
    )
    assert not result.is_error, result.text
    assert "# Research Report: tides (historical)" in result.text


async def test_server_everything_task_is_cancelled_by_stop(everything):
    shown: list[str] = []
    call = asyncio.ensure_future(
        everything.call_tool(
            "simulate-research-query", {"topic": "x"}, on_progress=lambda p, t, m: shown.append(m)
        )
    )
    await wait_for(lambda: shown)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    statuses: list[str] = []

    async def ended() -> bool:
        listed = await everything.request("tasks/list")
        statuses[:] = [t["status"] for t in listed["tasks"]]
        return statuses == ["cancelled"]

    async with asyncio.timeout(5):
        while not await ended():
            await asyncio.sleep(0.05)


def test_bothost_mcp_call_runs_a_task_tool(home, tmp_path):
    command = server_everything()
    config = tmp_path / "bothost.yaml"
    servers = {"everything": {"command": command[0]}, "weather": {"enabled": False}}
    config.write_text(yaml.safe_dump({"mcp": {"servers": servers}}))
    args = ["mcp", "call", "everything", "simulate-research-query", '{"topic": "tides"}']
    result = CliRunner().invoke(cli, ["--home", str(home), "--config", str(config), *args])
    assert result.exit_code == 0, (result.output, result.exception)
    assert result.stdout.startswith("# Research Report: tides")
    assert "… Gathering sources..." in result.stderr
