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
