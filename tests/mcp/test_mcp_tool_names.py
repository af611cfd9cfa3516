"""Model-facing names of MCP tools: sanitised, bounded, collision-free and stable."""

from __future__ import annotations

import re

from bothost.agent.mcp_tools import MAX_NAME, tool_names

VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_names_that_collide_once_sanitised_all_stay_reachable():
    names = tool_names("x", ["a b", "a.b", "a_b", "echo"])
    assert names["a_b"] == "mcp__x__a_b" and names["echo"] == "mcp__x__echo"
    assert len(set(names.values())) == 4
    assert all(VALID.fullmatch(n) for n in names.values())
    assert names["a b"].startswith("mcp__x__a_b_") and names["a.b"].startswith("mcp__x__a_b_")


def test_the_mapping_does_not_depend_on_the_listing_order():
    tools = ["a b", "a.b", "a_b", "日本", "☀", "t" * 200, "t" * 199 + "u", "wetter_☀"]
    assert tool_names("srv", tools) == tool_names("srv", list(reversed(tools)))


def test_long_and_unicode_names_are_bounded_and_distinct():
    tools = ["t" * 200, "t" * 199 + "u", "日本", "中国", "☀"]
    names = tool_names("s" * 40, tools)
    assert len(set(names.values())) == len(tools)
    assert all(len(n) <= MAX_NAME and VALID.fullmatch(n) for n in names.values())


def test_tools_of_two_servers_never_share_a_name():
    # `mcp__<server>__<tool>` is ambiguous when a server's name holds `__` or ends in `_`:
    # server "a__b"'s tool "c" and server "a"'s tool "b__c" were both mcp__a__b__c, and the
    # registry silently kept one of them
    pairs = [("a__b", "c"), ("a", "b__c"), ("a_", "c"), ("a", "_c"), ("a", "c"), ("a_b", "c")]
    names = [tool_names(server, [tool])[tool] for server, tool in pairs]
    assert len(set(names)) == len(pairs), names
    assert all(VALID.fullmatch(n) for n in names)
    # an ordinary server name keeps the names people and rules already use
    assert tool_names("a_b", ["c"])["c"] == "mcp__a_b__c"
    assert tool_names("github-2", ["x"])["x"] == "mcp__github-2__x"
