"""Calling runtime hooks: each implementation separately, awaited if async, failures isolated.

pluggy calls all implementations in one go and stops at the first exception; runtime hooks
must instead survive a broken plugin, and may be ``async def``. So the host walks the
implementations itself, passes each only the keyword arguments it accepts, awaits what it
returns when that is awaitable, and logs (with the plugin's name) and skips what raises.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any

import pluggy
from pluggy import HookImpl

logger = logging.getLogger(__name__)


def impls(pm: pluggy.PluginManager, hook: str) -> list[HookImpl]:
    """The implementations of ``hook`` in registration order (``tryfirst`` ones first,
    ``trylast`` ones last, each group in registration order)."""
    # pluggy stores them in registration order (tryfirst ones at the end) and calls them
    # from the end: last registered first, the reverse of what docs/plugins.md promises
    return sorted(getattr(pm.hook, hook).get_hookimpls(), key=placement)


def placement(impl: HookImpl) -> int:
    """Where ``tryfirst``/``trylast`` put an implementation: before, among, after the rest."""
    return 0 if impl.tryfirst else 2 if impl.trylast else 1


def accepted(impl: HookImpl, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments ``impl`` takes (an implementation may accept a subset)."""
    return {name: kwargs[name] for name in impl.argnames if name in kwargs}


async def call_each(pm: pluggy.PluginManager, hook: str, **kwargs: Any) -> list[Any]:
    """Call every implementation of ``hook``; return the results of those that did not fail."""
    return [result for _, result in await call_each_named(pm, hook, **kwargs)]


async def call_each_named(
    pm: pluggy.PluginManager, hook: str, **kwargs: Any
) -> list[tuple[str, Any]]:
    """:func:`call_each`, each result with the name of the plugin that gave it (so a
    person can be told which plugin decided)."""
    results = []
    for impl in impls(pm, hook):
        try:
            result = impl.function(**accepted(impl, kwargs))
            if inspect.isawaitable(result):
                result = await result
        except Exception:
            logger.exception("plugin %s failed in hook %s", impl.plugin_name, hook)
            continue
        results.append((impl.plugin_name, result))
    return results


def call_policy(pm: pluggy.PluginManager, hook: str, default: Any, **kwargs: Any) -> Any:
    """Call a sync ``firstresult`` hook: the first answer that is not None, in registration
    order; an exception is logged with the plugin's name and returns ``default``."""
    for impl in impls(pm, hook):
        try:
            result = impl.function(**accepted(impl, kwargs))
        except Exception:
            logger.exception("plugin %s failed in hook %s", impl.plugin_name, hook)
            return default
        if result is not None:
            return result
    return None
