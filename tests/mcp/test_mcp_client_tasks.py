"""Tasks the server asks the client to run (2025-11-25, client as receiver): a task-augmented
``elicitation/create`` or ``sampling/createMessage`` is answered with a ``CreateTaskResult``
and served through ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``,
against a raw stdio server that speaks the requestor's side (``servers/requestor_server.py``:
the official SDK 2.x sends no task-augmented requests)."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest
from mcp_helpers import SERVERS, wait_for

from bothost.mcp import client_tasks
from bothost.mcp.serverlog import close_server_logger, server_logger
from bothost.mcp.session import ClientSession
from bothost.mcp.stdio import StdioTransport

REQUESTOR = SERVERS / "requestor_server.py"
QUESTION = {
    "message": "Which colour?",
    "requestedSchema": {"type": "object", "properties": {"colour": {"type": "string"}}},
}
SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 9}


@pytest.fixture
async def requestor(home):
    """Factory: a started session on the requestor server, with what it was given."""
    sessions: list[ClientSession] = []

    async def open_(ask=None, sample=None, elicitation=True) -> ClientSession:
        log = server_logger(home, "req")
        transport = StdioTransport(
            sys.executable, [str(REQUESTOR)], {"PATH": os.environ["PATH"]}, log=log
        )
        session = ClientSession(
            transport, name="req", log=log, ask=ask, sample=sample, elicitation=elicitation
        )
        sessions.append(session)
        await session.start()
        return session

    yield open_
    for session in sessions:
        await session.close()
    close_server_logger("req")


async def tool(session: ClientSession, name: str, **arguments) -> dict:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, result.text
    return json.loads(result.text)


async def client_rpc(session: ClientSession, method: str, **params) -> dict:
    """What the client answered the server's `method` request (result or error)."""
    return await tool(session, "rpc", method=method, params=params)


class Person:
    """Answers form questions with `answer` once `go` is set; remembers being withdrawn."""

    def __init__(self, answer=None) -> None:
        self.answer = answer
        self.go = asyncio.Event()
        self.asked: list[str] = []
        self.withdrawn = 0

    async def __call__(self, question):
        self.asked.append(question.text)
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.withdrawn += 1
            raise
        return self.answer


async def test_the_client_declares_tasks_only_for_what_it_answers(requestor):
    async def sample(params, asker):
        return {}

    both = await tool(await requestor(sample=sample), "capabilities")
    assert both["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"elicitation": {"create": {}}, "sampling": {"createMessage": {}}},
    }
    # sampling off (the default): only elicitation runs as a task
    asking = await tool(await requestor(), "capabilities")
    assert asking["tasks"]["requests"] == {"elicitation": {"create": {}}}
    assert "sampling" not in asking
    silent = await tool(await requestor(elicitation=False), "capabilities")
    assert silent["tasks"] == {}


async def test_an_elicitation_runs_as_a_task_polled_listed_and_fetched(requestor):
    person = Person({"colour": "teal"})
    session = await requestor(ask=person)
    call = asyncio.ensure_future(tool(session, "ask_as_task", message="Favourite colour?"))
    await wait_for(lambda: person.asked)  # the server polls a working task meanwhile
    assert not call.done()
    person.go.set()
    said = await call
    assert said["statuses"] == ["working", "completed"]
    assert said["listed"] and said["related"]
    assert said["result"]["action"] == "accept"
    assert said["result"]["content"] == {"colour": "teal"}
    assert person.asked == ["req asks: Favourite colour?"]


async def test_a_sampling_request_runs_as_a_task_when_sampling_is_on(requestor):
    seen: list[dict] = []

    async def sample(params, asker):
        seen.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}

    session = await requestor(sample=sample)
    created = await tool(session, "start", method="sampling/createMessage", params=SAMPLE)
    task = created["result"]["task"]
    assert task["status"] == "working" and isinstance(task["taskId"], str)
    assert {"createdAt", "lastUpdatedAt", "ttl", "pollInterval"} <= task.keys()
    fetched = await client_rpc(session, "tasks/result", taskId=task["taskId"])
    assert fetched["result"]["content"]["text"] == "hello"
    assert "task" not in seen[0]  # the sampler gets the request, not its augmentation
    got = await client_rpc(session, "tasks/get", taskId=task["taskId"])
    assert got["result"]["status"] == "completed"


async def test_a_request_of_a_kind_not_declared_is_answered_plainly(requestor):
    session = await requestor()  # sampling off: not declared, so processed as a plain request
    refused = await tool(session, "start", method="sampling/createMessage", params=SAMPLE)
    assert refused["error"]["code"] == -32601, refused
    assert "sampling is off" in refused["error"]["message"]


async def test_cancel_withdraws_the_question_and_ends_the_task(requestor):
    person = Person({"colour": "red"})
    session = await requestor(ask=person)
    created = await tool(session, "start", method="elicitation/create", params=QUESTION)
    task_id = created["result"]["task"]["taskId"]
    await wait_for(lambda: person.asked)
    cancelled = await client_rpc(session, "tasks/cancel", taskId=task_id)
    assert cancelled["result"]["status"] == "cancelled"
    await wait_for(lambda: person.withdrawn == 1)
    got = await client_rpc(session, "tasks/get", taskId=task_id)
    assert got["result"]["status"] == "cancelled"
    fetched = await client_rpc(session, "tasks/result", taskId=task_id)
    assert "cancelled" in fetched["error"]["message"]
    again = await client_rpc(session, "tasks/cancel", taskId=task_id)
    assert again["error"]["code"] == -32602  # the spec's answer for a terminal task
    unknown = await client_rpc(session, "tasks/get", taskId="no-such-task")
    assert unknown["error"]["code"] == -32602


async def test_a_waiting_tasks_result_gets_the_answer_when_it_comes(requestor):
    person = Person(False)  # the person declines
    session = await requestor(ask=person)
    created = await tool(session, "start", method="elicitation/create", params=QUESTION)
    task_id = created["result"]["task"]["taskId"]
    fetching = asyncio.ensure_future(client_rpc(session, "tasks/result", taskId=task_id))
    await wait_for(lambda: person.asked)
    assert not fetching.done()  # tasks/result blocks until the task is over
    person.go.set()
    fetched = await fetching
    assert fetched["result"]["action"] == "decline"


async def test_an_expired_task_is_forgotten_and_its_question_withdrawn(requestor):
    person = Person({"colour": "red"})
    session = await requestor(ask=person)
    ttl = client_tasks.MIN_TTL_MS
    created = await tool(session, "start", method="elicitation/create", params=QUESTION, ttl=1)
    task = created["result"]["task"]
    assert task["ttl"] == ttl  # a ttl shorter than anyone could fetch in is raised
    await wait_for(lambda: person.withdrawn == 1)
    got = await client_rpc(session, "tasks/get", taskId=task["taskId"])
    assert got["error"]["code"] == -32602, got  # unknown now, as the spec has it
    assert len(session.inbound.client_tasks) == 0


async def test_the_store_is_bounded_and_a_fetched_result_makes_room(requestor):
    person = Person({"colour": "red"})
    session = await requestor(ask=person)
    session.inbound.client_tasks.max_tasks = 2
    first, second = [
        (await tool(session, "start", method="elicitation/create", params=QUESTION))["result"]
        for _ in range(2)
    ]
    full = await tool(session, "start", method="elicitation/create", params=QUESTION)
    assert full["error"]["code"] == -32603 and "too many tasks" in full["error"]["message"]
    person.go.set()
    fetched = await client_rpc(session, "tasks/result", taskId=first["task"]["taskId"])
    assert fetched["result"]["action"] == "accept"
    third = await tool(session, "start", method="elicitation/create", params=QUESTION)
    assert third["result"]["task"]["status"] == "working"
    listed = await client_rpc(session, "tasks/list")
    ids = [t["taskId"] for t in listed["result"]["tasks"]]
    # the fetched one made room; the unfetched one is kept
    assert ids == [second["task"]["taskId"], third["result"]["task"]["taskId"]]
    bad_cursor = await client_rpc(session, "tasks/list", cursor="x")
    assert bad_cursor["error"]["code"] == -32602
