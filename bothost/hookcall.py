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

logger = logging.getLogger(__name__)


async def call_each(pm: pluggy.PluginManager, hook: str, **kwargs: Any) -> list[Any]:
    """Call every implementation of ``hook``; return the results of those that did not fail."""
    results = []
    caller = getattr(pm.hook, hook)
    # pluggy lists implementations last-registered first; keep registration order instead
    for impl in reversed(caller.get_hookimpls()):
        args = {name: kwargs[name] for name in impl.argnames if name in kwargs}
        try:
            result = impl.function(**args)
            if inspect.isawaitable(result):
                result = await result
        except Exception:
            logger.exception("plugin %s failed in hook %s", impl.plugin_name, hook)
            continue
        results.append(result)
    return results


def call_policy(pm: pluggy.PluginManager, hook: str, default: Any, **kwargs: Any) -> Any:
    """Call a sync ``firstresult`` hook; an exception is logged and returns ``default``."""
    try:
        return getattr(pm.hook, hook)(**kwargs)
    except Exception:
        logger.exception("policy hook %s failed", hook)
        return default
