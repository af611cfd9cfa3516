"""A request offers the model at most MAX_OFFERED tools, however many a granted server lists.

OpenAI refuses a request with more than 128 functions (the fake says so as the API does),
and activation lasts the conversation: a server of 1,000 tools (the client's bound) once made
every later round of that conversation fail with a 400.
"""

from bothost.agent.registry import Group
from bothost.agent.tools import MAX_OFFERED, Tool
from bothost.models import Address, IncomingMessage
from tests.fakes.llm import OPENAI_MAX_TOOLS


class Servers:
    """A tool source of groups with `sizes[name]` tools each."""

    def __init__(self, sizes):
        self.sizes = sizes

    def groups(self):
        return [
            Group(name=n, description=f"{n} things", tool_count=k) for n, k in self.sizes.items()
        ]

    def tools(self, group):
        async def run(arguments, ctx):
            return "ran"

        schema = {"type": "object", "properties": {}}
        return [
            Tool(name=f"{group}_{i}", description="t", schema=schema, run=run, group=group)
            for i in range(self.sizes[group])
        ]


def message(text):
    return IncomingMessage(address=Address("test", "c1"), text=text, user="u1", is_admin=True)


def activate(*groups):
    return {"tool_calls": [{"name": "activate_tools", "arguments": {"groups": list(groups)}}]}


async def test_a_group_too_big_to_offer_is_left_out_and_said_so(openai_host, fake_llm):
    assert MAX_OFFERED <= OPENAI_MAX_TOOLS
    openai_host.registry.add_source(Servers({"big": 1000, "small": 3}))
    fake_llm.script = [activate("big", "small"), {"text": "done"}, {"text": "again"}]
    reply = await openai_host.handle_message(message("use big"))
    assert reply.text.startswith("done\n\n"), reply.text
    sent = fake_llm.requests[1]
    names = [t["function"]["name"] for t in sent["tools"]]
    assert len(names) <= MAX_OFFERED and "small_0" in names and "big_0" not in names
    result = next(m["content"] for m in sent["messages"] if m["role"] == "tool")
    assert "big: 1000 tools, more than the 128 one request may offer: not offered" in result
    system = sent["messages"][0]["content"]
    # the groups table gives the real reason, per group
    assert "- big (active, not offered: 1000 tools, more than the 128 one request may offer)" in (
        system
    )
    # the conversation goes on: the next turn is not refused either
    assert (await openai_host.handle_message(message("more"))).text == "again"


async def test_the_person_is_told_a_granted_group_was_left_out_and_stays_granted(
    openai_host, fake_llm
):
    # the grant stays (whether a group fits depends on the request: the other groups, the
    # window), but only the model read that it was left out: the person saw "done" and
    # could not tell why the big server's tools were never used
    openai_host.registry.add_source(Servers({"big": 1000, "huge": 2000, "small": 3}))
    fake_llm.script = [activate("big", "small"), {"text": "done"}, {"text": "plain"}]
    reply = await openai_host.handle_message(message("use big"))
    assert reply.text == (
        "done\n\nNote: big stays active in this conversation, but its 1000 tools were not "
        "offered to the model: more than the 128 one request may offer."
    ), reply.text
    # said once per conversation while the same groups stay left out, not under every reply
    assert (await openai_host.handle_message(message("more"))).text == "plain"
    # another group left out too: the set changed, so both are said again
    fake_llm.script = [activate("huge"), {"text": "also"}]
    assert (await openai_host.handle_message(message("use huge"))).text == (
        "also\n\nNote: big stays active in this conversation, but its 1000 tools were not "
        "offered to the model: more than the 128 one request may offer.\n"
        "Note: huge stays active in this conversation, but its 2000 tools were not "
        "offered to the model: more than the 128 one request may offer."
    )
    # another conversation is told for itself
    other = IncomingMessage(address=Address("test", "c2"), text="x", user="u1", is_admin=True)
    fake_llm.script = [activate("big"), {"text": "there"}]
    assert (await openai_host.handle_message(other)).text.startswith("there\n\nNote: big ")


async def test_groups_that_fit_alone_but_not_together_offer_the_first_by_name(
    openai_host, fake_llm
):
    # two fit beside the built-in tools (up to 18 of them), three do not
    openai_host.registry.add_source(Servers({"a": 55, "b": 55, "c": 55}))
    fake_llm.script = [activate("a", "b", "c"), {"text": "done"}]
    await openai_host.handle_message(message("use all"))
    names = [t["function"]["name"] for t in fake_llm.requests[1]["tools"]]
    assert "a_0" in names and "b_0" in names and "c_0" not in names
    assert len(names) <= MAX_OFFERED
    system = fake_llm.requests[1]["messages"][0]["content"]
    assert (
        "- c (active, not offered: 55 tools, they do not fit beside the built-in tools and the"
        " other active groups ("
    ) in system, system


async def test_a_group_whose_definitions_fill_the_context_window_is_left_out(openai_host, fake_llm):
    # 8 tools of ~60 KB (under the client's 128 KB a tool): ~120,000 estimated tokens, far
    # past the 32,000-token window; every request holding them would fail or hold nothing else
    class Wide(Servers):
        def tools(self, group):
            tools = super().tools(group)
            if group == "wide":
                for tool in tools:
                    tool.description = "x" * 60_000
            return tools

    openai_host.registry.add_source(Wide({"wide": 8, "small": 3}))
    fake_llm.script = [activate("wide", "small"), {"text": "done"}]
    assert (await openai_host.handle_message(message("use wide"))).text.startswith("done")
    names = [t["function"]["name"] for t in fake_llm.requests[1]["tools"]]
    assert "small_0" in names and "wide_0" not in names
    system = fake_llm.requests[1]["messages"][0]["content"]
    assert "- wide (active, not offered: 8 tools, their definitions take about " in system


async def test_calling_a_left_out_groups_tool_says_why_not_to_activate_it_again(
    openai_host, fake_llm
):
    openai_host.registry.add_source(Servers({"big": 1000}))
    call_big = {"tool_calls": [{"name": "big_0", "arguments": {}}]}
    fake_llm.script = [activate("big"), call_big, {"text": "done"}]
    await openai_host.handle_message(message("use big"))
    result = [m["content"] for m in fake_llm.requests[2]["messages"] if m["role"] == "tool"][-1]
    assert "call activate_tools first" not in result
    assert "big is active but not offered: 1000 tools, more than the 128 one request" in result


async def test_the_tick_agents_notify_tool_counts_towards_the_bound(openai_host, fake_llm):
    # the tick agent's own tool (notify) comes on top of the registry's offer: a granted
    # group that filled the offer to the bound made each of its requests one tool too many
    from bothost.events.tick_agent import run_tick_agent

    natives = len(openai_host.registry.offered(set(), is_admin=False)[0])
    openai_host.registry.add_source(Servers({"fill": MAX_OFFERED - natives}))
    fake_llm.script = [
        activate("fill"),
        {"tool_calls": [{"name": "notify", "arguments": {"items": []}}]},
    ]
    items = await run_tick_agent(openai_host, "Triage.", "no events")
    assert items == []
    names = [t["function"]["name"] for t in fake_llm.requests[1]["tools"]]
    assert "notify" in names and len(names) <= MAX_OFFERED
    system = fake_llm.requests[1]["messages"][0]["content"]
    assert f"- fill (active, not offered: {MAX_OFFERED - natives} tools" in system


def tool_result(request):
    return [m["content"] for m in request["messages"] if m["role"] == "tool"][-1]


async def test_activation_says_which_group_does_not_fit_beside_the_others(openai_host, fake_llm):
    # each fits alone, so activate_tools said all three were "now available", and the next
    # request offered no tool of c
    openai_host.registry.add_source(Servers({"a": 55, "b": 55, "c": 55}))
    fake_llm.script = [activate("a", "b", "c"), {"text": "done"}]
    await openai_host.handle_message(message("use all"))
    result = tool_result(fake_llm.requests[1])
    assert "a: 55 tools now available" in result and "b: 55 tools now available" in result
    assert "c: 55 tools now available" not in result, result
    assert "c: 55 tools, not offered: they do not fit beside the built-in tools" in result, result


async def test_activation_says_which_group_does_not_fit_the_context_window(openai_host, fake_llm):
    class Wide(Servers):
        def tools(self, group):
            tools = super().tools(group)
            if group == "wide":
                for tool in tools:
                    tool.description = "x" * 60_000
            return tools

    openai_host.registry.add_source(Wide({"wide": 8, "small": 3}))
    fake_llm.script = [activate("wide", "small"), {"text": "done"}]
    await openai_host.handle_message(message("use wide"))
    result = tool_result(fake_llm.requests[1])
    assert "small: 3 tools now available" in result
    assert "wide: 8 tools now available" not in result, result
    assert "wide: 8 tools, not offered: their definitions take" in result, result
