"""Config sections owned by plugins: declared through ``register_config``, checked at load.

Core's schema (:class:`bothost.config.Config`) holds only core's keys. Every section under
``platforms`` and any other top-level key belongs to the plugin that declares it with
``register(path, schema)``: ``"platforms.discord"`` or a top-level ``"pager"``, the schema a
dataclass in core's own schema language (:mod:`bothost.config.schema`). Which plugins load is
itself config (``plugins.dirs``, ``plugins.disabled``), so loading takes two steps:
:func:`bothost.config.load_core` checks core's keys and sets the rest aside, then
:func:`bind` checks each source's plugin parts against the declared schemas (errors name the
file, the key path and what was expected, exactly as for core keys) and builds every section.
A part that no plugin declares is an unknown key, with a "did you mean"; only the packaged
default may hold sections of first-party plugins that are disabled.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pluggy

from bothost.config.env import unset_env_error
from bothost.config.schema import ConfigError, clear_unset, convert, strip_env, unknown_key
from bothost.hooks.call import impls
from bothost.hooks.startup import registering

if TYPE_CHECKING:
    from bothost.config import Config

PLATFORMS = "platforms"  # every key under it belongs to the plugin that declares it
# A section's name is typed in YAML and, under platforms, is the address prefix too.
SECTION_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True)
class Section:
    """One declared section: where it lives, its schema, and the plugin that owns it."""

    path: str
    schema: type
    plugin: str

    @property
    def keys(self) -> list[str]:
        return self.path.split(".")

    @property
    def secrets(self) -> tuple[str, ...]:
        """Keys masked whatever their name says (the schema's ``SECRETS``)."""
        return tuple(getattr(self.schema, "SECRETS", ()))


def collect_sections(pm: pluggy.PluginManager, core_keys: Iterable[str]) -> dict[str, Section]:
    """Every section the plugins declare; a bad or second declaration stops startup."""
    core = set(core_keys)
    sections: dict[str, Section] = {}
    for impl in impls(pm, "register_config"):

        def register(path: str, schema: type, _plugin: str = impl.plugin_name) -> None:
            check_declaration(path, schema, core)
            if path in sections:
                raise ValueError(f"{path} is already declared by plugin {sections[path].plugin}")
            sections[path] = Section(path, schema, _plugin)

        with registering(impl, "register_config"):
            impl.function(register=register)
    return sections


def check_declaration(path: str, schema: Any, core: set[str]) -> None:
    keys = path.split(".") if isinstance(path, str) else []
    if len(keys) == 2 and keys[0] == PLATFORMS:
        name = keys[1]
    elif len(keys) == 1 and keys[0] not in core:
        name = keys[0]
    else:
        raise ValueError(
            f"cannot declare {path!r}: a section is 'platforms.NAME' or a "
            "top-level 'NAME' that is not a core key"
        )
    if not SECTION_NAME.fullmatch(name):
        raise ValueError(f"cannot declare {path!r}: a name uses a-z, 0-9 and _")
    if not (isinstance(schema, type) and dataclasses.is_dataclass(schema)):
        raise ValueError(f"{path}: the schema must be a dataclass, got {schema!r}")


def bind(
    config: Config,
    sections: Mapping[str, Section],
    core_keys: Iterable[str],
    lenient: Iterable[str] = (),
) -> None:
    """Check every source's plugin parts, then build each declared section into ``config``.

    Sources in ``lenient`` may hold parts nobody declares (the packaged default describes
    every first-party plugin, and any of them may be disabled); they are ignored.
    """
    core, lenient = set(core_keys), set(lenient)
    for where, data in config.layers:
        check_parts(data, where, sections, core, strict=where not in lenient)
    built = {
        path: build_section(section, lookup(config.pending.data, section.keys))
        for path, section in sections.items()
    }
    for path, name in config.pending.unset:
        owner = next(
            (
                s
                for s in sections.values()
                if path == s.path or path.startswith(s.path + ".") or path.startswith(s.path + "[")
            ),
            None,
        )
        if owner is not None and needs_env(built[owner.path], path[len(owner.path) + 1 :]):
            raise unset_env_error(config, path, name)
    config.platforms.clear()
    config.sections.clear()
    for path, value in built.items():
        clear_unset(value)
        keys = path.split(".")
        if keys[0] == PLATFORMS:
            config.platforms[keys[1]] = value
        else:
            config.sections[path] = value
    config.declared = dict(sections)


def check_parts(
    data: dict[str, Any],
    where: str,
    sections: Mapping[str, Section],
    core: set[str],
    strict: bool = True,
) -> None:
    """One source's plugin parts, checked on their own so an error names that source."""
    for key, value in data.items():
        if key == PLATFORMS:
            names = sorted(s.keys[1] for s in sections.values() if s.keys[0] == PLATFORMS)
            for name, part in (value or {}).items():
                if f"{PLATFORMS}.{name}" in sections:
                    check_part(sections[f"{PLATFORMS}.{name}"], part, where)
                elif strict:
                    raise undeclared(PLATFORMS, name, names, where)
        elif key not in core:
            if key in sections:
                check_part(sections[key], value, where)
            elif strict:
                top = {s.path for s in sections.values() if len(s.keys) == 1}
                raise undeclared("", key, sorted(core | top), where)


def undeclared(path: str, key: str, known: list[str], where: str) -> ConfigError:
    """An unknown key; without a close match, the hint that its plugin may not be loaded."""
    error = unknown_key(path, key, known, where)
    if "did you mean" in str(error):
        return error
    holder = f"; a key that only holds a YAML anchor is named x-…: x-{key}" if not path else ""
    return ConfigError(
        f"{error} (no loaded plugin declares it: is its plugin disabled, or "
        f"missing from plugins.dirs?){holder}"
    )


def check_part(section: Section, value: Any, where: str) -> None:
    try:
        convert(section.schema, strip_env(value), section.path, where, section.keys[-1], None)
    except TypeError as exc:  # a dataclass refusing a value it cannot hold
        raise ConfigError(f"{where}: {section.path}: {exc}") from exc


def build_section(section: Section, value: Any) -> Any:
    try:
        return convert(section.schema, value, section.path, "merged config", section.keys[-1], None)
    except TypeError as exc:
        raise ConfigError(f"merged config: {section.path}: {exc}") from exc


def lookup(data: dict[str, Any], keys: list[str]) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict) or node.get(key) is None:
            return {}
        node = node[key]
    return node


def needs_env(section: Any, rest: str) -> bool:
    """Whether an unset ``${env:…}`` at ``rest`` inside ``section`` is an error.

    The section's own ``needs_env(key_path)`` decides when it has one (Slack needs its app
    token only in Socket Mode); otherwise an enabled section (no ``enabled`` field counts as
    enabled) needs every value it names.
    """
    decide = getattr(section, "needs_env", None)
    if callable(decide):
        return bool(decide(rest))
    return bool(getattr(section, "enabled", True))


class Platforms(dict[str, Any]):
    """The ``platforms.*`` sections by name, each typed by the plugin that declared it.

    Read as attributes (``config.platforms.web.enabled``) or with ``get`` when the plugin may
    be disabled. A name no plugin declared is an :class:`AttributeError` that says so.
    """

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                f"{PLATFORMS}.{name}: no loaded plugin declares this section"
            ) from None
