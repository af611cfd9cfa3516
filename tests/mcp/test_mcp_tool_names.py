"""Model-facing names of MCP tools: sanitised, bounded, collision-free and stable."""

from __future__ import annotations

import re

from bothost.agent.mcp_tools import MAX_NAME, resource_names, server_part, tool_names

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
    # a server named like what the host made of another's name (`a__b` is written
    # `a_b-<hash>`) is not written so: its tools never take the other server's names
    alike = server_part("a__b")
    assert tool_names(alike, ["c"])["c"] != tool_names("a__b", ["c"])["c"]
    assert tool_names(alike, ["c"])["c"].startswith(f"mcp__{alike}-")
    # an ordinary server name keeps the names people and rules already use
    assert tool_names("a_b", ["c"])["c"] == "mcp__a_b__c"
    assert tool_names("github-2", ["x"])["x"] == "mcp__github-2__x"


def test_a_name_comes_from_the_tool_alone_and_never_passes_to_another():
    # `a.b` listed alone was mcp__s__a_b, the name `a_b` takes once listed: an approval
    # remembered for one tool then covered the other (tests/agent/test_mcp_name_stability.py)
    alone = tool_names("s", ["a.b"])["a.b"]
    assert alone.startswith("mcp__s__a_b_") and alone == tool_names("s", ["a.b", "a_b"])["a.b"]
    assert tool_names("s", ["a_b"])["a_b"] == "mcp__s__a_b"
    # a tool named to look like another's hashed name never has that name, listed with the
    # other or alone: a name ending in `_` and a hash is only ever one the host made
    forged = alone.removeprefix("mcp__s__")
    both = tool_names("s", ["a.b", forged])
    assert both["a.b"] == alone and both[forged].startswith(f"{alone}_")
    assert tool_names("s", [forged]) == {forged: both[forged]}
    for digits in (8, 16, 40):  # every length of hash the host uses
        alike = "x_" + "0" * digits
        assert tool_names("s", [alike])[alike].startswith(f"mcp__s__{alike}_")
    # other endings are kept as they are
    for plain in ("x_0000000", "x_00000000a", "x_ABCDEF12", "x-00000000"):
        assert tool_names("s", [plain])[plain] == f"mcp__s__{plain}"


def test_the_hosts_resource_tools_keep_their_names_from_a_servers_tools():
    host = {w: resource_names("s", w) for w in ("list_resources", "read_resource")}
    names = tool_names("s", ["echo"], host)
    assert names["mcp__s__read_resource"] == "mcp__s__read_resource"
    # a server tool listed later under that name takes it from neither
    names = tool_names("s", ["echo", "read_resource"], host)
    assert names["mcp__s__read_resource"] != names["read_resource"]
    assert "mcp__s__read_resource" not in names.values()


def test_a_published_listing_names_tools_as_the_tool_source_does():
    from bothost.agent.mcp_resources import LIST, READ
    from bothost.agent.mcp_tools import listed_origin
    from bothost.rules.origin import MCP, RESOURCES, Origin

    tools = ["a.b", "a_b", "a_b_2e7336dc", "list_resources", "wipe"]
    listing = {"source": "f00", "tools": tools, "resources": True}
    host = {w: resource_names("s", w) for w in (LIST, READ)}
    names = tool_names("s", tools, host)
    for tool in tools:
        assert listed_origin("s", listing, names[tool]) == Origin(MCP, tool, "s", "f00")
    for which, own in host.items():
        assert listed_origin("s", listing, names[own[0]]) == Origin(RESOURCES, which, "s", "f00")
    assert listed_origin("s", listing, "mcp__s__nothing") is None
    assert listed_origin("s", {**listing, "source": ""}, names["wipe"]) is None
