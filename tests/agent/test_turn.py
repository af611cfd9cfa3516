import asyncio
import json

from bothost.agent.tools import ToolError
from bothost.api import Outcome
from bothost.models import Address, IncomingMessage
from tests.agent.conftest import AskingPlatform
from tests.fakes.llm import last_tool_result


def message(text, user="u1", admin=True):
    return IncomingMessage(address=Address("test", "c1"), text=text, user=user, is_admin=admin)


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def echo_result(body):
    return {"text": "Result: " + last_tool_result(body)}


async def test_multi_round_turn_streams_and_persists(openai_host, fake_llm):
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hello {name}"

    openai_host.registry.register(greet)
    fake_llm.script = [{"text": "Let me greet.", **call("greet", name="ana")}, echo_result]
    chunks = []

    async def on_text(delta):
        chunks.append(delta)

    reply = (await openai_host.handle_message(message("greet ana"), on_text=on_text)).text
    assert reply == "Result: hello ana"
    assert len(chunks) > 2 and "".join(chunks) == "Let me greet.Result: hello ana"
    sent_tools = [t["function"]["name"] for t in fake_llm.requests[0]["tools"]]
    assert sent_tools == sorted(sent_tools) and "greet" in sent_tools
    rows = openai_host.store.call(
        lambda db: list(db.query("SELECT role, content FROM messages ORDER BY id"))
    )
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    calls = openai_host.store.call(lambda db: db.query("SELECT * FROM tool_calls ORDER BY 1"))
    assert calls[0]["tool"] == "greet" and json.loads(calls[0]["arguments"]) == {"name": "ana"}
    assert calls[0]["status"] == "ok" and calls[0]["result"] == "hello ana"


async def test_tool_errors_are_results(openai_host, fake_llm):
    def expected() -> str:
        """Fails the expected way."""
        raise ToolError("the printer is on fire")

    def unexpected() -> str:
        """Fails the unexpected way."""
        raise KeyError("boom")

    openai_host.registry.register(expected)
    openai_host.registry.register(unexpected)
    fake_llm.script = [
        {
            "tool_calls": [
                {"name": "expected", "arguments": {}},
                {"name": "unexpected", "arguments": {}},
                {"name": "missing", "arguments": {}},
            ]
        },
        {"text": "done"},
    ]
    assert (await openai_host.handle_message(message("go"))).text == "done"
    tool_messages = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert "the printer is on fire" in tool_messages[0]["content"]
    assert "failed unexpectedly (ref" in tool_messages[1]["content"]
    assert "Unknown tool 'missing'" in tool_messages[2]["content"]


async def test_invalid_arguments_are_refused_before_the_tool_runs(openai_host, fake_llm):
    ran = []

    def count(n: int) -> str:
        """Count."""
        ran.append(n)
        return str(n)

    openai_host.registry.register(count)
    fake_llm.script = [call("count", n="three"), echo_result]
    reply = (await openai_host.handle_message(message("count"))).text
    assert "Invalid arguments: n: expected integer" in reply and ran == []


async def test_an_argument_the_function_does_not_take_is_refused(openai_host, fake_llm):
    ran = []

    def count(n: int) -> str:
        """Count."""
        ran.append(n)
        return str(n)

    openai_host.registry.register(count)
    fake_llm.script = [call("count", n=3, limit=5), echo_result]
    reply = (await openai_host.handle_message(message("count"))).text
    assert "Invalid arguments: limit: not a parameter (expected n)" in reply and ran == []


async def test_tool_timeout(openai_host, fake_llm):
    async def slow() -> str:
        """Never finishes in time."""
        await asyncio.sleep(30)
        return "late"

    openai_host.registry.register(slow, timeout=0.2)
    fake_llm.script = [call("slow"), echo_result]
    assert "slow timed out after 0.2 s" in (await openai_host.handle_message(message("go"))).text


async def test_pure_calls_of_one_round_run_concurrently(openai_host, fake_llm):
    barrier = asyncio.Barrier(2)

    async def meet(side: str) -> str:
        """Waits for the other call."""
        await barrier.wait()  # would time out if the calls ran one after the other
        return side

    openai_host.registry.register(meet, timeout=5)
    fake_llm.script = [
        {
            "tool_calls": [
                {"name": "meet", "arguments": {"side": "a"}},
                {"name": "meet", "arguments": {"side": "b"}},
            ]
        },
        {"text": "met"},
    ]
    assert (await openai_host.handle_message(message("go"))).text == "met"
    results = [m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert results == ["a", "b"]


async def test_long_output_is_cut_and_read_back(openai_host, fake_llm):
    openai_host.config.agent.output_budget = 1000
    big = "".join(f"{i:05d}" for i in range(4000))  # 20,000 characters

    def dump() -> str:
        """A lot of output."""
        return big

    openai_host.registry.register(dump)

    def read_more(body):
        text = last_tool_result(body)
        assert "[output cut: 19000 of 20000 characters not shown" in text
        ref = text.split('ref="')[1].split('"')[0]
        return call("read_output", ref=ref, offset=1000)

    fake_llm.script = [call("dump"), read_more, echo_result]
    reply = (await openai_host.handle_message(message("dump"))).text
    assert reply.startswith("Result: " + big[1000:1100])


async def test_stop_cancels_the_running_turn_and_keeps_the_transcript(openai_host, fake_llm):
    started = asyncio.Event()

    async def wait_forever() -> str:
        """Blocks."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    openai_host.registry.register(wait_forever)
    fake_llm.script = [{"text": "working on it", **call("wait_forever")}]
    turn = asyncio.create_task(openai_host.handle_message(message("long job")))
    await asyncio.wait_for(started.wait(), 5)
    assert (await openai_host.handle_message(message("stop"))).outcome is Outcome.STOPPED
    assert (await asyncio.wait_for(turn, 5)).outcome is Outcome.STOPPED
    roles = openai_host.store.call(
        lambda db: [r["role"] for r in db.query("SELECT role FROM messages ORDER BY id")]
    )
    assert roles[:2] == ["user", "assistant"]


async def test_provider_errors_are_one_clear_line(openai_host, fake_llm):
    fake_llm.api_key = "another-key"
    reply = (await openai_host.handle_message(message("hello"))).text
    assert reply.startswith("401 from http://127.0.0.1") and "check llm.api_key" in reply
    assert "Traceback" not in reply


async def test_rate_limit_is_retried(openai_host, fake_llm):
    fake_llm.script = [{"status": 429, "retry_after": 0}, {"text": "fine now"}]
    assert (await openai_host.handle_message(message("hello"))).text == "fine now"
    assert len(fake_llm.requests) == 2


async def test_context_from_the_platform_is_included(openai_host, fake_llm):
    fake_llm.script = [{"text": "ok"}]
    msg = message("what do you think?")
    msg.context = [{"user": "U2", "text": "the deploy failed"}]
    await openai_host.handle_message(msg)
    user = fake_llm.requests[0]["messages"][-1]["content"]
    assert "U2: the deploy failed" in user and user.endswith("what do you think?")


async def test_asking_platform_is_used_for_approval(openai_host, fake_llm):
    def wipe() -> str:
        """Deletes things."""
        return "wiped"

    openai_host.registry.register(wipe, destructive=True)
    platform = AskingPlatform(True)
    fake_llm.script = [call("wipe"), echo_result]
    reply = (await openai_host.handle_message(message("wipe"), platform=platform)).text
    assert reply == "Result: wiped" and "wipe" in platform.questions[0].text


async def test_history_is_compacted_oldest_first_and_the_system_prompt_kept(openai_host, fake_llm):
    openai_host.config.llm.context_tokens = 3000
    openai_host.config.llm.max_tokens = 200

    def model(body):
        first = body["messages"][0]["content"]
        return {"text": "SUMMARY" if first.startswith("You compact") else "ok"}

    fake_llm.script = [model] * 10
    texts = [letter * 4000 for letter in "abc"]  # about 1,000 tokens each
    for text in texts:
        await openai_host.handle_message(message(text))
    sent = [m["content"] for m in fake_llm.requests[-1]["messages"]]
    assert sent[0].startswith("You are bothost") and sent[0].endswith("SUMMARY")
    assert texts[0] not in sent and sent[-1] == texts[2]
    assert sent[1] in texts  # the context starts at a user message


async def test_a_turn_without_tools_waits_on_the_store_twice(openai_host, fake_llm):
    # issue 19: the turn's opening (session, message, grants, history) is one round trip and
    # the reply one more; the usage row is queued behind them, not waited for
    fake_llm.script = [{"text": "warm"}, {"text": "hi there"}]
    await openai_host.handle_message(message("first"))
    store, waited = openai_host.store, []
    run = store.run

    async def counted(fn):
        waited.append(fn)
        return await run(fn)

    store.run = counted
    try:
        reply = await openai_host.handle_message(message("hello"))
    finally:
        store.run = run
    assert reply.text == "hi there"
    assert len(waited) == 2
    rows = store.call(lambda db: db.query("SELECT role, content FROM messages ORDER BY id"))
    assert [(r["role"], r["content"]) for r in rows][-2:] == [
        ("user", "hello"),
        ("assistant", "hi there"),
    ]
    assert store.call(lambda db: db.value("SELECT COUNT(*) FROM llm_usage")) == 2


async def test_an_openai_format_model_is_told_which_tool_results_are_errors(openai_host, fake_llm):
    # OpenAI's chat wire has no error flag on a tool message (Anthropic's has `is_error`), so
    # the flag must be in the content itself, or a failure reads like the tool's answer
    def fails() -> str:
        """Fails."""
        raise ToolError("disk quota exceeded")

    def works() -> str:
        """Works."""
        return "all fine"

    openai_host.registry.register(fails)
    openai_host.registry.register(works)
    fake_llm.script = [
        {"tool_calls": [{"name": "fails", "arguments": {}}, {"name": "works", "arguments": {}}]},
        {"text": "done"},
        {"text": "again"},
    ]
    assert (await openai_host.handle_message(message("go"))).text == "done"
    assert (await openai_host.handle_message(message("more"))).text == "again"
    for request in fake_llm.requests[1:]:  # the next round, and the next turn's history
        failed, worked = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        assert failed.startswith("[tool error] ") and "disk quota exceeded" in failed
        assert worked == "all fine"


def answered_calls(body):
    """Whether every assistant tool call in an OpenAI request has its tool message, as the
    API requires (a 400 otherwise: 'tool_call_ids did not have response messages')."""
    waiting: set[str] = set()
    for m in body["messages"]:
        if m["role"] == "tool":
            waiting.discard(m["tool_call_id"])
        elif waiting:
            return False
        if m["role"] == "assistant":
            waiting |= {c["id"] for c in m.get("tool_calls") or []}
    return not waiting


async def test_the_turn_after_a_stopped_one_sends_every_call_with_a_result(openai_host, fake_llm):
    # Found from outside: Ctrl-C in a running tool call left the call stored without a
    # result, and every later request of the session carried it unanswered.
    started = asyncio.Event()

    async def wait_forever() -> str:
        """Blocks."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    openai_host.registry.register(wait_forever)
    fake_llm.script = [call("wait_forever")]
    turn = asyncio.create_task(openai_host.handle_message(message("long job")))
    await asyncio.wait_for(started.wait(), 5)
    assert (await openai_host.handle_message(message("stop"))).outcome is Outcome.STOPPED
    await asyncio.wait_for(turn, 5)
    fake_llm.script = [{"text": "hi again"}]
    assert (await openai_host.handle_message(message("hello"))).text == "hi again"
    assert answered_calls(fake_llm.requests[-1]), fake_llm.requests[-1]["messages"]
