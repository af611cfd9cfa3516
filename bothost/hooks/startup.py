"""Collecting what plugins register at startup: migrations, LLM providers, platforms, tools
and the offline agent's commands.

Registration hooks are sync and called once; an exception in one stops startup with a
message naming the plugin that raised (startup is fail-fast).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pluggy
from pluggy import HookImpl

from bothost.hooks.call import accepted, impls
from bothost.hookspecs import OfflineCommand
from bothost.store.migrations import Migration, core_migrations

OfflineEntry = tuple[str, OfflineCommand]  # the offline agent's help line and command


class RegistrationError(Exception):
    """A plugin's registration hook failed; startup stops."""


@contextlib.contextmanager
def registering(impl: HookImpl, hook: str) -> Iterator[None]:
    """Turn a plugin's failure in a registration hook into one line naming the plugin."""
    try:
        yield
    except Exception as exc:
        raise RegistrationError(f"plugin {impl.plugin_name} failed in {hook}: {exc}") from exc


def call_register(pm: pluggy.PluginManager, hook: str, **kwargs: Any) -> None:
    """Call a registration hook's implementations in order; the first failure stops startup."""
    for impl in impls(pm, hook):
        with registering(impl, hook):
            impl.function(**accepted(impl, kwargs))


def build_migrations(pm: pluggy.PluginManager) -> list[Migration]:
    migrations = core_migrations()

    def register(component: str, number: int, apply: Any, name: str = "") -> None:
        migrations.append(Migration(component, number, apply, name))

    call_register(pm, "register_migrations", register=register)
    return migrations


def collect_providers(pm: pluggy.PluginManager) -> dict[str, Any]:
    providers: dict[str, Any] = {}

    def register(name: str, factory: Any) -> None:
        providers[name] = factory

    call_register(pm, "register_llm_providers", register=register)
    return providers


def collect_platforms(pm: pluggy.PluginManager) -> dict[str, Any]:
    platforms: dict[str, Any] = {}

    def register(platform: Any) -> None:
        if platform.name in platforms:
            raise RegistrationError(f"platform {platform.name!r} registered twice")
        platforms[platform.name] = platform

    call_register(pm, "register_platforms", register=register)
    return platforms


@dataclass
class Registered:
    """What ``register_llm_providers`` and ``register_platforms`` gave, collected once per
    process: the config's check of names and the host share these very objects (a hook is
    called once, docs/plugins.md, and a platform is one object)."""

    providers: dict[str, Any]
    platforms: dict[str, Any]

    @classmethod
    def collect(cls, pm: pluggy.PluginManager) -> Registered:
        return cls(providers=collect_providers(pm), platforms=collect_platforms(pm))


def collect_offline_commands(pm: pluggy.PluginManager) -> dict[str, OfflineEntry]:
    """The offline agent's commands the plugins teach it (``register_offline_commands``),
    word -> (help line, command); a word registered twice keeps the first."""
    commands: dict[str, OfflineEntry] = {}

    def register(word: str, help: str, command: OfflineCommand) -> None:
        commands.setdefault(word.lower(), (help, command))

    call_register(pm, "register_offline_commands", register=register)
    return commands


def collect_tools(pm: pluggy.PluginManager, registry: Any) -> None:
    for impl in impls(pm, "register_tools"):  # each tool records the plugin that registered it

        def register(func: Any, _plugin: str = impl.plugin_name, **options: Any) -> None:
            registry.register(func, plugin=_plugin, **options)

        with registering(impl, "register_tools"):
            impl.function(register=register)
