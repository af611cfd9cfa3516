"""`bothost chat -m`'s exit status, as its help states it: a tool's error is part of a reply
(0); only a turn that failed or was refused is 1."""

from __future__ import annotations

from tests.helpers import run_bothost


def test_a_tool_error_is_a_reply_and_exits_zero(home):
    # found from outside: the help said "1 when the turn failed (the model or a tool could
    # not answer)", yet `bothost chat -m 'call mcp__weather__current …'` offline printed the
    # tool's "unreachable" and exited 0, as every tool error does: the agent replied
    result = run_bothost("chat", "-m", "call no_such_tool {}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Unknown tool 'no_such_tool'.\n"
    helped = run_bothost("chat", "--help")
    assert "a tool could not answer" not in helped.stdout
    assert "a tool's error is part of the reply" in " ".join(helped.stdout.split())


def test_doctor_on_a_config_error_exits_two_as_its_help_says(home, tmp_path):
    # found from outside: `bothost doctor` with a typo in the config printed the config
    # error's one line and exited 2, while its help promised only 0 or 1
    config = tmp_path / "bothost.yaml"
    config.write_text("llm: {provder: openai}\n", "utf-8")
    result = run_bothost("doctor", "--offline", config=config)
    assert result.returncode == 2, result.stdout
    assert result.stderr.splitlines() == [
        f"bothost: config error: {config}: llm.provder: unknown key; did you mean 'provider'?"
    ]
    helped = " ".join(run_bothost("doctor", "--help").stdout.split())
    assert "2 for a config error" in helped
