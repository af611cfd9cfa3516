"""Finding plugins and loading them into a pluggy plugin manager.

Three origins, in this order: the first-party plugins shipped in ``bothost.plugins`` (and
the LLM providers), the entry-point group ``bothost`` of installed distributions, and
``.py`` modules or packages in the directories of ``plugins.dirs``. ``plugins.disabled``
blocks any of them by name. A first-party plugin that fails to import stops startup; a
third-party one is reported and skipped. A misspelled hook name fails loudly at load.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from bothost import hookspecs

logger = logging.getLogger(__name__)

FIRST_PARTY = {
    "builtin_tools": "bothost.plugins.builtin_tools",
    "console": "bothost.plugins.console",
    "llm": "bothost.llm.plugin",
    "web": "bothost.plugins.web",
    "slack": "bothost.plugins.slack",
    "events": "bothost.events.plugin",
    "schedules": "bothost.schedules.plugin",
}


class DiscoveryError(Exception):
    """A plugin could not be loaded and the host must not start."""


@dataclass
class PluginInfo:
    name: str
    origin: str  # "first-party", "entry-point:<dist>", "dir:<path>", "mcp"
    module: str = ""
    hooks: list[str] = field(default_factory=list)
    error: str | None = None
    disabled: bool = False


def new_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def load_plugins(
    pm: pluggy.PluginManager, dirs: list[str] | None = None, disabled: list[str] | None = None
) -> list[PluginInfo]:
    """Register every plugin found; return what was found, loaded or not."""
    disabled_set = set(disabled or [])
    infos: list[PluginInfo] = []

    def add(name: str, origin: str, loader: Any, required: bool) -> None:
        info = PluginInfo(name=name, origin=origin)
        infos.append(info)
        if name in disabled_set:
            info.disabled = True
            return
        try:
            module = loader()
        except Exception as exc:
            if required:
                raise DiscoveryError(f"plugin {name} ({origin}) failed to import: {exc}") from exc
            info.error = f"{type(exc).__name__}: {exc}"
            logger.error("plugin %s (%s) failed to import and is skipped: %s", name, origin, exc)
            return
        info.module = getattr(module, "__name__", repr(module))
        if pm.is_registered(module) or pm.get_plugin(name) is not None:
            info.error = "already registered"
            return
        try:
            pm.register(module, name=name)
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise DiscoveryError(f"plugin {name} ({origin}): {exc}") from exc
        info.hooks = hook_names(pm, module)

    for name, module_name in FIRST_PARTY.items():
        add(name, "first-party", lambda m=module_name: importlib.import_module(m), True)
    for ep in entry_points():
        dist = ep.dist.name if ep.dist else "?"
        add(ep.name, f"entry-point:{dist}", ep.load, False)
    for directory in dirs or []:
        for name, path in modules_in(Path(directory).expanduser()):
            add(name, f"dir:{path}", lambda p=path, n=name: import_path(n, p), False)
    for name in disabled_set - {i.name for i in infos}:
        logger.warning("plugins.disabled names %r, which is not a plugin that was found", name)
    return infos


def hook_names(pm: pluggy.PluginManager, plugin: Any) -> list[str]:
    return sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])


def entry_points() -> list[importlib.metadata.EntryPoint]:
    return sorted(importlib.metadata.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name)


def modules_in(directory: Path) -> list[tuple[str, Path]]:
    if not directory.is_dir():
        logger.warning("plugins.dirs: %s is not a directory", directory)
        return []
    found = []
    for path in sorted(directory.iterdir()):
        if path.suffix == ".py" and not path.name.startswith("_"):
            found.append((path.stem, path))
        elif path.is_dir() and (path / "__init__.py").exists():
            found.append((path.name, path / "__init__.py"))
    return found


def import_path(name: str, path: Path) -> ModuleType:
    module_name = f"bothost_dir_plugin_{name}"
    spec = importlib.util.spec_from_file_location(
        module_name,
        path,
        submodule_search_locations=[str(path.parent)] if path.name == "__init__.py" else None,
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module
