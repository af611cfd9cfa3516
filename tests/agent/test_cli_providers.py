"""``bothost chat -m`` against fake OpenAI and Anthropic servers, as a user would run it.

A ``chat -m`` is bounded as every CLI command of the suite is (``COMMAND_SECONDS``); the
providers speak HTTP themselves, so neither vendor SDK is imported (it once cost ~4 s of CPU
for Anthropic).
"""

import asyncio
import textwrap

import pytest

from tests.fakes.llm import last_tool_result
from tests.helpers import COMMAND_SECONDS, bothost_process, free_port

PLUGIN = textwrap.dedent('''
    from bothost.hookspecs import hookimpl

    def greet(name: str) -> str:
        """Greet someone by name."""
        return f"hello {name}"

    @hookimpl
    def register_tools(register):
        register(greet)
''')


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_chat_message_runs_a_multi_round_turn(tmp_path, home, fake_llm, provider):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "greeter.py").write_text(PLUGIN)
    url = fake_llm.openai_url if provider == "openai" else fake_llm.anthropic_url
    config = tmp_path / "c.yaml"
    config.write_text(
        textwrap.dedent(f"""
        llm: {{provider: {provider}, model: fake, base_url: '{url}', api_key: '${{env:FAKE_KEY}}'}}
        plugins: {{dirs: ['{plugins}']}}
        mcp: {{servers: {{weather: {{enabled: false}}}}}}
    """)
    )
    fake_llm.script = [
        {"tool_calls": [{"name": "greet", "arguments": {"name": "ana"}}]},
        lambda body: {"text": "The tool said: " + last_tool_result(body)},
    ]
    process = await bothost_process(home, config, "chat", "-m", "greet ana", FAKE_KEY="test-key")
    out, err = await asyncio.wait_for(process.communicate(), COMMAND_SECONDS)
    assert process.returncode == 0, err.decode()
    assert out.decode().strip() == "The tool said: hello ana"
    if provider == "anthropic":
        tool_result = fake_llm.requests[1]["messages"][-1]["content"][0]
        assert tool_result["type"] == "tool_result" and tool_result["content"] == "hello ana"
    import sqlite3

    db = sqlite3.connect(home / "bothost.db")
    roles = [r[0] for r in db.execute("SELECT role FROM messages ORDER BY id")]
    assert roles == ["user", "assistant", "tool", "assistant"]


async def test_chat_message_exits_1_when_the_model_call_fails(tmp_path, home, fake_llm):
    """docs/configuration.md: a model error is exit status 1 — a script must see it."""
    config = tmp_path / "c.yaml"
    config.write_text(
        f"llm: {{provider: openai, model: fake, base_url: '{fake_llm.openai_url}',"
        " api_key: wrong}\nmcp: {servers: {weather: {enabled: false}}}\n"
    )
    fake_llm.script = [{"status": 401, "message": "Incorrect API key provided"}]
    process = await bothost_process(home, config, "chat", "-m", "hi")
    out, err = await asyncio.wait_for(process.communicate(), COMMAND_SECONDS)
    assert process.returncode == 1, (out.decode(), err.decode())
    assert "check llm.api_key" in out.decode()  # the turn's one line says what to fix
    assert "Traceback" not in err.decode()


@pytest.mark.parametrize(
    ("provider", "variable"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")]
)
async def test_a_hosted_model_without_a_key_says_how_to_set_one(provider, variable):
    """No key and no base_url: the hosted API would only answer 401 (or, offline, "cannot
    reach"), so the call is not made and the one line names the setting and the variable."""
    from bothost.config import LlmConfig

    message = await failed_completion(LlmConfig(provider=provider, model="m"))
    assert "\n" not in message
    assert f"llm.api_key: ${{env:{variable}}}" in message and f"export {variable}" in message


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_an_unreachable_base_url_is_named_without_its_password_or_key(provider):
    """Found from outside: `bothost doctor` and a chat's error printed
    "cannot reach http://bob:hunter2pass@127.0.0.1:9/v1?key=QSECRET" whole — to a Slack
    channel, too — while `mcp list` masks the same parts of a server's URL."""
    from bothost.config import LlmConfig

    port = free_port()  # nothing listens on it
    url = f"http://bob:hunter2pass@127.0.0.1:{port}/v1?key=QSECRET"
    config = LlmConfig(provider=provider, model="m", base_url=url, timeout=5, max_retries=0)
    message = await failed_completion(config)
    assert "cannot reach" in message and f"bob:***@127.0.0.1:{port}" in message
    assert "hunter2pass" not in message and "QSECRET" not in message


async def failed_completion(config) -> str:
    """The one line of the LlmError that ``config``'s provider raises for a plain request."""
    from bothost.llm.anthropic import AnthropicProvider
    from bothost.llm.base import ChatRequest, LlmError
    from bothost.llm.openai import OpenAIProvider

    factory = OpenAIProvider if config.provider == "openai" else AnthropicProvider
    model = factory(config)
    try:
        with pytest.raises(LlmError) as raised:
            await model.complete(
                ChatRequest(system="s", messages=[{"role": "user", "content": "hi"}])
            )
    finally:
        await model.close()
    return str(raised.value)
