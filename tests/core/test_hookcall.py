"""Hooks run in plugin registration order, as docs/plugins.md says, whatever pluggy's own
calling order (last registered first) would be; ``tryfirst``/``trylast`` still move one."""

from __future__ import annotations

from bothost.hooks.call import call_each, call_each_named, call_policy, impls
from bothost.hooks.discovery import new_plugin_manager
from bothost.hookspecs import hookimpl


class Fragment:
    """A plugin whose ``system_prompt`` (a runtime hook) and ``approve_tool_call`` (a policy
    hook) both answer with its name."""

    def __init__(self, name: str) -> None:
        self.name = name

    @hookimpl
    def system_prompt(self, session):
        return self.name

    @hookimpl
    def approve_tool_call(self, call, session):
        return self.name


class Early(Fragment):
    @hookimpl(tryfirst=True)
    def system_prompt(self, session):
        return self.name


def manager(*plugins: Fragment):
    pm = new_plugin_manager()
    for plugin in plugins:
        pm.register(plugin, name=plugin.name)
    return pm


async def test_call_each_runs_implementations_in_registration_order():
    pm = manager(Fragment("a"), Fragment("b"), Fragment("c"))
    assert await call_each(pm, "system_prompt", session=None) == ["a", "b", "c"]


async def test_call_each_named_runs_implementations_in_registration_order():
    pm = manager(Fragment("a"), Fragment("b"))
    assert await call_each_named(pm, "system_prompt", session=None) == [("a", "a"), ("b", "b")]


def test_call_policy_asks_the_first_registered_plugin_first():
    pm = manager(Fragment("a"), Fragment("b"))
    assert call_policy(pm, "approve_tool_call", "deny", call=None, session=None) == "a"


def test_impls_lists_registration_order_for_registration_hooks_too():
    pm = manager(Fragment("a"), Fragment("b"))
    assert [impl.plugin_name for impl in impls(pm, "approve_tool_call")] == ["a", "b"]


async def test_tryfirst_still_runs_before_the_others():
    pm = manager(Fragment("a"), Fragment("b"), Early("c"))
    assert await call_each(pm, "system_prompt", session=None) == ["c", "a", "b"]
